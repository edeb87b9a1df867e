"""Who requires whom, as clash pairs judge it: markers for the target, extras, chains."""

from __future__ import annotations

import pytest

from wheeldoctor.judge.deps import check_dependencies
from wheeldoctor.judge.requirements import RequirementGraph, Requirements
from wheeldoctor.model.environment import InstalledDistribution, Metadata

pytestmark = pytest.mark.unit

_PY310 = {"python_version": "3.10", "sys_platform": "linux", "platform_machine": "x86_64"}


def test_direct_and_transitive() -> None:
    graph = RequirementGraph.of_texts({"w": ["m>=1"], "m": ["L"], "l": []}, _PY310)
    assert graph.requires("w", "m")
    assert graph.requires("w", "l")  # through m
    assert graph.requires("m", "l")
    assert not graph.requires("l", "w")
    assert not graph.requires("l", "m")


def test_markers_are_the_targets() -> None:
    texts = {"w": ["base; python_version >= '3.11'"], "v": ["base; python_version < '3.11'"]}
    graph = RequirementGraph.of_texts(texts, _PY310)
    assert not graph.requires("w", "base")
    assert graph.requires("v", "base")
    assert RequirementGraph.of_texts(texts, {**_PY310, "python_version": "3.12"}).requires("w", "base")


def test_extras_asked_for_are_followed() -> None:
    texts = {
        "w": ["m[cuda]"],
        "m": ["plain", "base; extra == 'cuda'", "other; extra == 'rocm'"],
    }
    graph = RequirementGraph.of_texts(texts, _PY310)
    assert graph.requires("w", "base")
    assert not graph.requires("w", "other")
    assert not graph.requires("m", "base")  # m alone does not need its extra's requirements


def test_unparsable_and_unevaluable_are_left_out() -> None:
    texts = {"w": ["not a requirement ((", "base; python_version > 'x.y'", "ok"]}
    graph = RequirementGraph.of_texts(texts, _PY310)
    assert graph.closure("w") == frozenset({"ok"})


def test_a_cycle_means_each_requires_the_other() -> None:
    graph = RequirementGraph.of_texts({"a": ["b"], "b": ["a"]}, _PY310)
    assert graph.requires("a", "b") and graph.requires("b", "a")


def _installed(name: str, requires: list[str]) -> InstalledDistribution:
    metadata = Metadata(name=name, version="1.0", requires_dist=tuple(requires))
    return InstalledDistribution(
        name=name,
        version="1.0",
        path=f"/site/{name}-1.0.dist-info",
        location="/site",
        root="/",
        installer="pip",
        record=None,
        metadata=metadata,
    )


def test_one_model_answers_deps_and_the_graph_alike() -> None:
    """deps and the graph read one Requirements: the extra's requirement both follow, the wheel's own in place."""
    dists = {"w": _installed("w", ["m[cuda]"]), "m": _installed("m", ["base; extra == 'cuda'", "bad (("])}
    model = Requirements(dists, _PY310)
    report = check_dependencies(model)
    assert [(c.dist, c.name, c.via_extra) for c in report.conflicts] == [("m", "base", "cuda")]
    assert [f.dist for f in report.problems] == ["m"]  # the line that does not parse, once
    graph = RequirementGraph(model)
    assert graph.requires("w", "base") and not graph.requires("m", "base")
    # A wheel about to replace m: its Requires-Dist, not the installed one's.
    assert not RequirementGraph(model, {"m": ["other; extra == 'cuda'"]}).requires("w", "base")
