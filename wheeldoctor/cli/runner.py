"""How a command body runs: expected errors as one line and exit 2, reports delivered in the chosen format.

Exit codes: 0 healthy, 1 problems found, 2 could not run, 130 interrupted. Neither typer
nor rich is imported here: a body ends with ``SystemExit``, which typer passes through,
and rich draws only what goes to a terminal.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from wheeldoctor.model.errors import InputError

TYPE_CHECKING = False  # typing stays off the start-up path: ``--version`` runs through here
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType
    from typing import NoReturn, TextIO

    from rich.console import Console

    from wheeldoctor.judge.files import DistributionReport
    from wheeldoctor.report.cases import Result
    from wheeldoctor.where.environment import MemoFor
    from wheeldoctor.where.fingerprint import Keeper
    from wheeldoctor.where.target import Target

    Rich = Callable[[Console], None] | None

EXIT_HEALTHY = 0
EXIT_PROBLEMS = 1
EXIT_ERROR = 2


def might_be_terminal(stream: TextIO) -> bool:
    """False where rich's ``Console.is_terminal`` is sure to say False for ``stream``: then rich
    need not be imported. Only ``TTY_COMPATIBLE`` and ``FORCE_COLOR`` make rich call a stream
    that is not a tty a terminal."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # closed
        return False


def terminal_console() -> Console | None:
    """A rich console on stdout when rich calls stdout a terminal; None, without importing rich, when not."""
    if not might_be_terminal(sys.stdout):
        return None
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else None


def fail(message: str, tip: str | None = None) -> NoReturn:
    """One line on stderr (red on a terminal), a ``Tip:`` line if given; exit 2.

    Messages quote paths, names and config text: made inert (:mod:`wheeldoctor.report.inert`),
    and never read as markup.
    """
    from wheeldoctor.report import inert

    if might_be_terminal(sys.stderr):
        from rich.console import Console

        err = Console(stderr=True, highlight=False)
        if err.is_terminal:
            err.print(f"[bold red]error:[/] {inert.markup(message)}", markup=True, soft_wrap=True)
            if tip:
                err.print(f"Tip: {inert.text(tip)}", soft_wrap=True, markup=False)
            raise SystemExit(EXIT_ERROR)
    sys.stderr.write(f"error: {inert.text(message)}\n")
    if tip:
        sys.stderr.write(f"Tip: {inert.text(tip)}\n")
    raise SystemExit(EXIT_ERROR)


def guard(run: Callable[[], int]) -> NoReturn:
    """Run a command body: expected errors become one line and exit 2, never a traceback."""
    forgiving_streams()
    _Notes.silenced = False  # a caller running commands in one process: each run says its own notes
    try:
        code = run()
    except InputError as e:  # where.target's TargetError too
        fail(str(e), getattr(e, "tip", None))  # fix's refusals say what to do instead
    except KeyboardInterrupt:
        from wheeldoctor.cli import interrupted

        interrupted()
    except BrokenPipeError:
        # The reader went away (`| head`): say nothing more, and keep the interpreter's
        # final flush from raising again on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_PROBLEMS) from None
    except Exception as e:
        if os.environ.get("WHEELDOCTOR_DEBUG"):
            raise
        fail(f"internal error: {type(e).__name__}: {e}", "set WHEELDOCTOR_DEBUG=1 for the traceback")
    note_failed_workers()
    raise SystemExit(code)


def forgiving_streams() -> None:
    """stdout and stderr write what their encoding cannot hold as backslash escapes.

    With ``PYTHONIOENCODING=ascii`` or ``utf-8`` (strict), a non-ASCII name or an undecodable
    file name would otherwise end the run in ``UnicodeEncodeError``.
    """
    import io

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def write_document(text: str) -> None:
    """A machine-readable document (JSON, SARIF, JUnit) to stdout as UTF-8 bytes, whatever the locale.

    Its strings are already valid UTF-8 (:mod:`wheeldoctor.report.inert`); stdout's own
    encoding (ASCII under ``LANG=C``, say) would otherwise mangle or refuse them.
    """
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a replaced stdout (tests' capture): it takes text
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "backslashreplace"))
    buffer.flush()


class _Notes:
    """Whether ``-q`` was given: notes about how the run went (a cache not used, a worker redone) are not said."""

    silenced = False


def silence_notes() -> None:
    """``-q``: from now on, :func:`note` says nothing (errors and warnings still go to stderr)."""
    _Notes.silenced = True


def note(line: str) -> None:
    """A ``note:`` line on stderr (made inert), unless ``-q`` silenced notes."""
    if not _Notes.silenced:
        from wheeldoctor.report import inert

        sys.stderr.write(f"note: {inert.text(line)}\n")


def note_failed_workers() -> None:
    """One ``note:`` line on stderr per kind of worker failure (the report is unchanged: its work was
    redone here); ``WHEELDOCTOR_DEBUG=1`` has the children print their tracebacks."""
    fork = sys.modules.get("wheeldoctor.engine.fork")  # not imported: nothing was forked
    failures = getattr(fork, "failures", None)
    if not failures:
        return
    from collections import Counter

    for line, count in Counter(failures).items():
        times = f" ({count} times)" if count > 1 else ""
        tip = "" if os.environ.get("WHEELDOCTOR_DEBUG") == "1" else "; WHEELDOCTOR_DEBUG=1 shows why"
        note(f"{line}{times}{tip}")
    failures.clear()


def exit_now(code: object) -> NoReturn:
    """End the process with ``code`` (a ``SystemExit`` code) without tearing the interpreter down.

    A check leaves tens of thousands of objects behind (the environment it read, the ownership
    map), and freeing them one by one is work nobody waits for (docs/performance.md).
    Everything a normal exit does for others is still done: output is flushed and atexit
    functions run. Where that cannot be done the same way (another thread still runs, a flush
    fails, the code is a message), the normal exit is taken.
    """
    threading = sys.modules.get("threading")  # never imported: no other thread was started
    if (code is None or isinstance(code, int)) and (threading is None or threading.active_count() == 1):
        atexit._run_exitfuncs()  # as at a normal exit, after the other threads, before the final flush
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # the normal exit reports it, with the exit status it gives that
        else:
            os._exit(code or 0)
    raise SystemExit(code)


class no_cyclic_gc:
    """Loading and verification allocate a few objects per recorded file, none in a cycle: the
    cyclic collector's passes over them would free nothing (docs/performance.md says what they
    cost). A command's imports allocate enough to run it many times more, freeing as little."""

    def __enter__(self) -> None:
        self._collecting = gc.isenabled()
        gc.disable()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._collecting:
            gc.enable()


def cache_dir(disabled: bool) -> str | None:
    """Where cached digests and metadata live, unless ``--no-cache`` or the environment turned them off."""
    if disabled:
        return None
    from wheeldoctor.engine import store

    directory = store.directory()
    if directory is None:
        return None
    why = store.distrust(directory)
    if why is not None:
        if directory not in _distrusted:  # said once
            _distrusted.add(directory)
            note(f"not using the cache {directory}: {why}; no cache this run")
        return None
    return directory


#: Cache directories already said to be untrusted in this process.
_distrusted: set[str] = set()


def metadata_memos(cache_dir: str | None) -> MemoFor | None:
    """The metadata memo of each site directory, kept in ``cache_dir`` (none without a cache)."""
    if cache_dir is None:
        return None
    from wheeldoctor.engine.distinfo_memo import memos

    return memos(cache_dir)


def scan_keeper(cache_dir: str | None) -> Keeper | None:
    """What keeps dpkg's scan of its file lists in ``cache_dir`` (none without a cache)."""
    if cache_dir is None:
        return None
    from wheeldoctor.engine.store import keeper

    return keeper(cache_dir)


#: The report formats of every command that renders a result; ``deps`` and ``wheels`` have only these.
REPORT_FORMATS = ("text", "json", "github", "junit", "sarif")
#: check's and doctor's: the reports, and an SBOM of what was verified.
_FORMATS = (*REPORT_FORMATS, "cyclonedx")


def choose_format(chosen: str | None, json: bool, allowed: Sequence[str] = _FORMATS) -> str:
    """``--format`` (one of ``allowed``), with ``--json`` as its alias; anything else is one line and exit 2."""
    if chosen is not None and chosen not in allowed:
        fail(f"unknown format {chosen!r}: choose one of {', '.join(allowed)}")
    if json and chosen not in (None, "json"):
        fail(f"--json is --format json: it cannot be combined with --format {chosen}")
    return "json" if json else chosen or "text"


def target_of(
    python: str | None,
    path: Sequence[str],
    dpkg_admindir: str | None = None,
    *,
    quiet: bool = False,
    config: str | None = None,
    isolated: bool = False,
) -> Target:
    """The environment to inspect: as named, else found as uv finds it (``where/discover.py``).

    Every command that looks at an environment takes it from here. The config's ``python`` key
    is ``--config FILE``'s when one is given, else the nearest config's. The choice and why go
    to stderr first; a tool's own venv (uv tool, pipx, a pre-commit hook's) is never taken, and
    refused (exit 2) when it is all there is. ``--python`` may name a venv or prefix directory.
    ``isolated`` (``--isolated``): no config's ``python`` is read.
    """
    named = _named(python, path, dpkg_admindir)
    if named is not None:
        return named
    from wheeldoctor.where.discover import Refusal, Untrusted

    try:
        return _discovered(dpkg_admindir, quiet=quiet, config=config, isolated=isolated)
    except (Refusal, Untrusted) as e:
        fail(str(e))


def optional_target(python: str | None, path: Sequence[str], isolated: bool = False) -> Target | None:
    """As :func:`target_of`, for a command with work to do without an environment (``wheels``):
    None, said on stderr, where discovery finds only wheeldoctor's own."""
    named = _named(python, path, None)
    if named is not None:
        return named
    from wheeldoctor.where.discover import Refusal, Untrusted

    try:
        return _discovered(None, quiet=False, config=None, isolated=isolated)
    except Untrusted as e:
        fail(str(e))
    except Refusal:
        from wheeldoctor.report import inert

        sys.stderr.write(
            inert.text(
                f"environment: none (the only one found is wheeldoctor's own, {sys.prefix}): the wheels are "
                "checked against each other alone; --python PATH names an environment"
            )
            + "\n"
        )
        return None


def _named(python: str | None, path: Sequence[str], dpkg_admindir: str | None) -> Target | None:
    """The environment ``--python`` or ``--path`` names (a venv directory: its interpreter); None when neither does."""
    if not python and not path:
        return None
    from wheeldoctor.where.target import Target

    if python and os.path.isdir(python):
        from wheeldoctor.where.discover import interpreter_in

        found = interpreter_in(python)
        if found is None:
            fail(f"--python {python}: a directory with no bin/python (or Scripts/python.exe) in it")
        python = found
    return Target(python=python, paths=tuple(path), dpkg_admindir=dpkg_admindir)


def _discovered(dpkg_admindir: str | None, *, quiet: bool, config: str | None, isolated: bool) -> Target:
    """The environment discovery finds, said on stderr (unless ``quiet``); raises ``Refusal``."""
    from wheeldoctor.cli.settings import config_python
    from wheeldoctor.where import discover
    from wheeldoctor.where.target import Target

    choice = discover.discover(os.environ, os.getcwd(), sys.prefix, config_python(config, isolated=isolated))
    if not quiet:
        from wheeldoctor.report import inert

        sys.stderr.write(inert.text(f"environment: {choice.python or sys.executable} ({choice.reason})") + "\n")
    return Target(python=choice.python, dpkg_admindir=dpkg_admindir, reason=choice.reason)


def exit_code(healthy: bool, exit_zero: bool = False) -> int:
    """0 healthy, 1 problems found; ``--exit-zero`` turns 1 into 0 (could-not-run stays 2)."""
    return EXIT_HEALTHY if healthy or exit_zero else EXIT_PROBLEMS


def deliver(
    result: Result,
    chosen: str,
    output: str | None,
    rich: Rich = None,
    show_accepted: bool = False,
    quiet: bool = False,
    header: bool = True,
    verbose: bool = False,
) -> None:
    """The report in ``chosen`` format to stdout; with ``output``, to that file and the text report to stdout.

    ``verbose`` (``-v``): the text report lists every finding a clash block counts.
    ``output`` ``-`` is stdout, as for snapshot and diff. ``quiet`` (``-q``) changes the text
    report only: what fails and the summary, nothing when healthy.
    ``header=False``: the text report on stdout leaves out its ``environment:`` line, which discovery
    has written on stderr already (:func:`target_of`); a file written with ``output`` keeps it.
    """
    from wheeldoctor.report.output import OutputError, append, write_atomic
    from wheeldoctor.report.render import Format, render, step_summary

    if output == "-":
        output = None
    fmt = Format(chosen)
    if output is not None:
        try:
            write_atomic(output, render(result, fmt, show_accepted=show_accepted, verbose=verbose))
        except OutputError as e:
            fail(str(e))
    if fmt is Format.GITHUB and os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            append(os.environ["GITHUB_STEP_SUMMARY"], step_summary(result))
        except OutputError as e:
            from wheeldoctor.report import inert

            sys.stderr.write(f"warning: {inert.text(str(e))}\n")  # the annotations still go out
    if output is None and fmt is Format.GITHUB:
        sys.stdout.write(render(result, fmt, show_accepted=show_accepted))
    elif output is None and fmt is not Format.TEXT:
        write_document(render(result, fmt, show_accepted=show_accepted))
    elif quiet:
        from wheeldoctor.report.render import quiet_lines

        sys.stdout.writelines(line + "\n" for line in quiet_lines(result))
    elif output is None or fmt is not Format.TEXT:
        console = terminal_console() if rich is not None else None
        if rich is not None and console is not None:
            rich(console)
        else:
            sys.stdout.write(render(result, Format.TEXT, show_accepted=show_accepted, header=header, verbose=verbose))


def refuse_report_with_baseline(write_baseline: str | None, chosen: str, output: str | None) -> None:
    """``--write-baseline`` writes the baseline alone: a report asked for beside it would silently not appear."""
    if write_baseline is not None and (output is not None or chosen != "text"):
        fail("--write-baseline writes the baseline alone: leave out --format, --json and --output")


def pin_baseline(file: str, reports: Sequence[DistributionReport]) -> int:
    """Write ``file`` pinning the findings of ``reports``; the run then exits 0."""
    from wheeldoctor.commands import policy as policies
    from wheeldoctor.report.output import OutputError, write_atomic

    text, pinned = policies.baseline_text(reports)
    try:
        write_atomic(file, text)  # a device or a pipe (/dev/stdout) is written to, never replaced
    except OutputError as e:
        fail(str(e))
    from wheeldoctor.report import inert

    sys.stderr.write(f"wrote {inert.text(file)}: {pinned} finding(s) pinned\n")
    return EXIT_HEALTHY
