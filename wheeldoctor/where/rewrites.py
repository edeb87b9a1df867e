"""Recorded files an installer rewrote in a known way: judged as the installer makes them.

The known rewrites are data, each matched exactly; anything else stays altered.

**Recompiled ``.pyc`` files.** A wheel may ship ``pkg/__pycache__/mod.cpython-311.pyc``
(numpy 1.26.4 does), and pip's byte-compilation (``compileall``) then writes over it with
its own compilation of ``pkg/mod.py``: RECORD's digest is the wheel's bytes, the file holds
pip's. Such a finding becomes WD061 ``recompiled``, which fails nothing, only when all of
this holds:

- the ``.pyc`` is for the running interpreter's cache tag (so it can be reproduced here);
- its source is recorded with a digest, has no finding of its own, and still holds
  exactly the recorded bytes (read again here);
- its header is what ``py_compile`` writes for that source: this interpreter's magic
  number and either the source's mtime and size (timestamp pyc) or its hash (hash pyc);
- its code is byte for byte ``marshal.dumps(compile(source, path))`` for the source's
  path as the installer named it: what the installer's compilation gives.

**A flag added to a script's shebang** (:data:`SHEBANG_FLAGS`). pipx adds `` -E`` to the
``#!.../python`` line of every app it exposes, after pip wrote and recorded the script.
Such a finding becomes WD062 ``rewritten``, which fails nothing, only where the
environment is that installer's (its marker file at the root) and the file is exactly
RECORD's bytes with the flag after the interpreter on the first line.

Nothing is imported or run: a source is compiled, never executed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import re
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import Code, Finding, Kind
from wheeldoctor.model.record import RecordRow
from wheeldoctor.model.sitedirs import dir_prefix, resolve_recorded
from wheeldoctor.where.environment import with_record
from wheeldoctor.where.filesystem import ReadError, read_regular

_PYC = re.compile(r"(?P<dir>(?:[^/]+/)*)__pycache__/(?P<stem>[^/.]+)\.(?P<tag>[^/.]+)(?:\.opt-(?P<opt>[12]))?\.pyc")
#: A source above this size is not compiled to compare (none shipped with a .pyc is near it).
_SOURCE_LIMIT = 32 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class ShebangFlag:
    """An installer that adds a flag to the python shebang of the scripts it exposes."""

    installer: str
    marker: str
    """A file at the environment's root that only this installer's environments have."""
    flag: bytes
    """What it appends to the ``#!`` line, space included."""
    meaning: str


#: The shebang rewrites known: pipx makes every app it exposes ignore PYTHON* variables.
SHEBANG_FLAGS = (
    ShebangFlag(
        installer="pipx",
        marker="pipx_metadata.json",
        flag=b" -E",
        meaning="Python then ignores PYTHON* environment variables",
    ),
)
#: A script longer than this is not read to compare (no console script is near it).
_SCRIPT_LIMIT = 1 << 20


def explain_rewrites(reports: Iterable[DistributionReport]) -> list[DistributionReport]:
    """``reports`` with each finding a known installer rewrite explains made WD061 or WD062."""
    out = []
    for report in reports:
        if report.dist is None or not any(_candidate(f) for f in report.findings):
            out.append(report)
            continue
        dist = with_record(report.dist)  # read again only for a distribution with such a finding
        findings = tuple(_explained(report, dist, f) if _candidate(f) else f for f in report.findings)
        out.append(replace(report, findings=findings))
    return out


def _candidate(finding: Finding) -> bool:
    return (
        finding.kind is Kind.MODIFIED
        and finding.accepted is None
        and finding.code in (Code.HASH_MISMATCH, Code.SIZE_MISMATCH)
        and finding.path is not None
    )


def _explained(report: DistributionReport, dist: InstalledDistribution, finding: Finding) -> Finding:
    assert finding.path is not None
    if dist.record is None:
        return finding
    if not finding.path.endswith(".pyc"):
        row = next((r for r in dist.record.rows if r.path == finding.path), None)
        return _flagged(dist, row, finding) if row is not None else finding
    match = _PYC.fullmatch(finding.path)
    if match is None or match["tag"] != sys.implementation.cache_tag:
        return finding
    source = f"{match['dir']}{match['stem']}.py"
    row = next((r for r in dist.record.rows if r.path == source), None)
    if row is None or row.algorithm is None or row.digest is None:
        return finding
    if any(f.path == source and f.accepted is None for f in report.findings):
        return finding
    reason = _reproduced(dist.location, source, finding.path, row.algorithm, row.digest, match["opt"])
    if reason is None:
        return finding
    message = f"recompiled by the installer from {source}, which is intact ({reason})"
    return Finding(
        code=Code.RECOMPILED,
        kind=Kind.RECOMPILED,
        path=finding.path,
        message=message,
        expected=finding.expected,
        found=finding.found,
    )


def _reproduced(location: str, source: str, pyc: str, algorithm: str, digest: bytes, opt: str | None) -> str | None:
    """Why the ``.pyc`` is the installer's compilation of the intact source; None when it is not shown to be."""
    source_path = os.path.join(location, *source.split("/"))
    data = read_regular(source_path, _SOURCE_LIMIT)
    compiled = read_regular(os.path.join(location, *pyc.split("/")), _SOURCE_LIMIT)
    if isinstance(data, ReadError) or isinstance(compiled, ReadError) or len(compiled) < 16:
        return None
    try:
        if hashlib.new(algorithm, data).digest() != digest:
            return None
    except ValueError:
        return None
    if compiled[:4] != importlib.util.MAGIC_NUMBER:
        return None
    (flags,) = struct.unpack("<I", compiled[4:8])
    if flags == 0:
        try:
            st = os.stat(source_path)
        except OSError:
            return None
        mtime, size = struct.unpack("<II", compiled[8:16])
        if (mtime, size) != (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF):
            return None
        header = "its header holds the source's mtime and size"
    elif flags in (1, 3):
        if compiled[8:16] != importlib.util.source_hash(data):
            return None
        header = "its header holds the source's hash"
    else:
        return None
    body = compiled[16:]
    for spelled in _spellings(source_path):
        try:
            code = compile(data, spelled, "exec", dont_inherit=True, optimize=int(opt or 0))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        if marshal.dumps(code) == body:
            return f"{header}; its code is what compiling it here gives"
    return None


def _spellings(path: str) -> Sequence[str]:
    """The names the installer may have compiled the source under: as spelled, and its real path."""
    real = os.path.realpath(path)
    return (path,) if real == path else (path, real)


def _flagged(dist: InstalledDistribution, row: RecordRow, finding: Finding) -> Finding:
    """``finding`` as WD062 where a known installer's shebang flag is all that differs from ``row``."""
    if row.algorithm is None or row.digest is None or row.size is None:
        return finding
    known = [f for f in SHEBANG_FLAGS if os.path.isfile(os.path.join(dist.root, f.marker))]
    if not known:
        return finding
    path = resolve_recorded(row.path, dir_prefix(dist.location), dist.location, dist.root)
    data = read_regular(path, _SCRIPT_LIMIT) if path is not None else None
    if data is None or isinstance(data, ReadError) or not data.startswith(b"#!"):
        return finding
    line, newline, rest = data.partition(b"\n")
    for rewrite in known:
        original = line.removesuffix(rewrite.flag) + newline + rest
        if len(original) != len(data) - len(rewrite.flag) or len(original) != row.size:
            continue
        try:
            same = hashlib.new(row.algorithm, original).digest() == row.digest
        except ValueError:
            return finding
        if same and b"python" in line.lower():
            flag = rewrite.flag.decode().strip()
            return Finding(
                code=Code.REWRITTEN,
                kind=Kind.REWRITTEN,
                path=finding.path,
                message=f"{rewrite.installer} added {flag} to its python shebang ({rewrite.meaning}); "
                "otherwise RECORD's bytes",
                expected=finding.expected,
                found=finding.found,
            )
    return finding
