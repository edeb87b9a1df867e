"""The package keeps its shape: stages as folders, imports pointing down only, no cycles.

Module size is a smell, not a wall: the rule is one job per module, which a reviewer judges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parent.parent / "wheeldoctor"

#: The stages, bottom up: a module may import its own stage and the ones below it.
#: The data's path reads where -> formats -> engine -> judge -> repair -> commands -> results -> report -> cli;
#: fetch (locked wheels from an index or a file) sits beside repair: it keeps RECORDs in engine's cache.
#: judge ranks low because it is pure (model and formats only), so where and engine may use its verdicts.
#: results/ ranks below the commands that make its values, so report/ renders them importing no command.
#: The gate sits beside the commands: it reads the environment and, rarely, the verifier.
RANKS = {
    "model": 0,
    "formats": 1,
    "judge": 2,
    "where": 3,
    "engine": 4,
    "probes": 4,
    "fetch": 5,
    "repair": 5,
    "results": 6,
    "gate": 7,
    "commands": 7,
    "report": 8,
    "cli": 9,
    "__main__": 10,
    "__init__": 10,
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


#: The standard library modules judgement must not touch: disk, processes, threads, signals.
_IMPURE = {"os", "subprocess", "multiprocessing", "signal", "threading", "shutil", "socket", "io", "tempfile"}


def _stdlib_imports(path: Path) -> set[str]:
    """The top-level names of every absolute non-wheeldoctor import in ``path``, typing-only ones included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found - {"wheeldoctor"}


@pytest.mark.parametrize("name", sorted(n for n in _modules() if _stage(n) == "judge"))
def test_judgement_reads_nothing_and_starts_nothing(name: str) -> None:
    """judge/ decides on data alone: it imports model/ and formats/ only, and no disk, process or thread module."""
    path = _modules()[name]
    stages = {_stage(m) for m in _imports(name, path)}
    assert stages <= {"judge", "model", "formats"}, f"{name} imports {stages - {'judge', 'model', 'formats'}}"
    assert not _stdlib_imports(path) & _IMPURE, f"{name} imports {_stdlib_imports(path) & _IMPURE}"


def test_one_module_forks() -> None:
    """Forking (its safety check, descriptors, signals, reaping) is written once: engine/fork.py."""
    forking = sorted(name for name, path in _modules().items() if "os.fork(" in path.read_text())
    assert forking == ["engine.fork"]


def test_the_stages_are_the_data_path() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert folders == {"where", "formats", "engine", "judge", "repair", "commands", "results", "report", "cli"} | {
        "model",
        "gate",
        "probes",
        "fetch",
    }
    assert not list(PACKAGE.rglob("ahead.py")), "no child is started ahead of the command"


@pytest.mark.parametrize("name", sorted(n for n in _modules() if _stage(n) in ("report", "results")))
def test_report_and_results_import_no_command(name: str) -> None:
    """report/ renders results/ values: it imports no command module (and results/, below them, cannot)."""
    assert not {m for m in _imports(name, _modules()[name]) if _stage(m) == "commands"}


def test_report_looks_no_module_up_by_name() -> None:
    """A renderer asks ``isinstance`` of a results/ class it imports, never ``sys.modules`` for a command's."""
    looking = sorted(n for n, p in _modules().items() if _stage(n) == "report" and "sys.modules" in p.read_text())
    assert looking == []


@pytest.mark.parametrize("name", sorted(n for n in _modules() if n.startswith("report.")))
def test_report_renders_repairs_and_plans_none(name: str) -> None:
    """report/ takes from repair/ only data types: every command it shows was made by the command layer."""
    import importlib
    import inspect

    tree = ast.parse(_modules()[name].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wheeldoctor.repair"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                assert inspect.isclass(getattr(module, alias.name)), f"{name} imports {node.module}.{alias.name}"


def _wide_positional_dataclasses(path: Path) -> list[str]:
    """The dataclasses of ``path`` with four fields or more that still take them by position."""
    wide = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            func = call.func if call is not None else decorator
            if not (isinstance(func, ast.Name) and func.id == "dataclass"):
                continue
            keywords = {k.arg: k.value for k in call.keywords} if call is not None else {}
            kw_only = isinstance(keywords.get("kw_only"), ast.Constant) and keywords["kw_only"].value is True
            fields = [s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
            if len(fields) >= 4 and not kw_only:
                wide.append(f"{node.name} ({len(fields)} fields)")
    return wide


@pytest.mark.parametrize("name", sorted(_modules()))
def test_wide_dataclasses_take_keyword_only_fields(name: str) -> None:
    """STYLE.md: a dataclass of four fields or more is built with its fields named, never by position."""
    assert _wide_positional_dataclasses(_modules()[name]) == []


#: The most lines a function takes, its docstring included.
_MOST_LINES = 100


def test_no_function_is_over_a_hundred_lines() -> None:
    """A function that long does several jobs: ruff's C901 and PLR0913 (pyproject.toml) cannot see it."""
    long = set()
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > _MOST_LINES:
                    long.add(f"{name}.{node.name}")
    assert not long, sorted(long)
