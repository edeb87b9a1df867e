"""A block's examples: a few paths under their common directory, named once, and how many more."""

from __future__ import annotations

import pytest

from wheeldoctor.report.clash_text import example_lines

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["a/lib/x.so"], ["H in a/lib/:", "  x.so"]),
        (["a/lib/y.so", "a/lib/x.so"], ["H in a/lib/:", "  x.so", "  y.so"]),
        (
            ["b/x.py", "a/y.py", "c/z.py", "d/w.py"],
            ["H, e.g.:", "  a/y.py", "  b/x.py", "  c/z.py", "  and 1 more (--verbose lists every one)"],
        ),
        (["top.py"], ["H:", "  top.py"]),
        (["/venv/site/a/x.so", "/venv/site/b/y.so"], ["H in /venv/site/:", "  a/x.so", "  b/y.so"]),
        (["/x.so", "/y.so"], ["H in /:", "  x.so", "  y.so"]),
        (["/etc/x", "a/y"], ["H:", "  /etc/x", "  a/y"]),
        (["a/lib", "a/lib/x"], ["H in a/:", "  lib", "  lib/x"]),
    ],
)
def test_examples(paths: list[str], expected: list[str]) -> None:
    assert list(example_lines("H", paths)) == expected
