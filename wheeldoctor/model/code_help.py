"""What each finding code means, as data beside :class:`~wheeldoctor.model.findings.Code`.

Every renderer reads it from here (SARIF rules, summaries); it is a module of its own so
that the checks, which import ``Code``, do not pay for the text. docs/codes.md says the same for
readers, with what to do about each.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.model.findings import Code


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeHelp:
    """What a code means, for every renderer: a short line (docs/codes.md's), a fuller one, what to do,
    and how grave it is."""

    short: str
    full: str
    todo: str = ""
    """What to do about it: docs/codes.md's last column, its links left as their words."""
    severity: float = 0.0
    """How grave it is, 0 to 10 as CVSS scores (GitHub code scanning's ``security-severity``)."""
    tags: tuple[str, ...] = ()
    """Its topics; ``security`` where the environment's integrity is at stake (GitHub ranks those)."""


#: Every code's meaning, as data: SARIF rules, summaries and tables all read it from here.
CODE_HELP: dict[Code, CodeHelp] = {
    Code.HASH_MISMATCH: CodeHelp(
        short="content differs from RECORD",
        full="The file's digest is not the one its distribution's RECORD lists: it was altered after install, "
        "or another distribution's bytes were written over it.",
        todo=(
            "Run the tip: a reinstall of the exact version with `--no-deps` (`wheeldoctor fix` runs it). If "
            "`content_from` is set, read the `clash:` line first: two distributions fight over the path. If the "
            "change is intended, pin it with an accept rule."
        ),
        severity=8.0,
        tags=("security", "integrity"),
    ),
    Code.SIZE_MISMATCH: CodeHelp(
        short="size differs from RECORD",
        full="The file's size is not the one RECORD lists, so its content cannot match. It is read once for "
        "evidence: its own digest (to pin it), and, when longer, whether it begins with RECORD's exact bytes "
        "(then it says how many bytes were appended).",
        todo=(
            "As WD001. For appended bytes (a CA added to a bundle, say), a reinstall drops them: accept the file "
            "pinned to its `found` digest instead if that was intended."
        ),
        severity=8.0,
        tags=("security", "integrity"),
    ),
    Code.MISSING: CodeHelp(
        short="recorded file is missing",
        full="RECORD lists a file that is not on disk: it was deleted, or an install or uninstall was interrupted.",
        todo="Reinstall the exact version (the tip, or `wheeldoctor fix`).",
        severity=5.0,
        tags=("security", "integrity"),
    ),
    Code.NOT_REGULAR: CodeHelp(
        short="not a regular file",
        full="RECORD lists a path that is a FIFO, device, directory or socket; it is never opened.",
        todo="Find out what replaced the file, remove it, then reinstall.",
        severity=6.0,
        tags=("security", "integrity"),
    ),
    Code.UNREADABLE: CodeHelp(
        short="file cannot be read",
        full="The recorded file could not be read (permission denied, symlink loop, I/O error), so it cannot be "
        "vouched for.",
        todo="Fix the permission or the disk, or run as a user who can read the environment.",
        severity=4.0,
        tags=("security", "integrity"),
    ),
    Code.CHANGED_WHILE_READ: CodeHelp(
        short="file changed while it was being read",
        full="The file's size or modification time changed while it was hashed; something is writing to it.",
        todo="Check again when nothing else writes to the environment (an install still running?).",
        severity=5.0,
        tags=("security", "integrity"),
    ),
    Code.OUTSIDE: CodeHelp(
        short="recorded path resolves outside the environment",
        full="A RECORD row resolves outside the environment's root; it is never read, and uninstalling the "
        "distribution could delete it.",
        todo=(
            "Treat the wheel as suspect. `fix` leaves it alone: remove the distribution by hand after reading its "
            "RECORD."
        ),
        severity=8.5,
        tags=("security", "integrity"),
    ),
    Code.LINK_OUTSIDE: CodeHelp(
        short="recorded path links outside the environment",
        full="A symbolic link (the file itself or a directory above it) takes a recorded path outside the "
        "environment's site directories and prefix; the finding names where it resolves. The bytes may be "
        "intact, but they are read from elsewhere, so the file is unverifiable and --strict fails on it. "
        "Files a system package manager owns, and uv's symlink link mode (links into uv's cache), are judged "
        "as any file.",
        todo=(
            "Find out who made the link and why; replace it with the file (reinstall the exact version), or "
            "accept WD008 for that path by a rule if the link is intended. See security."
        ),
        severity=7.0,
        tags=("security", "integrity"),
    ),
    Code.NO_RECORD: CodeHelp(
        short="no RECORD",
        full="The distribution has no RECORD (an .egg-info install, or one by a tool that writes none), so its "
        "files cannot be verified.",
        todo="Reinstall it from a wheel with pip or uv, which write RECORD.",
        severity=4.0,
        tags=("security", "integrity"),
    ),
    Code.RECORD_UNDECODABLE: CodeHelp(
        short="RECORD cannot be read",
        full="RECORD is binary, not UTF-8, unreadable or too large; none of the distribution's files can be verified.",
        todo="Reinstall the distribution; if the wheel itself ships it so, report it to its maintainers.",
        severity=5.0,
        tags=("security", "integrity"),
    ),
    Code.RECORD_ROW_MALFORMED: CodeHelp(
        short="malformed RECORD row",
        full="A RECORD row has the wrong number of fields, a size that is not a number, or a hash that does not parse.",
        todo="As WD011.",
        severity=5.0,
        tags=("security", "integrity"),
    ),
    Code.WEAK_HASH: CodeHelp(
        short="hash too weak",
        full="RECORD uses md5, sha1 or sha224 for this file: too weak to vouch for its content.",
        todo="Ask the maintainers for sha256 rows; a reinstall by pip or uv rewrites RECORD with sha256.",
        severity=5.5,
        tags=("security", "integrity"),
    ),
    Code.UNKNOWN_HASH: CodeHelp(
        short="unknown hash algorithm",
        full="RECORD names a hash algorithm that hashlib does not guarantee, so the file cannot be verified.",
        todo="As WD013.",
        severity=4.0,
        tags=("security", "integrity"),
    ),
    Code.NO_HASH: CodeHelp(
        short="no hash in RECORD",
        full="RECORD lists the file without a hash where the specification requires one.",
        todo="As WD013.",
        severity=4.0,
        tags=("security", "integrity"),
    ),
    Code.METADATA_PROBLEM: CodeHelp(
        short="METADATA missing or incomplete",
        full="The dist-info's METADATA is missing or has no Name or Version.",
        todo="Reinstall; a distribution without a name or version cannot be required or repaired by pin.",
        severity=2.0,
        tags=("metadata",),
    ),
    Code.DUPLICATE_ROW: CodeHelp(
        short="path listed twice in RECORD",
        full="RECORD lists the same path more than once.",
        todo="Reinstall; report the wheel if it ships such a RECORD.",
        severity=3.0,
        tags=("security", "integrity"),
    ),
    Code.WHEEL_MEMBER_MISSING: CodeHelp(
        short="wheel member missing",
        full="The wheel's RECORD lists a file that the wheel archive does not contain.",
        todo="Do not install it; fetch the wheel again, or report it.",
        severity=5.0,
        tags=("security", "wheel"),
    ),
    Code.WHEEL_MEMBER_UNRECORDED: CodeHelp(
        short="wheel member not in RECORD",
        full="The wheel archive contains a file that its RECORD does not list.",
        todo="As WD020: an installer would write a file nobody can verify.",
        severity=6.0,
        tags=("security", "wheel"),
    ),
    Code.WHEEL_UNSAFE_PATH: CodeHelp(
        short="wheel member would install outside the environment",
        full="A wheel member's path is absolute or climbs out of the install directory.",
        todo="Do not install it.",
        severity=9.0,
        tags=("security", "wheel"),
    ),
    Code.WHEEL_UNREADABLE: CodeHelp(
        short="wheel not readable",
        full="The wheel file is not a readable zip archive.",
        todo="Fetch it again.",
        severity=4.0,
        tags=("security", "wheel"),
    ),
    Code.REQUIRES_PYTHON_UNMET: CodeHelp(
        short="Requires-Python excludes the interpreter",
        full="The distribution's Requires-Python does not include the target interpreter's version.",
        todo="Install a version of the distribution made for this Python, or use a Python it supports.",
        severity=3.0,
        tags=("compatibility",),
    ),
    Code.TAGS_UNSUPPORTED: CodeHelp(
        short="WHEEL tags unsupported",
        full="None of the tags in the distribution's WHEEL file is supported by the target interpreter.",
        todo="Reinstall so that the installer picks a wheel for this interpreter.",
        severity=3.0,
        tags=("compatibility",),
    ),
    Code.REQUIRES_PYTHON_INVALID: CodeHelp(
        short="Requires-Python does not parse",
        full="The distribution's Requires-Python is not a valid version specifier.",
        todo="Report it to the maintainers; pip ignores such a distribution entirely.",
        severity=2.0,
        tags=("metadata",),
    ),
    Code.REQUIREMENT_INVALID: CodeHelp(
        short="requirement cannot be judged",
        full="A Requires-Dist line or its marker does not parse or cannot be evaluated, or its extras ask too much.",
        todo="As WD032. The rest of the distribution is still judged.",
        severity=2.0,
        tags=("metadata",),
    ),
    Code.VERSION_INVALID: CodeHelp(
        short="version does not parse",
        full="The distribution's version is not a valid version.",
        todo="As WD032.",
        severity=2.0,
        tags=("metadata",),
    ),
    Code.WHEEL_TAG_INVALID: CodeHelp(
        short="WHEEL tag does not parse",
        full="A tag in the distribution's WHEEL file is not a valid tag.",
        todo="As WD032.",
        severity=2.0,
        tags=("metadata",),
    ),
    Code.DEPENDENCY_MISSING: CodeHelp(
        short="requirement not installed",
        full="A requirement of an installed distribution is not installed.",
        todo="Install it: `dependency_repair` in the JSON is one command for all of them.",
        severity=3.0,
        tags=("dependencies",),
    ),
    Code.DEPENDENCY_INCOMPATIBLE: CodeHelp(
        short="installed version incompatible",
        full="A requirement of an installed distribution is installed in a version it does not accept.",
        todo="Install a version both sides accept, or change what requires it.",
        severity=3.0,
        tags=("dependencies",),
    ),
    Code.DUPLICATE_DIST_INFO: CodeHelp(
        short="two dist-infos of one project in one directory",
        full="One site directory holds several dist-infos of one project: an interrupted install or upgrade.",
        todo=(
            "Run the remedy the report prints (pip: one uninstall per dist-info, then one install; uv: one "
            "reinstall), or `wheeldoctor fix`. Do not delete dist-infos by hand."
        ),
        severity=4.0,
        tags=("dependencies",),
    ),
    Code.SHADOWED: CodeHelp(
        short="dist-info shadowed on sys.path",
        full=(
            "A dist-info of the same project in an earlier directory on sys.path hides this one; it is never imported."
        ),
        todo=(
            "Nothing, if intended (a venv over a system Python). Otherwise remove the unused copy with the "
            "command shown."
        ),
        severity=2.0,
        tags=("dependencies",),
    ),
    Code.STALE_DIST_INFO: CodeHelp(
        short="a stale dist-info: the files on disk are another's",
        full="Beside this distribution's dist-info lies another of the same project, and the files on disk are not "
        "what its RECORD lists: they are the other one's (or it is one no uninstall removes, such as a copy whose "
        "RECORD lists the other's files). The repair removes every dist-info and installs once the version whose "
        "files are there.",
        todo=(
            "The clean-up the tip prints (the same in `deps`, `doctor` and `fix`): uninstall each dist-info, then "
            "install the version whose files are on disk with `--force-reinstall`. For one no uninstall removes "
            "(no RECORD, or a RECORD listing none of its own files: a copy), remove its directory by hand."
        ),
        severity=4.0,
        tags=("dependencies",),
    ),
    Code.STARTUP_HOOK_OWNED: CodeHelp(
        short="a distribution ships code that runs at every interpreter start",
        full="An installed distribution (or system package) owns a .pth file with an import line, or a "
        "sitecustomize/usercustomize module, that is not a known benign hook: it runs in every Python process "
        "of the environment, whether or not anything imports the distribution. A hook that could not be read "
        "whole is treated as running code.",
        todo=(
            "Read the lines the report shows before anything else runs. If you trust it, paste the accept rule "
            "the tip prints (pinned to its sha256); a changed file fails again (a hook whose bytes could not be "
            "read has no sha256 and no rule accepts it). To trust every version of your own hook, add a "
            "`known-hook` template (start-up hooks)."
        ),
        severity=6.0,
        tags=("security", "startup"),
    ),
    Code.STARTUP_HOOK_UNOWNED: CodeHelp(
        short="code that runs at every interpreter start, recorded by no installer",
        full="A .pth file with an import line, or a sitecustomize/usercustomize module, that no RECORD and no system "
        "package lists: something put it there after install, and it runs in every Python process. A hook that "
        "could not be read whole is treated as running code.",
        todo=(
            "Find out what put it there. Remove it, or accept it pinned to its sha256 with `distribution = "
            '"(unowned)"`; a hook whose bytes could not be read has no sha256 and no rule accepts it.'
        ),
        severity=8.0,
        tags=("security", "startup"),
    ),
    Code.UNOWNED_MODULE: CodeHelp(
        short="importable module recorded by no installer",
        full="A top-level module or package in a site directory that no RECORD and no system package lists: "
        "`import` finds it, and no installer can verify, upgrade or remove it.",
        todo="Remove it, or install it properly as a distribution. `--show-unowned` lists every unowned file.",
        severity=6.0,
        tags=("security", "startup"),
    ),
    Code.LOCKED_MISSING: CodeHelp(
        short="locked package not installed",
        full=(
            "The lock installs this package for the inspected interpreter, and no distribution of that name is "
            "installed."
        ),
        todo="Install the lock (`uv pip sync FILE`, or your installer's equivalent).",
        severity=4.0,
        tags=("security", "lock"),
    ),
    Code.LOCKED_OTHER_VERSION: CodeHelp(
        short="installed at another version than the lock's",
        full="The distribution is installed, but not at the version the lock selects for this interpreter.",
        todo=("Reinstall it at the locked version: the `Tip:` gives the command, and `fix --all --lock FILE` runs it."),
        severity=5.0,
        tags=("security", "lock"),
    ),
    Code.NOT_FROM_LOCKED_WHEEL: CodeHelp(
        short="installed from a wheel the lock does not list",
        full="The dist-info's WHEEL tags or direct_url.json name a wheel that is not among the lock's files for this "
        "package: it was built locally or came from elsewhere.",
        todo="Reinstall it from the lock's wheel.",
        severity=8.0,
        tags=("security", "lock"),
    ),
    Code.NOT_LOCKED: CodeHelp(
        short="installed but not in the lock",
        full="A distribution is installed that the lock does not hold for this interpreter. Accept it by rule if it "
        "belongs there (a tool installed beside the project).",
        todo=(
            "Uninstall it, or accept it by rule if it belongs there (a tool installed beside the project); "
            "`--ignore WD083` leaves it out of a run."
        ),
        severity=4.0,
        tags=("security", "lock"),
    ),
    Code.RECORD_REWRITTEN: CodeHelp(
        short="installed RECORD row differs from the locked wheel's",
        full="The installed RECORD gives a file a digest (or lists a file) that the locked wheel's own RECORD does "
        "not: the installed RECORD was rewritten. It fails even when the file matches the installed row.",
        todo=(
            "Treat it as tampering until you know otherwise: reinstall the locked wheel (`fix --all --lock FILE`) "
            "and find out what rewrote it."
        ),
        severity=8.0,
        tags=("security", "lock"),
    ),
    Code.LOCK_HASH_MISMATCH: CodeHelp(
        short="wheel's hash differs from the lock",
        full="The wheel at hand (a local file, a download, or the size the index reports) is not the one the lock "
        "pins; its RECORD is not used as a reference.",
        todo="Find out which file is right: re-lock, or replace the wheel in your wheelhouse.",
        severity=9.0,
        tags=("security", "lock"),
    ),
    Code.LOCK_WHEEL_UNFETCHED: CodeHelp(
        short="locked wheel cannot be had",
        full="The locked wheel could not be fetched or read (not found, host unreachable, a bound passed): its "
        "distribution is not judged against the lock, and its installed RECORD is verified as without one.",
        todo="Make the wheel reachable (the index, the path, --find-links DIR), or re-lock.",
        severity=6.0,
        tags=("lock",),
    ),
    Code.LOCK_NOT_JUDGED: CodeHelp(
        short="not judged against the lock",
        full="The lock installs this package from no wheel (an sdist, a directory, a VCS checkout, an archive that "
        "is not a wheel): there is no wheel RECORD to judge its files against. It fails only with --strict.",
        todo="Lock a wheel for it, or accept WD087 for it by a rule.",
        severity=2.0,
        tags=("lock",),
    ),
    Code.MANAGER_UNVERIFIABLE: CodeHelp(
        short="package manager's record unavailable",
        full="The package manager that owns this distribution (dpkg, rpm, conda) keeps no usable record of its files "
        "here: no md5sums, rpm not installed, or no digests in conda-meta.",
        todo=(
            "Verify it with the manager's own tools (`debsums`, `rpm -V`), or install the missing tool. See "
            "distro-managed Python."
        ),
        severity=1.0,
        tags=("security", "integrity"),
    ),
    Code.REPLACED: CodeHelp(
        short="an overlay's bytes, there on purpose",
        full="The path holds the recorded bytes of an intact distribution that requires this one and lies on top of "
        "it (an overlay, as rpm's replaced files): the intended state, not a failure unless --strict.",
        todo="Nothing. See policy for when an overlay counts as settled.",
        severity=1.0,
        tags=("security", "integrity"),
    ),
    Code.RECOMPILED: CodeHelp(
        short="a shipped .pyc the installer compiled again",
        full="The wheel shipped this .pyc and the installer's byte-compilation (pip's compileall) rewrote it from its "
        "source, which is intact: its bytes are exactly what compiling that source here gives. As the installer "
        "made it; not a failure.",
        todo=(
            "Nothing. A `.pyc` whose header is valid but whose code differs stays WD001/WD002 (see files "
            "installers write)."
        ),
        severity=1.0,
        tags=("security", "integrity"),
    ),
    Code.BYTECODE_DIFFERS: CodeHelp(
        short="a .pyc whose code is not its source's",
        full="RECORD lists this .pyc without a hash (pip compiles and records them so), and the code object it holds "
        "is not what compiling its recorded, intact source gives: import runs it in place of the source. Judged "
        "with --strict, --lock and for named distributions.",
        todo="Treat it as tampering: reinstall the exact version (the tip, or `wheeldoctor fix`), then find out what "
        "wrote the file.",
        severity=8.0,
        tags=("security", "integrity"),
    ),
    Code.LIBRARY_UNRESOLVED: CodeHelp(
        short="a needed library is found nowhere",
        full="A shared object that Python loads on import (an extension module, or a library one needs) names a "
        "library in DT_NEEDED that the dynamic loader finds nowhere: not on its RPATH or RUNPATH, not in the "
        "system's ld.so.cache or default directories, and no library of the environment has that SONAME. "
        "Importing it fails. When the environment holds the library under another major, the finding names it.",
        todo=(
            "Install the build of the distribution that matches the environment's CUDA major (or the runtime it "
            "needs, e.g. `nvidia-cuda-runtime-cu12` for a `.so.12`). A driver library (`libcuda.so.1`) is never "
            "this finding."
        ),
        severity=5.0,
        tags=("reliability", "native"),
    ),
    Code.PLUGIN_UNRESOLVED: CodeHelp(
        short="a plugin's library is found nowhere",
        full="A shared object that nothing in the environment needs or imports (a plugin that a library opens by "
        "name at run time, if ever) names a library that is found nowhere: it cannot load here. Reported, not "
        "a failure.",
        todo="Install the system libraries it names where the feature is used (RDMA, MPI, UCX); otherwise nothing.",
        severity=1.0,
        tags=("reliability", "native"),
    ),
    Code.CUDA_MAJORS_MIXED: CodeHelp(
        short="two majors of one CUDA library",
        full="Two major versions of one CUDA library (libcudart.so.12 and libcudart.so.13, say) are in the "
        "environment or needed from the system by it. The rule is per library, not per toolkit: CUDA 13 "
        "keeps the .so.12 names of cuSPARSE and cuSOLVER, and that is one major each.",
        todo=(
            "Keep one CUDA major: rebuild or reinstall the distributions that need the other (the message names "
            "them), and remove the runtime they brought."
        ),
        severity=5.0,
        tags=("reliability", "native"),
    ),
    Code.CUDA_BUILDS_MIXED: CodeHelp(
        short="one project's builds for two CUDA variants",
        full="Distributions of one project built for different CUDA variants (-cu12 and -cu13, or the unsuffixed "
        "or -base one beside a -cuNN one) are installed together, and neither requires the other (an overlay "
        "such as nvidia-cutlass-dsl-libs-cu13 over -libs-base requires its base, and is intended).",
        todo=(
            "Uninstall the variant the environment does not use; check the lock or override that pulled it (an "
            "extra such as `[cu13]` dropped)."
        ),
        severity=4.0,
        tags=("reliability", "native"),
    ),
    Code.SHARED_OBJECT_UNREADABLE: CodeHelp(
        short="shared object cannot be read",
        full="An ELF shared object whose dynamic section cannot be read within wheeldoctor's bounds (truncated, "
        "corrupt, or over a limit): what it needs is unknown. Fails only with --strict.",
        todo="Reinstall the distribution; if the wheel ships it so, report it.",
        severity=3.0,
        tags=("reliability", "native"),
    ),
    Code.REWRITTEN: CodeHelp(
        short="a file its installer rewrote in a known way",
        full="An installer rewrote this recorded file after writing it, in a way wheeldoctor knows exactly (pipx adds "
        "-E to the python shebang of each app it exposes): the file is RECORD's bytes with that one change, in an "
        "environment that installer made. As the installer made it; not a failure, and a reinstall would undo it.",
        todo=("Nothing; a reinstall would undo what the installer did. Anything more than the flag stays WD001/WD002."),
        severity=1.0,
        tags=("security", "integrity"),
    ),
}


def code_help(code: Code) -> CodeHelp:
    """The meaning of ``code``; a code added without one still renders, under its own name."""
    name = code.name.lower().replace("_", " ")
    return CODE_HELP.get(code) or CodeHelp(short=name, full=name)
