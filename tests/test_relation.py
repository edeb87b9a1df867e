"""Who requires whom, as clash pairs judge it: markers for the target, extras, chains."""

from __future__ import annotations

import pytest

from wheeldoctor.judge.deps import RequirementGraph

pytestmark = pytest.mark.unit

_PY310 = {"python_version": "3.10", "sys_platform": "linux", "platform_machine": "x86_64"}


def test_direct_and_transitive() -> None:
    graph = RequirementGraph({"w": ["m>=1"], "m": ["L"], "l": []}, _PY310)
    assert graph.requires("w", "m")
    assert graph.requires("w", "l")  # through m
    assert graph.requires("m", "l")
    assert not graph.requires("l", "w")
    assert not graph.requires("l", "m")


def test_markers_are_the_targets() -> None:
    texts = {"w": ["base; python_version >= '3.11'"], "v": ["base; python_version < '3.11'"]}
    graph = RequirementGraph(texts, _PY310)
    assert not graph.requires("w", "base")
    assert graph.requires("v", "base")
    assert RequirementGraph(texts, {**_PY310, "python_version": "3.12"}).requires("w", "base")


def test_extras_asked_for_are_followed() -> None:
    texts = {
        "w": ["m[cuda]"],
        "m": ["plain", "base; extra == 'cuda'", "other; extra == 'rocm'"],
    }
    graph = RequirementGraph(texts, _PY310)
    assert graph.requires("w", "base")
    assert not graph.requires("w", "other")
    assert not graph.requires("m", "base")  # m alone does not need its extra's requirements


def test_unparsable_and_unevaluable_are_left_out() -> None:
    texts = {"w": ["not a requirement ((", "base; python_version > 'x.y'", "ok"]}
    graph = RequirementGraph(texts, _PY310)
    assert graph.closure("w") == frozenset({"ok"})


def test_a_cycle_means_each_requires_the_other() -> None:
    graph = RequirementGraph({"a": ["b"], "b": ["a"]}, _PY310)
    assert graph.requires("a", "b") and graph.requires("b", "a")
