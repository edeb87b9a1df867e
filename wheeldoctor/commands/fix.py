"""``fix``: plan the repairs ``check`` and ``doctor`` report, run them with the recorded installer, verify again.

This command's whole job is to run installers: each step is one subprocess, an argument
list (never a shell line), its output handed line by line to the caller's sink. Nothing
here deletes or writes a file; every change goes through pip or uv. A step has done its
job when the installer exited 0 and its site directory shows it (one dist-info fewer
after an uninstall; exactly one, of the step's version, with a RECORD written again
after an install). It stops at the first step that has not, rolls forward (the install
that ends that step's group still runs, so no uninstall leaves files removed), then
verifies again what the plan touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Protocol

from wheeldoctor.commands.check import CheckRequest, run_check
from wheeldoctor.formats.requirement import parse_requirement
from wheeldoctor.judge.deps import check_dependencies
from wheeldoctor.judge.duplicates import find_duplicates
from wheeldoctor.judge.policy import Policy
from wheeldoctor.judge.requirements import Requirements
from wheeldoctor.model.environment import Environment
from wheeldoctor.model.errors import InputError
from wheeldoctor.repair.outcome import (
    Outcome,
    Seen,
    compare,
    dependency_problems,
    duplicate_problems,
    expectation_problems,
    file_problems,
    pair_problems,
    startup_problems,
    step_problem,
)
from wheeldoctor.repair.plan import FixStep, plan_repairs
from wheeldoctor.repair.steps import StepKind
from wheeldoctor.results.check import CheckResult
from wheeldoctor.results.fix import Against, FixPlan, FixResult, StepResult, StepStatus
from wheeldoctor.where.target import Target, load_target

#: Lines of an installer's output kept to explain its failure.
_TAIL = 40

#: What pip and uv print when the index cannot be reached (pip via urllib3, uv via reqwest).
_NETWORK_SIGNS = (
    "Failed to establish a new connection",
    "NewConnectionError",
    "Connection refused",
    "ConnectTimeout",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "ProxyError",
    "SSLError",
    "error sending request",
    "dns error",
    "tcp connect error",
    "Failed to fetch",
)


class StepSink(Protocol):
    """Where the plan and each running step's progress go (the CLI prints them; the library never does)."""

    def plan(self, planned: FixPlan) -> None:
        """The plan, before anything runs (or is refused)."""

    def start(self, number: int, step: FixStep) -> None:
        """Step ``number`` (from 1) is about to run."""

    def line(self, text: str) -> None:
        """One line of the installer's output, as it comes."""

    def end(self, number: int, result: StepResult) -> None:
        """Step ``number`` finished."""


def plan_fix(
    target: Target,
    names: Sequence[str] | None,
    *,
    keep: Collection[str] = (),
    cache_dir: str | None = None,
    config: str | None = None,
    baseline: str | None = None,
    against: Against | None = None,
    isolated: bool = False,
) -> FixPlan:
    """Read ``target``, verify ``names`` (None: every active distribution) and their duplicates; plan the repairs.

    With ``against`` (``fix --lock``) the environment is judged against the lock, as
    ``check --all --lock`` does, and a reinstall pins the lock's version.

    It runs under the accept rules ``check`` would use (``config``, else the nearest one, and
    ``baseline``; none with ``isolated``): an accepted finding (a CA appended on purpose, say) is not repaired, since
    a reinstall would drop it.
    """
    from packaging.utils import canonicalize_name

    from wheeldoctor.commands.policy import load_policy

    env = load_target(target, with_tags=against is not None)
    policy = load_policy(env, config=config, baseline_file=baseline, isolated=isolated)
    requirements = Requirements.of(env)  # the lock changes claims only: the metadata read is the same
    check = _check(env, names, cache_dir, policy, against, requirements)
    env = check.environment
    wanted = None if names is None else {canonicalize_name(n) for n in names}
    files = {verdict.name: verdict for verdict in check.stale}  # whose files stale dist-infos hold
    duplicates = tuple(d for d in find_duplicates(env, files) if wanted is None or d.name in wanted)
    plan = plan_repairs(env, check.distributions, check.pairs, duplicates, keep, repairs=check.repairs)
    before = file_problems(check.distributions) | pair_problems(check.pairs)
    before |= duplicate_problems(d for d in duplicates if d.failing)
    before |= startup_problems(check.failing_hooks, check.failing_unowned)
    ordered = tuple(sorted(before, key=lambda p: (p.subject, p.key)))
    return FixPlan(
        check=check,
        duplicates=duplicates,
        plan=plan,
        before=ordered,
        target=target,
        policy=policy,
        cache_dir=cache_dir,
        against=against,
        requirements=requirements,
    )


def _check(
    env: Environment,
    names: Sequence[str] | None,
    cache_dir: str | None,
    policy: Policy | None,
    against: Against | None,
    requirements: Requirements | None = None,
) -> CheckResult:
    """``check``, or with a lock ``check --lock``: the locked wheels' claims in place, the lock's findings added."""
    if against is None:
        request = CheckRequest(
            names=names, cache_dir=cache_dir, processes=True, policy=policy, requirements=requirements
        )
        return run_check(env, request)
    locked = against(env)
    # The lock's claims are in the environment; forked workers would read the installed RECORD files.
    request = CheckRequest(
        names=names, cache_dir=cache_dir, processes=False, policy=policy, lock=locked.verdict, requirements=requirements
    )
    return run_check(locked.environment, request)


def own_distributions_at_risk(planned: FixPlan) -> list[str]:
    """The steps' distributions that are the very copies this process runs with (rich, typer, ...).

    Reinstalling them under a running wheeldoctor can leave it half old, half new, or
    without a module it still has to import.
    """
    own = _own_locations()
    env = planned.environment
    at_risk = []
    for name in dict.fromkeys(s.name for s in planned.plan.steps):
        dist = next((d for d in env.distributions if d.name == name), None)
        if dist is not None and own.get(name) == os.path.realpath(dist.location):
            at_risk.append(name)
    return at_risk


def _own_locations() -> dict[str, str]:
    """wheeldoctor's own distribution and everything it requires, here: name -> real site directory."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    queue = ["wheeldoctor", "packaging", "pybase64", "rich", "typer"]
    while queue:
        name = canonicalize_name(queue.pop())
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[name] = os.path.realpath(str(dist.locate_file("")))
        for text in dist.requires or ():
            parsed = parse_requirement(text)
            if isinstance(parsed, InvalidRequirement):
                continue
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                queue.append(parsed.name)
    return found


def run_plan(planned: FixPlan, sink: StepSink) -> tuple[StepResult, ...]:
    """Run the steps in order; stop at the first that fails or does not do its job.

    The rest are ``not-run``, except the last install of the failed step's group (a clean-up's,
    a kept side's): it runs, so that files an earlier uninstall removed are put back (rolled
    forward: an uninstall cannot be undone).
    """
    return run_steps(planned.plan.steps, sink)


def run_steps(steps: Sequence[FixStep], sink: StepSink) -> tuple[StepResult, ...]:
    """:func:`run_plan`'s loop, on the steps alone."""
    results: list[StepResult] = []
    tried: set[str] = set()
    for number, step in enumerate(steps, 1):
        sink.start(number, step)
        why = None if step.group in tried else _cannot_restore(step, steps[number:])
        tried.add(step.group)
        if why is not None:  # nothing removed yet: stop here, the group's install is not rolled forward
            results.append(StepResult(step=step, status=StepStatus.FAILED, error=why))
            sink.end(number, results[-1])
            results.extend(StepResult(step=rest, status=StepStatus.NOT_RUN) for rest in steps[number:])
            break
        result = _run_step(step, sink)
        sink.end(number, result)
        results.append(result)
        if result.status is StepStatus.FAILED:
            forward = _forward(step, steps[number:])
            for later, rest in enumerate(steps[number:], number + 1):
                if rest is not forward:
                    results.append(StepResult(step=rest, status=StepStatus.NOT_RUN))
                    continue
                sink.start(later, rest)
                again = replace(_run_step(rest, sink), note=f"rolled forward after step {number} failed")
                sink.end(later, again)
                results.append(again)
            break
    return tuple(results)


def _cannot_restore(first: FixStep, rest: Sequence[FixStep]) -> str | None:
    """Why the install that ends ``first``'s group would fail, tried dry before its uninstalls remove anything.

    A clean-up removes every dist-info, then installs the kept version: were that version not
    to be had (offline, a private build, a yanked file), the group would leave no files. The
    installer's ``--dry-run`` resolves and fetches it and changes nothing; an installer too old
    to know the option is not asked.
    """
    install = _forward(first, rest) if first.kind is StepKind.UNINSTALL else None
    if install is None or "install" not in install.argv:
        return None
    at = install.argv.index("install") + 1
    argv = [_program(install.argv[0]), *install.argv[1:at], "--dry-run", *install.argv[at:]]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return None  # as the step itself would find it: said when it runs
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    if done.returncode == 0 or "no such option: --dry-run" in said:
        return None
    last = next((line.strip() for line in reversed(said.splitlines()) if line.strip()), "")
    return (
        f"{install.name} {install.version} cannot be installed ({install.tool}'s dry run: {last}), "
        "so its clean-up did not start: nothing was removed"
    )


def _forward(failed: FixStep, rest: Sequence[FixStep]) -> FixStep | None:
    """The install that ends ``failed``'s group, among the steps not run: it puts back what the group removed."""
    if not failed.group:
        return None
    return next((s for s in reversed(rest) if s.group == failed.group and s.restores), None)


def _seen(step: FixStep) -> list[Seen]:
    """The dist-infos of ``step``'s distribution in its site directory, now."""
    from wheeldoctor.model.sitedirs import lookup_key
    from wheeldoctor.where.environment import load_distribution, scan_location

    key = lookup_key(step.name)
    seen = []
    for found in scan_location(step.location):
        if found.key != key:
            continue
        dist = load_distribution(found, step.location, read_record=False)
        try:
            st = os.stat(os.path.join(found.path, "RECORD"))
            record: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            record = None
        seen.append(Seen(found.path, dist.version, record))
    return seen


def _run_step(step: FixStep, sink: StepSink) -> StepResult:
    """Run one step, then look at its directory: exit 0 alone is not success (see :func:`step_problem`)."""
    watched = step.kind is not StepKind.CACHE_CLEAN and bool(step.location)
    before = _seen(step) if watched else []
    result, output = _run_installer(step, sink)
    if result.status is StepStatus.OK and watched:
        why = step_problem(step, before, _seen(step), output)
        if why is not None:
            return replace(result, status=StepStatus.FAILED, error=why)
    return result


def _run_installer(step: FixStep, sink: StepSink) -> tuple[StepResult, Sequence[str]]:
    argv = [_program(step.argv[0]), *step.argv[1:]]
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        error = f"{step.argv[0]} could not be started: {e.strerror or e}"
        return StepResult(step=step, status=StepStatus.FAILED, returncode=None, error=error), ()
    assert process.stdout is not None
    tail: deque[str] = deque(maxlen=_TAIL)
    with process.stdout:
        for raw in process.stdout:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(text)
            sink.line(text)
    code = process.wait()
    if code == 0:
        return StepResult(step=step, status=StepStatus.OK, returncode=0), tail
    return StepResult(step=step, status=StepStatus.FAILED, returncode=code, error=_diagnose(step, code, tail)), tail


def _program(name: str) -> str:
    """The program to start: from PATH, else beside this interpreter (pip and uv in its venv)."""
    if os.sep in name or shutil.which(name) is not None:
        return name
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else name


def _diagnose(step: FixStep, code: int, tail: Sequence[str]) -> str:
    """One line for a failed step: the network when the output says so, else the installer's last error."""
    import re

    installer = step.tool
    if any(sign.lower() in text.lower() for text in tail for sign in _NETWORK_SIGNS):
        # The most specific cause: the OS error pip quotes, else uv's last "cause:" line.
        errno = next((m.group(0) for t in tail if (m := re.search(r"\[Errno -?\d+\] [^'\")\]]+", t))), None)
        causes = [t.strip().removeprefix("cause:").strip() for t in tail if t.strip().startswith("cause:")]
        detail = errno or (causes[-1] if causes else "connection failed")
        return f"{installer} could not reach the package index ({detail})"
    errors = [
        t.strip() for t in tail if t.strip().lower().startswith(("error", "\u00d7"))
    ]  # uv marks errors with a cross
    last = errors[-1] if errors else next((t.strip() for t in reversed(tail) if t.strip()), "")
    return f"{installer} exited with code {code}" + (f": {last}" if last else "")


def verify_again(planned: FixPlan, env: Environment) -> Outcome:
    """Verify what the plan touched in ``env`` (read again after the steps) and compare with before."""
    plan = planned.plan
    present = [n for n in plan.touches if env.find(n) is not None]
    after = expectation_problems(env, plan.expected)
    if present:
        check = _check(env, present, planned.cache_dir, planned.policy, planned.against)
        after |= file_problems(check.distributions) | pair_problems(check.pairs)
    touched = set(plan.touches)
    after |= duplicate_problems(d for d in find_duplicates(env) if d.failing and d.name in touched)
    # A requirement the repair broke (an uninstall, a version change) is new; older ones are not its doing.
    new_conflicts = dependency_problems(check_dependencies(Requirements.of(env)).conflicts)
    old = planned.requirements or Requirements.of(planned.environment)
    old_conflicts = dependency_problems(check_dependencies(old).conflicts)
    return compare(plan, planned.before, after, new_only=new_conflicts - old_conflicts)


class FixRefused(InputError):
    """Nothing was run, and why: one line for the user (and a tip); exit 2."""

    def __init__(self, message: str, tip: str | None = None) -> None:
        """``message`` says why nothing ran; ``tip`` what to do instead."""
        super().__init__(message)
        self.tip = tip


def run_fix(
    planned: FixPlan,
    sink: StepSink,
    *,
    dry_run: bool = False,
    yes: bool = False,
    ask: Callable[[int], bool] | None = None,
    explicit_python: bool = False,
) -> FixResult:
    """Show the plan, then run it unless it must not run: a dry run, no consent, or wheeldoctor's own dependencies.

    ``ask`` asks the user about N steps (None: there is no terminal to ask on); ``yes``
    is consent given in advance. Raises :class:`FixRefused` when nothing may run.
    """
    sink.plan(planned)
    steps = planned.plan.steps
    if dry_run or not steps:
        return FixResult(planned)
    coming = [h for h in planned.check.failing_hooks if h.wheel is not None]
    if coming:
        raise FixRefused(
            f"the lock's wheels would install {len(coming)} start-up hook(s) that fail ({coming[0].path}"
            + (", ..." if len(coming) > 1 else "")
            + "): nothing was run",
            "read them (wheeldoctor check --all --lock FILE); if you trust them, accept their bytes by a rule",
        )
    at_risk = own_distributions_at_risk(planned)
    if at_risk and not explicit_python:
        raise FixRefused(
            f"the plan reinstalls {', '.join(at_risk)}, which this wheeldoctor runs on; nothing was run",
            "run wheeldoctor from another environment, or name this interpreter with --python",
        )
    if not yes and ask is None:
        raise FixRefused("no terminal to ask on, and no --yes: nothing was run", "review the plan, then pass --yes")
    if not yes and ask is not None and not ask(len(steps)):
        raise FixRefused("not confirmed: nothing was run")
    return fix(planned, sink)


def fix(planned: FixPlan, sink: StepSink) -> FixResult:
    """Run the plan's steps, then read the environment again and verify what they touched."""
    if not planned.plan.steps:
        return FixResult(planned)
    results = run_plan(planned, sink)
    outcome = verify_again(planned, load_target(planned.target, with_tags=planned.against is not None))
    return FixResult(planned, results, outcome)
