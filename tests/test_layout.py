"""The package keeps its shape: stages as folders, imports pointing down only, no cycles.

Module size is a smell, not a wall: the rule is one job per module, which a reviewer judges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wheeldoctor"

#: The stages, bottom up: a module may import its own stage and the ones below it.
#: The data's path reads where -> formats -> engine -> judge -> repair -> commands -> report -> cli;
#: judge ranks low because it is pure (model and formats only), so where and engine may use its verdicts.
#: The gate sits beside the commands: it reads the environment and, rarely, the verifier.
RANKS = {
    "model": 0,
    "formats": 1,
    "judge": 2,
    "where": 3,
    "engine": 4,
    "probes": 4,
    "repair": 5,
    "gate": 6,
    "commands": 6,
    "report": 7,
    "cli": 8,
    "__main__": 9,
    "__init__": 9,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path) -> set[str]:
    """The wheeldoctor modules ``name`` imports, typing-only imports included."""
    package = name.split(".")[:-1]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["wheeldoctor", *package][: len(package) + 1 - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets.add(module)
            targets.update(f"{module}.{a.name}" for a in node.names)
    modules = _modules()
    resolved = set()
    for target in targets:
        if not target.startswith("wheeldoctor."):
            continue
        parts = target.split(".")[1:]
        while parts and ".".join(parts) not in modules and ".".join([*parts, "__init__"]) not in modules:
            parts.pop()
        if parts:
            resolved.add(".".join(parts))
    resolved.discard(name)
    return resolved


def _stage(module: str) -> str:
    return module.split(".", maxsplit=1)[0]


def test_the_folders_are_the_stages() -> None:
    flat = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    folders = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert len(flat) <= 8, flat
    assert set(folders) <= set(RANKS), f"a new stage needs a rank here: {set(folders) - set(RANKS)}"
    for folder in folders:
        doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text()))
        assert doc, f"{folder}/__init__.py says what its stage does"
        assert len(doc.splitlines()) <= 2, f"{folder}/__init__.py: one or two lines"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_imports_point_down(name: str) -> None:
    path = _modules()[name]
    mine = RANKS[_stage(name)]
    upward = [m for m in _imports(name, path) if RANKS.get(_stage(m), 99) > mine]
    assert not upward, f"{name} imports a later stage: {upward}"


def test_no_import_cycles() -> None:
    graph = {name: _imports(name, path) for name, path in _modules().items()}
    # A package __init__ that only carries a docstring imports nothing; cycles are among modules.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :]
                pytest.fail(f"import cycle: {' -> '.join([*cycle, nxt])}")
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
