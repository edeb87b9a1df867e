"""``.pyc`` files RECORD lists without a hash, judged by the code they hold (WD063).

pip compiles every module it installs and records the ``.pyc`` files without a hash, so
their bytes are vouched for by nothing: a payload with the real file's 16-byte header
copied in is what ``import`` runs, while RECORD and the source are intact. Here each such
``.pyc`` whose source is recorded with a digest is judged by what the interpreter would
run: its code object against the code object of compiling the recorded source. Code
objects compare equal when their instructions, constants (nested code included), names,
argument counts, flags, first line, line and exception tables are equal; ``co_filename``
and the marshal encoding (which ``FLAG_REF`` bits are set depends on the compiling
process's reference counts, so compiling the same source twice may not give the same
bytes) are not compared.

Nothing of the environment is imported or run, and no hostile byte is unmarshalled in
this process. One child does it all: the target interpreter (the running one where there
is none), started with ``-I -S -B`` like the ``--python`` probe, its address space capped
(``RLIMIT_AS``) before it reads a byte, the whole batch under a deadline. It unmarshals a
``.pyc`` only when the header's magic number is its own (the same Python version), reads
at most :data:`FILE_LIMIT` of each file, and compiles the source only after checking its
recorded digest. A ``.pyc`` for another cache tag or magic number is not judged: that
interpreter never loads it. A child that dies or runs out of time ends the batch: the file
it was on is a finding (no valid ``.pyc`` does that), the rest are counted as not judged.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.where.environment import with_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheeldoctor.engine.store import Memo
    from wheeldoctor.where.fingerprint import Read

_PYC = re.compile(r"(?P<dir>(?:[^/]+/)*)__pycache__/(?P<stem>[^/.]+)\.(?P<tag>[^/.]+)(?:\.opt-(?P<opt>[12]))?\.pyc")
#: Bytes read of one ``.pyc`` or source; a file past it is judged by its size alone (a finding for a ``.pyc``).
FILE_LIMIT = 32 << 20
#: The child's address space: what unmarshalling hostile bytes may claim before it is refused.
ADDRESS_LIMIT = 2 << 30
#: Bumped when what a kept answer means changes (the memo's header also names the judging stages' code).
_MEMO_VERSION = 1
_VERDICTS = frozenset({"same", "differs", "other", "absent", "source"})
#: The batch's deadline: this, plus :data:`_PER_FILE` for each file.
_DEADLINE = 60.0
_PER_FILE = 0.05

# Runs in the child, stdlib only, valid on Python 3.8 and later. Reads a JSON list of
# [pyc, source, tag, optimize, algorithm, hexdigest, site directory] on stdin; writes one JSON line per item.
_CHILD = r"""
import base64, hashlib, importlib.util, json, marshal, os, stat, sys
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))
except (ImportError, ValueError, OSError):
    pass
CODE = type(compile("", "", "exec"))
def read(path):
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError("not a regular file")
        data = f.read(FILE_LIMIT + 1)
    if len(data) > FILE_LIMIT:
        raise OSError("larger than the limit")
    return data
def judge(pyc, source, tag, optimize, algorithm, digest, root):
    if tag != sys.implementation.cache_tag:
        return ["other"]
    if not os.path.realpath(pyc).startswith(root + os.sep):
        return ["differs", None, "it resolves to a file outside its site directory"]
    try:
        data = read(pyc)
    except FileNotFoundError:
        return ["absent"]
    except OSError as e:
        return ["differs", None, "it cannot be read (%s)" % (e.strerror or e)]
    found = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    try:
        text = read(source)
    except OSError:
        return ["source"]
    if hashlib.new(algorithm, text).hexdigest() != digest:
        return ["source"]
    if data[:4] != importlib.util.MAGIC_NUMBER or len(data) < 16:
        return ["other"]
    try:
        loaded = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError, MemoryError, RecursionError):
        return ["differs", found, "its code does not unmarshal"]
    if type(loaded) is not CODE:
        return ["differs", found, "it holds no code object"]
    try:
        compiled = compile(text, source, "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ["source"]
    return ["same"] if loaded == compiled else ["differs", found, "its code is not what compiling the source gives"]
for item in json.loads(sys.stdin.read()):
    sys.stdout.write(json.dumps(judge(*item)) + "\n")
    sys.stdout.flush()
"""


#: What the child is given for one ``.pyc``: its path, its source's, the cache tag, the optimisation
#: level, the source's recorded algorithm and hex digest, and the site directory it must stay in.
Argv = tuple[str, str, str, int, str, str, str]
Answer = list[str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Item:
    report: int
    pyc: str
    """As RECORD writes it."""
    source: str
    argv: Argv
    recorded: bool
    """RECORD lists it (without a hash); False: a file RECORD does not name."""


@dataclass(frozen=True, slots=True)
class BytecodeJudgement:
    """The reports with a WD063 finding per ``.pyc`` whose code is not its source's, and how many were not judged."""

    reports: tuple[DistributionReport, ...]
    judged: int
    not_judged: int
    """For another interpreter (cache tag or magic number), or left when the child stopped."""


def judge_bytecode(
    reports: Sequence[DistributionReport], python: str | None, cache_dir: str | None = None
) -> BytecodeJudgement:
    """Judge every unhashed ``.pyc`` row of ``reports`` whose source RECORD pins, in one child of ``python``.

    With ``cache_dir``, a distribution's answers are kept while its ``.pyc`` files, their
    sources and the interpreter keep their fingerprints (:class:`~wheeldoctor.engine.store.Memo`).
    """
    python = python or sys.executable
    items = list(_items(reports))
    if not items:
        return BytecodeJudgement(tuple(reports), 0, 0)
    answers: dict[int, Answer] = {}
    pending: list[int] = []
    memos = []
    for report, indices in _by_report(items).items():
        memo = _memo(cache_dir, python, reports[report], [items[i] for i in indices]) if cache_dir else None
        kept = _kept(memo.get(), len(indices)) if memo is not None else None
        if kept is not None:
            answers.update(zip(indices, kept, strict=True))
            continue
        pending.extend(indices)
        if memo is not None:
            memos.append((memo, _read(python, [items[i] for i in indices]), indices))
    fresh, stopped = _ask(python, [items[i].argv for i in pending]) if pending else ([], None)
    answers.update(zip(pending, fresh, strict=False))
    if stopped is not None and len(fresh) < len(pending):
        answers[pending[len(fresh)]] = ["differs", None, f"reading it {stopped}"]
    answered = set(pending[: len(fresh)])  # by the child itself: a stopped child's last file is not kept
    for memo, read, indices in memos:
        if answered.issuperset(indices):
            memo.keep(read, tuple(answers[i] for i in indices))
    return _judgement(reports, items, answers)


def _judgement(
    reports: Sequence[DistributionReport], items: list[_Item], answers: dict[int, Answer]
) -> BytecodeJudgement:
    added: dict[int, list[Finding]] = {}
    judged = not_judged = 0
    for index, item in enumerate(items):
        answer = answers.get(index)
        if answer is None or answer[0] == "other":
            not_judged += 1
            continue
        if answer[0] in ("same", "differs"):
            judged += 1
        if answer[0] == "differs":
            added.setdefault(item.report, []).append(_finding(item, answer))
    out = tuple(replace(r, findings=(*r.findings, *added[i])) if i in added else r for i, r in enumerate(reports))
    return BytecodeJudgement(out, judged, not_judged)


def _by_report(items: list[_Item]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(item.report, []).append(index)
    return groups


def _memo(cache_dir: str, python: str, report: DistributionReport, items: list[_Item]) -> Memo:
    from wheeldoctor.engine.store import Memo

    assert report.dist is not None  # _items skips reports without one
    key = "\0".join(("bytecode", python, report.dist.path))
    return Memo(cache_dir, key, "bytecode", _MEMO_VERSION, tuple(item.argv for item in items))


def _read(python: str, items: list[_Item]) -> Read:
    """The fingerprints the answers depend on, taken before the child reads a byte."""
    from wheeldoctor.where.fingerprint import Read

    read = Read()
    read.note(os.path.realpath(python))
    for item in items:
        read.note(item.argv[0])
        read.note(item.argv[1])
    return read


def _kept(value: object, count: int) -> list[Answer] | None:
    """A kept value as ``count`` answers as the child writes them; None when it is not that."""
    if type(value) is not tuple or len(value) != count:
        return None
    out: list[Answer] = []
    for answer in value:
        if type(answer) is not list or not answer or answer[0] not in _VERDICTS:
            return None
        if not all(x is None or type(x) is str for x in answer):
            return None
        out.append(answer)
    return out


def _finding(item: _Item, answer: list[str | None]) -> Finding:
    why = answer[2] or "it differs"
    return Finding(
        code=Code.BYTECODE_DIFFERS,
        kind=Kind.MODIFIED,
        path=item.pyc,
        message=f"is what Python runs in place of {item.source}, and {why}: "
        + ("RECORD lists it without a hash" if item.recorded else "RECORD does not list it"),
        expected=f"the code of {item.source}",
        found=answer[1],
    )


def _items(reports: Sequence[DistributionReport]) -> Iterable[_Item]:
    """Each ``.pyc`` to judge: the unhashed rows, and the files in a ``__pycache__`` RECORD does not list at all."""
    for index, report in enumerate(reports):
        if report.dist is None or report.dist.system_managed:
            continue
        dist = with_record(report.dist)
        record = dist.record
        if record is None:
            continue
        hashed = {row.path: row for row in record.rows}
        root = os.path.realpath(dist.location)
        unhashed = (p for p in record.listed if p.endswith(".pyc") and p not in hashed)
        for path, recorded in sorted([*((p, True) for p in unhashed), *_unrecorded(dist.location, record.listed)]):
            match = _PYC.fullmatch(path)
            source = f"{match['dir']}{match['stem']}.py" if match else None
            row = hashed.get(source) if source else None
            if match is None or source is None or row is None or row.algorithm is None or row.digest is None:
                continue
            if not _below(path):  # as RECORD's own ../ and absolute paths (WD007): never read
                continue
            where = os.path.join(dist.location, *path.split("/"))
            source_path = os.path.join(dist.location, *source.split("/"))
            digest = row.digest.hex()
            argv = (where, source_path, match["tag"], int(match["opt"] or 0), row.algorithm, digest, root)
            yield _Item(report=index, pyc=path, source=source, argv=argv, recorded=recorded)


def _unrecorded(location: str, listed: frozenset[str]) -> Iterable[tuple[str, bool]]:
    """``.pyc`` files in the ``__pycache__`` beside each recorded source that RECORD does not list (uv records none).

    Python runs one whose header matches its source as readily as a recorded one. Each
    directory is listed once; only names a compiled source could have are kept.
    """
    folders = {p[: p.rfind("/") + 1] for p in listed if p.endswith(".py") and _below(p)}
    for folder in sorted(folders):
        cache = os.path.join(location, *folder.split("/"), "__pycache__")
        try:
            with os.scandir(cache) as entries:
                names = [e.name for e in entries if e.name.endswith(".pyc")]
        except OSError:
            continue
        for name in names:
            path = f"{folder}__pycache__/{name}"
            if path not in listed:
                yield path, False


def _below(path: str) -> bool:
    """Whether a RECORD path stays below its site directory as written (no ``..``, not absolute)."""
    return not path.startswith(("/", "\\")) and ":" not in path and ".." not in path.replace("\\", "/").split("/")


def _ask(
    python: str, items: list[tuple[str, str, str, int, str, str, str]]
) -> tuple[list[list[str | None]], str | None]:
    """The child's answers, in order, and why it stopped early (None when it answered all)."""
    code = _CHILD.replace("ADDRESS_LIMIT", str(ADDRESS_LIMIT)).replace("FILE_LIMIT", str(FILE_LIMIT))
    deadline = _DEADLINE + _PER_FILE * len(items)
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-B", "-c", code],
            input=json.dumps(items).encode(),
            capture_output=True,
            timeout=deadline,
            check=False,
        )
        out, stopped = done.stdout, (None if done.returncode == 0 else f"ended the reader (exit {done.returncode})")
    except subprocess.TimeoutExpired as e:
        out, stopped = e.stdout or b"", f"took the reader past its {deadline:.0f} s"
    except OSError:  # the interpreter cannot be started: nothing judged, and counted so
        return [], None
    answers = []
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            break
        if not isinstance(answer, list) or not answer or not all(isinstance(a, str) or a is None for a in answer):
            break
        answers.append(answer)
    return answers, stopped
