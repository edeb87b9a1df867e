"""``check --all --lock FILE``: the environment against its lock, the locked wheels' RECORDs as the reference.

Select the lock for the inspected interpreter, fetch the selected wheels' RECORDs, and
hand the check two things: the environment with each locked distribution's claims taken
from its locked wheel (:func:`wheeldoctor.judge.locked.lock_claims`), and the findings
the lock adds (membership, RECORD rewritten, broken locked wheels). The files are then
verified by the usual check. The environment also carries the versions the lock pins
(``Environment.locked``): the repair plan reinstalls those.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from wheeldoctor.formats.names import same_version
from wheeldoctor.judge.locked import (
    Installed,
    LockVerdict,
    lock_claims,
    locked_wheel_files,
    membership,
    missing_finding,
    not_judged_finding,
    venv_seeds,
)
from wheeldoctor.repair.steps import locked_pin, locked_source
from wheeldoctor.results.lock import LockedEnvironment
from wheeldoctor.where.filesystem import ReadError, read_regular

if TYPE_CHECKING:
    from wheeldoctor.fetch.remote import Fetcher, Progress
    from wheeldoctor.formats.lock import Lock, LockedPackage
    from wheeldoctor.formats.lock_fetched import FetchedRecord
    from wheeldoctor.model.environment import Environment, InstalledDistribution, LockedSource

_DIRECT_URL_LIMIT = 64 << 10


def against_lock(
    env: Environment,
    lock_path: str,
    fetcher: Fetcher,
    progress: Progress | None = None,
    *,
    extras: Sequence[str] = (),
    groups: Sequence[str] | None = None,
) -> LockedEnvironment:
    """Read the lock for ``env``'s interpreter, fetch the RECORDs, and put the locked wheels' claims in place."""
    from wheeldoctor.commands.lock import fetch_selected, lock_target, not_judged
    from wheeldoctor.formats.lock import read_lock
    from wheeldoctor.formats.lock_fetched import summarize

    lock = read_lock(lock_path, lock_target(env, extras=extras, groups=groups))
    fetched = fetch_selected(lock, fetcher, progress)
    active = env.active()
    seeds = venv_seeds(dict(env.markers).get("python_version", ""))
    judged = membership(lock, [_installed(d) for d in active], seeds)
    findings = {name: list(found) for name, found in judged.findings.items()}
    by_wheel = {id(r.wheel): r for r in fetched}
    replaced: dict[int, InstalledDistribution] = {}
    for package in lock.packages:
        dist = env.find(package.name)
        if dist is not None and package.selected is None and package.source != "virtual":
            findings.setdefault(dist.name, []).append(not_judged_finding(package))
        item = by_wheel.get(id(package.selected)) if package.selected is not None else None
        if dist is None or item is None:
            continue
        here = findings.setdefault(dist.name, [])
        here.extend(item.findings)
        if item.record is None or item.dist_info is None or dist.record is None:
            continue  # a broken locked wheel: no reference; the installed RECORD is verified as usual
        if package.version is not None and not same_version(package.version, dist.version):
            continue  # another version: its RECORD is not this wheel's
        claims = lock_claims(dist.record, item.record, item.dist_info)
        here.extend(claims.findings)
        if not claims.findings:
            # The installed RECORD agrees with the wheel's row for row: verifying against it is verifying
            # against the wheel, so it stays, and the verification cache settles the unchanged files.
            continue
        # No record identity: the verification cache is keyed on the installed RECORD, not these claims.
        replaced[id(dist)] = replace(dist, record=claims.record, record_identity=None, record_deferred=False)
    pins = (locked_pin(str(p.name), p.version) for p in lock.packages)
    env = replace(
        env,
        distributions=tuple(replaced.get(id(d), d) for d in env.distributions),
        locked=dict(pin for pin in pins if pin is not None),
        locked_sources=_sources(lock.packages),
    )
    missing = tuple((str(p.name), missing_finding(p, lock.path)) for p in judged.missing)
    added = tuple(locked_wheel_files(_would_install(lock, fetched, env), lock.packages))
    verdict = LockVerdict({k: tuple(v) for k, v in findings.items() if v}, missing, added)
    return LockedEnvironment(
        environment=env,
        verdict=verdict,
        lock=lock,
        fetched=tuple(fetched),
        summary=summarize(fetched),
        unjudged=not_judged(lock.packages),
        seeded=tuple(f"{d.name} {d.version}" for d in judged.seeded),
    )


def _would_install(lock: Lock, fetched: Sequence[FetchedRecord], env: Environment) -> list[FetchedRecord]:
    """The fetched wheels that syncing to the lock would install: not installed, or installed at another version."""
    selected = {id(p.selected): p for p in lock.packages if p.selected is not None}
    wanted = []
    for item in fetched:
        package = selected.get(id(item.wheel))
        if package is None:
            continue
        dist = env.find(package.name)
        if dist is None or (package.version is not None and not same_version(package.version, dist.version)):
            wanted.append(item)
    return wanted


def _sources(packages: Sequence[LockedPackage]) -> dict[str, LockedSource]:
    """Where each locked package's reinstall takes it from: the selected wheel's path, its index, or its URL."""
    sources = {}
    for package in packages:
        wheel = package.selected
        if wheel is None:
            continue
        url = wheel.url if wheel.url is not None and not wheel.url.lower().startswith("file:") else None
        source = locked_source(package.index, wheel.path, url, wheel.sha256)
        if source is not None:
            sources[str(package.name)] = source
    return sources


def _installed(dist: InstalledDistribution) -> Installed:
    url, kind = _direct_url(dist.path)
    return Installed(name=dist.name, version=dist.version, wheel_tags=dist.wheel_tags, direct_url=url, direct_kind=kind)


def _direct_url(dist_path: str) -> tuple[str | None, str | None]:
    """(url, which ``*_info`` key) of a dist-info's direct_url.json; (None, None) without a usable one."""
    # Hostile like every dist-info file: a FIFO or device here must not block or be opened.
    data = read_regular(os.path.join(dist_path, "direct_url.json"), _DIRECT_URL_LIMIT)
    if isinstance(data, ReadError):
        return None, None
    try:
        document = json.loads(data)
    except ValueError:
        return None, None
    if not isinstance(document, dict) or not isinstance(document.get("url"), str):
        return None, None
    kind = next((k for k in ("archive_info", "dir_info", "vcs_info") if k in document), None)
    return document["url"], kind
