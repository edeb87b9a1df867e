"""``snapshot``: one environment, verified, summed up as a :class:`~wheeldoctor.model.snapshot.Snapshot`.

The verification is ``check --all``'s own (:func:`wheeldoctor.commands.check.run_check`,
the one seam this module uses), so the same cache serves both: files are not hashed
again. What a snapshot adds is one digest over each RECORD's rows, kept by RECORD's
fingerprint (:func:`wheeldoctor.engine.distinfo_memo.record_digests`); RECORD is parsed here only on a miss
and for a distribution whose files differ from it (their rows on disk are summed up too).
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.engine.distinfo_memo import DistInfoMemo, record_digests
from wheeldoctor.judge.files import DistributionReport
from wheeldoctor.model.environment import Environment, InstalledDistribution
from wheeldoctor.model.findings import Finding, Kind
from wheeldoctor.model.snapshot import (
    FILES_LIMIT,
    TAGS_SHOWN,
    DistributionState,
    FileDrift,
    HookState,
    Row,
    Snapshot,
    UnownedSummary,
    found_rows,
    rows_digest,
    tags_digest,
)
from wheeldoctor.where.environment import with_record

if TYPE_CHECKING:
    from wheeldoctor.engine.schedule import ProgressSink
    from wheeldoctor.results.check import CheckResult

#: Findings about one file's bytes: the file's row on disk differs from its RECORD row.
FILE_KINDS = frozenset({Kind.MODIFIED, Kind.MISSING, Kind.UNREADABLE, Kind.REPLACED})

#: Importable names listed in the unowned summary at most (the count is always whole).
NAMES_LIMIT = 200


def run_snapshot(
    env: Environment,
    *,
    host: str | None = None,
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    cache_dir: str | None = None,
) -> tuple[CheckResult, Snapshot]:
    """Verify every distribution of ``env`` as ``check --all`` does, then sum it up.

    ``env`` should be loaded with its tags (``load_target(..., with_tags=True)``); ``host``
    defaults to this machine's name. The check's result comes back too, for an SBOM.
    """
    result = run_check(env, CheckRequest(jobs=jobs, progress=progress, cache_dir=cache_dir, processes=True))
    return result, snapshot_of(result, host=host, cache_dir=cache_dir)


def snapshot_of(result: CheckResult, *, host: str | None = None, cache_dir: str | None = None) -> Snapshot:
    """The snapshot of a finished ``check --all`` (its start-up audit included)."""
    env = result.environment
    markers = dict(env.markers)
    tags = list(env.tags) if env.tags is not None else None
    memos: dict[str, DistInfoMemo[str]] = {}
    dists = []
    for report in result.distributions:
        if report.dist is None:
            continue
        location = report.dist.location
        memo = memos.get(location)
        if memo is None:
            memo = memos[location] = record_digests(cache_dir, location)
        dists.append(distribution_state(report, report.dist, memo))
    for memo in memos.values():
        memo.save()
    hooks = () if result.hooks is None else result.hooks.hooks
    unowned = None
    if result.unowned is not None:
        names = sorted({f.importable for f in result.unowned.files if f.importable is not None})
        unowned = UnownedSummary(files=len(result.unowned.files), importable=tuple(names[:NAMES_LIMIT]))
    return Snapshot(
        host=host if host is not None else socket.gethostname(),
        implementation=markers.get("implementation_name", ""),
        python=markers.get("python_full_version", ""),
        platform=f"{markers.get('sys_platform', '')}/{markers.get('platform_machine', '')}",
        tags_sha256=None if tags is None else tags_digest(tags),
        tags_count=0 if tags is None else len(tags),
        tags_head=tuple(tags[:TAGS_SHOWN]) if tags is not None else (),
        distributions=tuple(sorted(dists, key=lambda d: d.name)),
        hooks=tuple(
            sorted(
                (
                    HookState(
                        path=h.relative,
                        kind=h.kind.value,
                        owner=h.owner.name if h.owner is not None else None,
                        sha256=h.sha256,
                    )
                    for h in hooks
                ),
                key=lambda h: (h.path, h.kind),
            )
        ),
        unowned=unowned,
    )


def distribution_state(
    report: DistributionReport, dist: InstalledDistribution, memo: DistInfoMemo[str]
) -> DistributionState:
    """One distribution's digests: RECORD's from the memo where it holds; its rows are read only
    on a miss, or where files differ (their rows on disk are summed up with what was found)."""
    drifted = [f for f in report.findings if f.path is not None and f.kind in FILE_KINDS]
    fingerprints = memo.fingerprints(dist.path)
    record = memo.get(os.path.basename(dist.path), fingerprints) if not drifted else None
    disk = record
    if record is None:
        rows = _rows(dist)
        if rows is not None:
            record = rows_digest(rows)
            memo.keep(dist.path, fingerprints, record)
            found = {f.path: _evidence(f) for f in drifted if f.path is not None}
            disk = rows_digest(found_rows(rows, found)) if found else record
    files = sorted(
        (FileDrift(path=f.path, code=f.code.value, recorded=f.expected, found=_evidence(f)) for f in drifted if f.path),
        key=lambda f: (f.path, f.code),
    )
    return DistributionState(
        name=report.name,
        version=report.version or dist.version,
        installer=report.installer,
        status=report.status.value,
        record=record,
        disk=disk,
        files=tuple(files[:FILES_LIMIT]),
        files_omitted=max(0, len(files) - FILES_LIMIT),
    )


def _rows(dist: InstalledDistribution) -> list[Row] | None:
    read = with_record(dist)
    if read.record is None:
        return None
    rows: list[Row] = [(row.path, row.hash_text, row.size) for row in read.record.rows]
    # A row without a hash (RECORD's own, a .pyc's) gives no RecordRow; its path is still listed.
    rows.extend((path, None, None) for path in read.record.listed.difference(row[0] for row in rows))
    return rows


def _evidence(finding: Finding) -> str:
    """What was found of a file: its digest (``sha256=…``) where it was read, else why not."""
    if finding.found is not None and "=" in finding.found:
        return finding.found
    if finding.found is not None:
        return f"{finding.kind.value}: {finding.found}"
    return finding.kind.value
