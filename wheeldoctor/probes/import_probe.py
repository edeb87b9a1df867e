"""Import one module and report what its import did to this process: run by the target interpreter.

wheeldoctor passes this file's text to ``python -B -S -c`` with the module's name as the only
argument, and the probe runs site.py's start-up itself, watched: effects of a ``.pth`` file's
lines are ``(start-up: FILE)``'s; nothing of wheeldoctor's is importable there, so this uses the standard library alone
and stays valid on Python 3.7+ (the audit hook that counts processes needs 3.8).

It wraps every loader found through ``sys.meta_path`` and looks at the process (``/proc/self``)
before and after each module's own code runs (``create_module`` through ``exec_module``): open
file descriptors, OS threads, live child processes and mapped shared libraries. What appeared
while a module ran and was not already claimed by a module it imported is that module's doing:
the innermost one is named, with the chain of importers that led to it.

Output, on the process's original stdout (the module's own prints go to stderr): ``+NAME`` and
``-NAME`` lines as modules start and finish (they tell a parent that had to kill us where the
import hung), then one ``=`` line holding the JSON result. Facts only: classification (which
device is a GPU) is the caller's.
"""

from __future__ import annotations

import _thread
import os
import stat
import sys
import time

# Not `from typing import ...`: typing is no start-up module, and importing it here would hide
# it from (and take its time out of) the import under test. mypy reads this name as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Audit events that start a process (subprocess, os.system, posix_spawn, fork); short-lived
# children are gone before a snapshot can see them, so these are counted as they happen.
_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.fork", "os.forkpty", "os.spawn"})

_PID = os.getpid()
_OUT = os.dup(1)  # the result channel; not inherited by exec'd children
os.dup2(2, 1)  # the imported code's prints go to stderr, never into the result
_clock = time.perf_counter
_overhead = [0.0]  # seconds spent in our own bookkeeping, subtracted from every timing


class _Frame:
    """One module's code running: what the process looked like when it started."""

    __slots__ = ("before", "chain", "name", "overhead", "spawns", "start")

    def __init__(self, name: str, chain: tuple[str, ...], before: _Snapshot) -> None:
        self.name = name
        self.chain = chain
        self.before = before
        self.spawns = 0
        self.overhead = _overhead[0]
        self.start = _clock()


class _Snapshot:
    """Open descriptors (fd, target), OS threads, live children and mapped shared libraries."""

    __slots__ = ("children", "fds", "libraries", "threads")

    def __init__(self) -> None:
        self.fds = _fds()
        self.threads, self.children = _tasks()
        self.libraries = _libraries()


def _fds() -> frozenset[tuple[int, str]]:
    found = set()
    for entry in os.listdir("/proc/self/fd"):
        try:  # noqa: SIM105 (the probe imports nothing it can do without, contextlib included)
            found.add((int(entry), os.readlink("/proc/self/fd/" + entry)))
        except OSError:  # the descriptor listing the directory itself, or one closed meanwhile
            pass
    return frozenset(found)


def _tasks() -> tuple[frozenset[str], frozenset[str]]:
    threads = os.listdir("/proc/self/task")
    children: set[str] = set()
    for tid in threads:
        try:
            fd = os.open("/proc/self/task/" + tid + "/children", os.O_RDONLY)
        except OSError:  # the thread ended meanwhile, or the kernel lacks CONFIG_PROC_CHILDREN
            continue
        try:
            children.update(x.decode() for x in os.read(fd, 1 << 16).split())
        finally:
            os.close(fd)
    return frozenset(threads), frozenset(children)


_maps_seen: list[Any] = [b"", frozenset()]


def _libraries() -> frozenset[str]:
    fd = os.open("/proc/self/maps", os.O_RDONLY)
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if data == _maps_seen[0]:  # most modules map nothing: skip the parse
        return _maps_seen[1]  # type: ignore[no-any-return]
    found = frozenset(
        line[line.index(b"/") :].decode("utf-8", "surrogateescape")
        for line in data.split(b"\n")
        if b".so" in line and b"/" in line
    )
    _maps_seen[:] = [data, found]
    return found


# What each module claimed: key -> (module, chain). Inner modules finish first, so they claim first.
_claims: dict[str, dict[Any, tuple[str, tuple[str, ...]]]] = {
    "fds": {},
    "threads": {},
    "children": {},
    "libraries": {},
}
_spawns: dict[tuple[str, tuple[str, ...]], int] = {}
_times: dict[str, float] = {}
_stacks: dict[int, list[_Frame]] = {}
_active: list[_Frame] = []


def _say(line: str) -> None:
    if os.getpid() != _PID:
        return
    try:  # noqa: SIM105
        os.write(_OUT, (line + "\n").encode("utf-8", "surrogateescape"))
    except OSError:  # the imported code closed our channel: the parent reports the lost result
        pass


def _begin(name: str) -> _Frame:
    entered = _clock()
    stack = _stacks.setdefault(_thread.get_ident(), [])
    chain = (stack[-1].chain if stack else ()) + (name,)
    _say("+" + name)
    frame = _Frame(name, chain, _Snapshot())
    stack.append(frame)
    _active.append(frame)
    _overhead[0] += _clock() - entered
    frame.start = _clock()
    frame.overhead = _overhead[0]
    return frame


def _end(frame: _Frame) -> None:
    ended = _clock()
    if os.getpid() != _PID:  # a forked child finishing an import: not ours to report
        return
    spent = ended - frame.start - (_overhead[0] - frame.overhead)
    _times[frame.name] = _times.get(frame.name, 0.0) + spent
    after = _Snapshot()
    who = (frame.name, frame.chain)
    for kind, now, then in (
        ("fds", after.fds, frame.before.fds),
        ("threads", after.threads, frame.before.threads),
        ("children", after.children, frame.before.children),
        ("libraries", after.libraries, frame.before.libraries),
    ):
        claimed = _claims[kind]
        for item in now - then:
            if item not in claimed:
                claimed[item] = who
    if frame.spawns:
        _spawns[who] = _spawns.get(who, 0) + frame.spawns
    stack = _stacks.get(_thread.get_ident(), [])
    if frame in stack:
        stack.remove(frame)
    if frame in _active:
        _active.remove(frame)
    _say("-" + frame.name)
    _overhead[0] += _clock() - ended


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _SPAWN_EVENTS and os.getpid() == _PID:
        # subprocess.Popen, already counted, may go on to call os.posix_spawn: one process.
        if event == "os.posix_spawn" and _from_subprocess(sys._getframe(1)):
            return
        tid = _thread.get_ident()
        stack = _stacks.get(tid)
        frame = stack[-1] if stack else (_active[-1] if _active else None)
        if frame is not None:
            frame.spawns += 1


def _from_subprocess(caller: Any) -> bool:
    code = caller.f_code
    return bool(code.co_name == "_posix_spawn" and code.co_filename.endswith("subprocess.py"))


class _Watched:
    """A loader wrapped for the time between ``create_module`` and the end of ``exec_module``."""

    def __init__(self, loader: Any, spec: Any) -> None:
        self._loader = loader
        self._spec = spec
        self._frame: _Frame | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        # Extension modules do their work here (the library is loaded and initialised).
        self._frame = _begin(spec.name)
        create = getattr(self._loader, "create_module", None)
        try:
            return create(spec) if create is not None else None
        except BaseException:
            self._finish()
            raise

    def exec_module(self, module: Any) -> None:
        # Put the real loader back before the module's code can look at it.
        if self._spec.loader is self:
            self._spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        if self._frame is None:
            self._frame = _begin(self._spec.name)
        try:
            self._loader.exec_module(module)
        finally:
            self._finish()

    def _finish(self) -> None:
        frame, self._frame = self._frame, None
        if frame is not None:
            _end(frame)


class _Finder:
    """First on ``sys.meta_path``: asks the others, and wraps the loader of what they find."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is not None and hasattr(loader, "exec_module") and not isinstance(loader, _Watched):
            spec.loader = _Watched(loader, spec)
        return spec


def _device(fd: int, target: str) -> bool:
    if not target.startswith("/"):
        return False
    try:
        mode = os.stat(f"/proc/self/fd/{fd}").st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _who(who: tuple[str, tuple[str, ...]]) -> dict[str, Any]:
    return {"module": who[0], "chain": list(who[1])}


def _counts(claims: dict[Any, tuple[str, tuple[str, ...]]]) -> dict[tuple[str, tuple[str, ...]], int]:
    counts: dict[tuple[str, tuple[str, ...]], int] = {}
    for who in claims.values():
        counts[who] = counts.get(who, 0) + 1
    return counts


def _result(name: str, seconds: float, loaded: int, error: str | None, final: _Snapshot) -> dict[str, Any]:
    devices = [
        dict(_who(who), path=target, open=(fd, target) in final.fds)
        for (fd, target), who in _claims["fds"].items()  # in the order they were claimed
        if _device(fd, target)
    ]
    children = _counts(_claims["children"])
    processes = [dict(_who(w), count=max(n, children.get(w, 0))) for w, n in _spawns.items()]
    processes += [dict(_who(w), count=n) for w, n in children.items() if w not in _spawns]
    return {
        "module": name,
        "seconds": seconds,
        "modules_loaded": loaded,
        "times": sorted(_times.items(), key=lambda kv: -kv[1]),
        "devices": devices,
        "threads": [dict(_who(w), count=n) for w, n in _counts(_claims["threads"]).items()],
        "processes": processes,
        "libraries": [dict(_who(w), path=p) for p, w in sorted(_claims["libraries"].items())],
        "error": error,
    }


def _reap() -> None:
    """Kill the children the import left behind: they could hold our output open."""
    import signal

    for pid in _tasks()[1]:
        try:  # noqa: SIM105
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def _last_line(e: BaseException) -> str:
    """The traceback's last line (``pkg.Error: message``), without importing traceback here."""
    kind = type(e)
    name = kind.__qualname__
    if kind.__module__ not in ("builtins", "__main__"):
        name = kind.__module__ + "." + name
    try:
        message = " ".join(str(e).split("\n")).strip()
    except Exception:  # a __str__ that raises
        message = "<exception str() failed>"
    return name + ": " + message if message else name


def _start_up() -> None:
    """Run what site.py runs at interpreter start (the probe is started with ``-S``), each ``.pth``
    file as a frame of its own: what its lines do is ``(start-up: FILE)``'s, not the import's."""
    import site

    original = site.addpackage

    def addpackage(sitedir: Any, name: Any, known_paths: Any) -> Any:
        # TODO(inert): a file name is untrusted text; ascii() keeps it one printable line.
        frame = _begin("(start-up: " + ascii(str(name))[1:-1] + ")")
        try:
            return original(sitedir, name, known_paths)
        finally:
            _end(frame)

    site.addpackage = addpackage  # the same call, watched
    try:
        site.main()
    finally:
        site.addpackage = original


def main(name: str) -> None:
    """Run the interpreter's start-up, then import ``name``, under observation; write the result line."""
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(_audit)
    sys.meta_path.insert(0, _Finder())
    _say("ready")
    if sys.flags.no_site:  # as wheeldoctor starts it; run by hand without -S, site.py has run already
        _start_up()
    before = set(sys.modules)
    error = None
    started = _clock()
    try:
        __import__(name)
    except BaseException as e:  # SystemExit and KeyboardInterrupt at import time are findings too
        error = _last_line(e)
    seconds = _clock() - started - _overhead[0]
    if os.getpid() != _PID:  # the import forked and this is the child coming back: stay silent
        os._exit(0)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
    loaded = len(set(sys.modules) - before)
    for frame in list(_active):  # frames an exception or a loader left open
        _end(frame)
    result = _result(name, seconds, loaded, error, _Snapshot())
    import json

    _say("=" + json.dumps(result))
    _reap()
    os._exit(0)  # neither wait for the imported code's threads nor run its atexit handlers


if __name__ == "__main__":
    # -c puts the working directory first on sys.path: the environment is what is under test.
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    main(sys.argv[1])
