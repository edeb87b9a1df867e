"""Claims -> file states: each claimed path looked at once, by threads or forked workers.

Single-owner files with a hash and size are proved intact in forked workers where that is
safe (commands only); everything else, and whatever a worker could not prove, is hashed
with every algorithm and at every size that any claimant recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from wheeldoctor.engine import hashing
from wheeldoctor.engine.fork import can_fork
from wheeldoctor.engine.hashing import default_jobs, hash_files
from wheeldoctor.judge.claims import Claim, matches, plan
from wheeldoctor.model.files import FileState, FileStatus, Fingerprint, Known, Progress
from wheeldoctor.model.record import fast_tuple

if TYPE_CHECKING:
    from wheeldoctor.engine.proof_workers import Candidate


class ProgressSink(Protocol):
    """Receives the size of the work once, then advances from worker threads."""

    def begin(self, files: int, total_bytes: int) -> None:
        """The work ahead: this many files, about this many bytes."""

    def advance(self, files: int, done_bytes: int) -> None:
        """Some files are done."""


def hash_claims(
    owners: Mapping[str, Sequence[Claim]],
    jobs: int | None = None,
    progress: ProgressSink | None = None,
    known: Known | None = None,
    processes: bool = False,
) -> dict[str, FileState]:
    """Look at every path of ``owners`` (each with all its claimants) once; return its state by path."""
    candidates: list[Candidate] = []
    claims: list[Claim] = []
    if processes and (jobs or default_jobs()) > 1:
        candidates, claims = _provable(owners, known)
    else:
        claims = [claim for claimants in owners.values() for claim in claimants]
    requests = list(plan(claims).values())
    advance: Progress | None = None
    if progress is not None:
        progress.begin(
            len(candidates) + len(requests),
            sum(c[1] for c in candidates) + sum(r.size_hint for r in requests),
        )
        advance = progress.advance
    states: dict[str, FileState] = {}
    if candidates:
        states = _prove(candidates, jobs, advance)
        if len(states) < len(candidates):
            unproven = [claim for path, *_ in candidates if path not in states for claim in owners[path]]
            requests.extend(plan(unproven).values())
    hashed = hash_files(requests, jobs=jobs, progress=advance, known=known, processes=processes)
    states.update((request.path, state) for request, state in zip(requests, hashed, strict=True))
    return states


def _provable(owners: Mapping[str, Sequence[Claim]], known: Known | None = None) -> tuple[list[Candidate], list[Claim]]:
    """Split off the paths worth proving in workers (one claimant, with a hash and a size); the rest's claims.

    Where ``known`` holds RECORD's digest at some fingerprint, the candidate carries that
    fingerprint: a file that still has it needs no reading. Where it holds another digest,
    the path is left to the exact path, which decides from it as it would without workers.
    """
    provable: list[Candidate] = []
    rest: list[Claim] = []
    for claims in owners.values():
        if len(claims) == 1:
            path, row = claims[0].path, claims[0].row
            if row.digest is not None and row.size is not None and row.algorithm:
                prior = known(path) if known is not None else None
                if prior is None:
                    provable.append((path, row.size, row.algorithm, row.digest, None))
                    continue
                fingerprint = prior.fingerprint
                if fingerprint is not None and matches(row, prior):
                    provable.append((path, row.size, row.algorithm, row.digest, fingerprint))
                    continue
        rest.extend(claims)
    if len(provable) < hashing.PROCESS_MIN_FILES or not can_fork():
        return [], [claim for claims in owners.values() for claim in claims]
    return provable, rest


def _prove(candidates: Sequence[Candidate], jobs: int | None, progress: Progress | None) -> dict[str, FileState]:
    """The states of the candidates that forked workers proved intact; the rest are left out.

    A proven file's state is exactly what :func:`hash_file` would have returned for it.
    """
    from wheeldoctor.engine.proof_workers import prove_in_processes

    states: dict[str, FileState] = {}
    hashed = FileStatus.HASHED
    make = fast_tuple
    for index, mtime, ctime, inode, device, links in prove_in_processes(candidates, jobs or default_jobs(), progress):
        path, size, algorithm, digest, vouched = candidates[index]
        fingerprint = make(Fingerprint, (size, mtime, ctime, inode, device))
        cached = fingerprint == vouched  # proven by the cache's fingerprint, not by reading
        states[path] = make(FileState, (hashed, size, ((algorithm, digest),), "", links, fingerprint, cached, ()))
    return states
