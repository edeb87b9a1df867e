"""Results -> cases and items: the flat shape every CI format (github, junit, sarif) renders.

A *case* is one thing a command judged (a distribution, a wheel), with the *items* it
raised: each a finding, a conflict, a duplicate... with a level. Items come from the
results' generic fields (``status``, ``findings``, ``code``, ``kind``, ``message``), so a
new kind of finding or status flows through every format without a special case here:

- a distribution's findings are errors when the distribution fails the run (the result's
  own ``healthy`` judges it alone), else warnings (unverifiable, accepted, ...);
- of a failing distribution's findings, those of a breaking kind are the errors;
- a section element of ``deps`` is an error unless it says it is not ``failing``
  (a shadowed dist-info is a warning).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from wheeldoctor.judge.files import Status
from wheeldoctor.judge.policy import SELECTED_OUT
from wheeldoctor.model.environment import InstalledDistribution
from wheeldoctor.model.findings import BREAKING_KINDS, Code, Finding
from wheeldoctor.report.policy_text import config_said, said
from wheeldoctor.results.check import CheckResult, DoctorResult
from wheeldoctor.results.deps import DepsResult

if TYPE_CHECKING:  # preflight's wheel reading (zipfile) is imported only by the commands that read wheels
    from wheeldoctor.formats.wheelfile import WheelFile
    from wheeldoctor.judge.preflight import PreflightResult

    Result = CheckResult | DoctorResult | DepsResult | PreflightResult

Level = Literal["error", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """One annotation: what is wrong, where, and whether it fails the run."""

    level: Level
    code: Code | None
    """None for what has no WD code (not installed, a clash between wheels); ``kind`` names it."""
    kind: str
    message: str
    path: str | None = None
    """As RECORD writes it: relative to ``base`` when that is set, else absolute."""
    base: str | None = None
    """The site directory ``path`` is relative to."""
    expected: str | None = None
    found: str | None = None
    tip: str | None = None
    """What repairs it: the exact command (or the accept rule to paste), as the text report's ``Tip:``."""

    @property
    def rule(self) -> str:
        """The WD code, or the kind for items without one."""
        return self.code.value if self.code is not None else self.kind

    def line(self) -> str:
        """``code: path message (expected …, found …)``, as the text report writes a finding."""
        # A hook's message starts with its own file name: said once.
        where = f"{self.path} " if self.path and not self.message.startswith(self.path) else ""
        evidence = [f"{k} {v}" for k, v in (("expected", self.expected), ("found", self.found)) if v is not None]
        return f"{self.rule}: {where}{self.message}" + (f" ({', '.join(evidence)})" if evidence else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One judged thing: a distribution in an environment, or a wheel file."""

    suite: str
    """Which check judged it: ``check``, ``deps`` or ``wheels``."""
    name: str
    version: str | None
    status: str
    items: tuple[Item, ...]

    @property
    def subject(self) -> str:
        """``name version``."""
        return f"{self.name} {self.version}" if self.version else self.name

    @property
    def failing(self) -> bool:
        """Whether any item fails the run."""
        return any(i.level == "error" for i in self.items)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cases:
    """Everything one command run judged, in report order."""

    command: str
    healthy: bool
    environment: str | None
    """The environment's label; None for ``wheels`` without one."""
    sites: tuple[str, ...]
    """The site directories looked at, in search order."""
    cases: tuple[Case, ...]
    config: str | None = None
    """The config file the run read and what it narrowed (:func:`config_said`); None when it read none."""

    def items(self) -> Iterator[tuple[Case, Item]]:
        """Every item with its case."""
        for case in self.cases:
            for item in case.items:
                yield case, item


def cases_of(result: Result) -> Cases:
    """The cases of any command's result."""
    if isinstance(result, DoctorResult):
        check, deps = result.check, result.deps
        found = (*_check_cases(check), *_deps_cases(deps))
        return Cases(
            command="doctor",
            healthy=result.healthy,
            environment=check.environment.label,
            sites=check.environment.paths,
            cases=found,
            config=config_said(check.policy),
        )
    if isinstance(result, CheckResult):
        env = result.environment
        return Cases(
            command="check",
            healthy=result.healthy,
            environment=env.label,
            sites=env.paths,
            cases=tuple(_check_cases(result)),
            config=config_said(result.policy),
        )
    if isinstance(result, DepsResult):
        env = result.environment
        return Cases(
            command="deps",
            healthy=result.healthy,
            environment=env.label,
            sites=env.paths,
            cases=tuple(_deps_cases(result)),
        )
    env_or_none = result.environment
    label = env_or_none.label if env_or_none is not None else None
    paths = env_or_none.paths if env_or_none is not None else ()
    return Cases(
        command="wheels",
        healthy=result.healthy,
        environment=label,
        sites=paths,
        cases=tuple(_wheel_cases(result)),
        config=said(result.config, result.narrowed) if result.config is not None else None,
    )


def _finding_item(finding: Finding, level: Level, base: str | None, tip: str | None = None) -> Item:
    return Item(
        level=level,
        code=finding.code,
        kind=finding.kind.value,
        message=finding.message,
        path=finding.path,
        base=base,
        expected=finding.expected,
        found=finding.found,
        tip=tip if level == "error" else None,
    )


def _counted(finding: Finding) -> bool:
    """Whether a finding is reported at all: ``--select``/``--ignore`` leave some out entirely."""
    return finding.accepted is None or finding.accepted.by != SELECTED_OUT


def _check_cases(result: CheckResult) -> Iterator[Case]:
    from wheeldoctor.report.text import repair_tip

    alone = dataclasses.replace(result, hooks=None, unowned=None, native=None)  # each distribution on its own
    for report in result.distributions:
        fails = not dataclasses.replace(alone, distributions=(report,)).healthy
        breaking = any(f.kind in BREAKING_KINDS and f.accepted is None for f in report.findings)
        tip = repair_tip(report, result)
        # An accepted finding never fails the run, whatever else its distribution has.
        items = [
            _finding_item(
                f,
                "error" if fails and f.accepted is None and (f.kind in BREAKING_KINDS or not breaking) else "warning",
                report.location,
                tip,
            )
            for f in report.findings
            if _counted(f)
        ]
        if not items and report.status is not Status.INTACT:
            status = report.status.value
            items.append(
                Item(
                    level="error" if fails else "warning",
                    code=None,
                    kind=status,
                    message=f"{status.replace('-', ' ')} in {result.environment.label}",
                )
            )
        yield Case(
            suite="check", name=report.name, version=report.version, status=report.status.value, items=tuple(items)
        )
    yield from _pair_cases(result)
    yield from _startup_cases(result)
    yield from _native_cases(result)


def _pair_cases(result: CheckResult) -> Iterator[Case]:
    """One case per unrelated pair (it fails the run whichever side holds the paths), with both ways out."""
    for pair in result.unrelated:
        message = (
            f"{pair.first.name} and {pair.second.name} are unrelated (neither requires the other) yet write "
            f"{pair.shared} of the same path(s), {pair.differing} with different bytes; keep one"
        )
        keeps = [f"keep {c.keep}: {' && '.join(c.commands)}" for c in result.repairs.pair(pair).choices]
        item = Item(level="error", code=None, kind="unrelated-pair", message=message, tip="; or ".join(keeps) or None)
        subject = f"{pair.first.name} {pair.first.version} + {pair.second.name} {pair.second.version}"
        yield Case(suite="check", name=subject, version=None, status="clash", items=(item,))


def _startup_cases(result: CheckResult) -> Iterator[Case]:
    """A failing hook is a case of its owner (or of ``unowned files``); WD072s are ``unowned files``."""
    from wheeldoctor.report.hooks_text import accept_block

    unowned: list[Item] = []
    for hook in result.hooks.findings if result.hooks is not None else ():
        assert hook.finding is not None
        if not _counted(hook.finding):
            continue
        rule = "\n".join(accept_block(hook))
        tip = f"read the hook; to trust exactly these bytes, add to pyproject.toml:\n{rule}"
        level: Level = "error" if hook.finding.accepted is None else "warning"
        item = _finding_item(hook.finding, level, hook.site_dir, tip)
        if hook.owner is None:
            unowned.append(item)
        else:
            yield Case(
                suite="check", name=hook.owner.name, version=hook.owner.version, status="startup-hook", items=(item,)
            )
    if result.unowned is not None:
        unowned.extend(
            _finding_item(i.finding, "error" if i.finding.accepted is None else "warning", i.site_dir)
            for i in result.unowned.importable
            if _counted(i.finding)
        )
    if unowned:
        yield Case(suite="check", name="unowned files", version=None, status="unowned", items=tuple(unowned))


def _native_cases(result: CheckResult) -> Iterator[Case]:
    """A native finding is a case of its subject: the distribution, library or project it is about."""
    if result.native is None:
        return
    failing = {id(f) for f in result.native.failing}
    for found in result.native.findings:
        if not _counted(found.finding):
            continue
        level: Level = "error" if id(found) in failing else "warning"
        item = _finding_item(found.finding, level, found.site_dir)
        yield Case(suite="native", name=found.subject, version=found.version, status="native", items=(item,))


def _deps_cases(result: DepsResult) -> Iterator[Case]:
    by_name: dict[str, list[Item]] = {}
    versions: dict[str, str | None] = {}
    for dist in result.environment.active():
        by_name.setdefault(dist.name, [])
        versions[dist.name] = dist.version
    for element in _sections(result):
        name = getattr(element, "dist", None) or getattr(element, "name", None)
        if not isinstance(name, str):
            continue
        by_name.setdefault(name, []).append(_element_item(element, result.environment.find(name)))
        if name not in versions:
            versions[name] = getattr(element, "version", None)
    for name in sorted(by_name):
        items = tuple(by_name[name])
        status = "failing" if any(i.level == "error" for i in items) else "warning" if items else "ok"
        yield Case(suite="deps", name=name, version=versions[name], status=status, items=items)


def _sections(result: DepsResult) -> Iterator[Any]:
    """The requirement conflicts, then every element of every other section of ``result`` that has
    a code and a message, in field order (a section added later comes along unchanged).

    ``dependencies.problems`` is not read: ``compatibility`` already holds them, less those
    that ``doctor`` reports with the files.
    """
    yield from result.dependencies.conflicts
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if isinstance(value, tuple):
            yield from (e for e in value if isinstance(getattr(e, "code", None), Code) and hasattr(e, "message"))


def _element_item(element: Any, dist: InstalledDistribution | None) -> Item:
    """A section element as an item: fails unless it says it is not ``failing``.

    It is located at the dist-info it is about: a duplicate's stale (or shadowed) one, else
    the active distribution's metadata file, which is where a requirement or a tag is written.
    """
    level: Level = "error" if getattr(element, "failing", True) else "warning"
    kind = getattr(element, "kind", None)
    path, base = _dist_info_path(element)
    if path is None and dist is not None:
        metadata = "PKG-INFO" if dist.legacy else "METADATA"
        path, base = f"{os.path.basename(dist.path)}/{metadata}", dist.location
    return Item(
        level=level,
        code=element.code,
        kind=str(getattr(kind, "value", kind or "metadata")),
        message=str(element.message),
        path=path,
        base=base,
        expected=_text(getattr(element, "expected", None) or getattr(element, "wanted", None)),
        found=_text(getattr(element, "found", None)),
    )


def _dist_info_path(element: Any) -> tuple[str | None, str | None]:
    """For a duplicate: the dist-info it is about (stale first), relative to its directory."""
    for attribute in ("stale", "shadowed"):
        dists = getattr(element, attribute, ())
        if dists:
            path = str(dists[0].path)
            return os.path.basename(path), os.path.dirname(path)
    return None, None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _wheel_cases(result: PreflightResult) -> Iterator[Case]:
    for wheel in result.wheels:
        items = [_finding_item(f, "error" if f.kind in BREAKING_KINDS else "warning", None) for f in wheel.findings]
        items.extend(
            Item(
                level="error",
                code=None,
                kind="clash",
                message=f"shipped by {', '.join(c.claimants)} with different bytes",
                path=c.path,
            )
            for c in result.clashes
            if not c.identical and wheel.name in c.claimants
        )
        items.extend(
            Item(
                level="error",
                code=None,
                kind="overwrite",
                message=f"would replace a file recorded by {_owners(o.owners)}",
                path=o.location,
            )
            for o in result.overwrites
            if not o.identical and o.wheel == wheel.name
        )
        items.extend(_wheel_hook_items(result, wheel))
        status = "broken" if any(i.level == "error" for i in items) else "intact"
        yield Case(suite="wheels", name=wheel.name, version=wheel.version, status=status, items=tuple(items))


def _wheel_hook_items(result: PreflightResult, wheel: WheelFile) -> Iterator[Item]:
    """The failing (or accepted) start-up hooks ``wheel`` would install, as installed hooks' items read."""
    from wheeldoctor.report.hooks_text import accept_block

    for hook in result.hooks.findings:
        assert hook.finding is not None and hook.owner is not None
        if hook.owner.name != wheel.name or hook.owner.version != wheel.version or not _counted(hook.finding):
            continue
        rule = "\n".join(accept_block(hook))
        tip = f"read the hook before installing; to trust exactly these bytes, add to pyproject.toml:\n{rule}"
        level: Level = "error" if hook.finding.accepted is None else "warning"
        yield _finding_item(hook.finding, level, hook.site_dir, tip)


def _owners(owners: Iterable[str]) -> str:
    return ", ".join(owners) or "no installed distribution"
