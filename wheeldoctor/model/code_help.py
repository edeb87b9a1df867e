"""What each finding code means, as data beside :class:`~wheeldoctor.model.findings.Code`.

Every renderer reads it from here (SARIF rules, summaries); it is a module of its own so
that the checks, which import ``Code``, do not pay for the text. docs/codes.md says the same for
readers, with what to do about each.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoctor.model.findings import Code


@dataclass(frozen=True, slots=True)
class CodeHelp:
    """What a code means, for every renderer: a short line (docs/codes.md's) and a fuller one."""

    short: str
    full: str


#: Every code's meaning, as data: SARIF rules, summaries and tables all read it from here.
CODE_HELP: dict[Code, CodeHelp] = {
    Code.HASH_MISMATCH: CodeHelp(
        "content differs from RECORD",
        "The file's digest is not the one its distribution's RECORD lists: it was altered after install, "
        "or another distribution's bytes were written over it.",
    ),
    Code.SIZE_MISMATCH: CodeHelp(
        "size differs from RECORD",
        "The file's size is not the one RECORD lists, so its content cannot match. It is read once for "
        "evidence: its own digest (to pin it), and, when longer, whether it begins with RECORD's exact bytes "
        "(then it says how many bytes were appended).",
    ),
    Code.MISSING: CodeHelp(
        "recorded file is missing",
        "RECORD lists a file that is not on disk: it was deleted, or an install or uninstall was interrupted.",
    ),
    Code.NOT_REGULAR: CodeHelp(
        "not a regular file",
        "RECORD lists a path that is a FIFO, device, directory or socket; it is never opened.",
    ),
    Code.UNREADABLE: CodeHelp(
        "file cannot be read",
        "The recorded file could not be read (permission denied, symlink loop, I/O error), so it cannot be "
        "vouched for.",
    ),
    Code.CHANGED_WHILE_READ: CodeHelp(
        "file changed while it was being read",
        "The file's size or modification time changed while it was hashed; something is writing to it.",
    ),
    Code.OUTSIDE: CodeHelp(
        "recorded path resolves outside the environment",
        "A RECORD row resolves outside the environment's root; it is never read, and uninstalling the "
        "distribution could delete it.",
    ),
    Code.LINK_OUTSIDE: CodeHelp(
        "recorded path links outside the environment",
        "A symbolic link (the file itself or a directory above it) takes a recorded path outside the "
        "environment's site directories and prefix; the finding names where it resolves. The bytes may be "
        "intact, but they are read from elsewhere, so the file is unverifiable and --strict fails on it. "
        "Files a system package manager owns, and uv's symlink link mode (links into uv's cache), are judged "
        "as any file.",
    ),
    Code.NO_RECORD: CodeHelp(
        "no RECORD",
        "The distribution has no RECORD (an .egg-info install, or one by a tool that writes none), so its "
        "files cannot be verified.",
    ),
    Code.RECORD_UNDECODABLE: CodeHelp(
        "RECORD cannot be read",
        "RECORD is binary, not UTF-8, unreadable or too large; none of the distribution's files can be verified.",
    ),
    Code.RECORD_ROW_MALFORMED: CodeHelp(
        "malformed RECORD row",
        "A RECORD row has the wrong number of fields, a size that is not a number, or a hash that does not parse.",
    ),
    Code.WEAK_HASH: CodeHelp(
        "hash too weak",
        "RECORD uses md5, sha1 or sha224 for this file: too weak to vouch for its content.",
    ),
    Code.UNKNOWN_HASH: CodeHelp(
        "unknown hash algorithm",
        "RECORD names a hash algorithm that hashlib does not guarantee, so the file cannot be verified.",
    ),
    Code.NO_HASH: CodeHelp(
        "no hash in RECORD",
        "RECORD lists the file without a hash where the specification requires one.",
    ),
    Code.METADATA_PROBLEM: CodeHelp(
        "METADATA missing or incomplete",
        "The dist-info's METADATA is missing or has no Name or Version.",
    ),
    Code.DUPLICATE_ROW: CodeHelp(
        "path listed twice in RECORD",
        "RECORD lists the same path more than once.",
    ),
    Code.WHEEL_MEMBER_MISSING: CodeHelp(
        "wheel member missing",
        "The wheel's RECORD lists a file that the wheel archive does not contain.",
    ),
    Code.WHEEL_MEMBER_UNRECORDED: CodeHelp(
        "wheel member not in RECORD",
        "The wheel archive contains a file that its RECORD does not list.",
    ),
    Code.WHEEL_UNSAFE_PATH: CodeHelp(
        "wheel member would install outside the environment",
        "A wheel member's path is absolute or climbs out of the install directory.",
    ),
    Code.WHEEL_UNREADABLE: CodeHelp(
        "wheel not readable",
        "The wheel file is not a readable zip archive.",
    ),
    Code.REQUIRES_PYTHON_UNMET: CodeHelp(
        "Requires-Python excludes the interpreter",
        "The distribution's Requires-Python does not include the target interpreter's version.",
    ),
    Code.TAGS_UNSUPPORTED: CodeHelp(
        "WHEEL tags unsupported",
        "None of the tags in the distribution's WHEEL file is supported by the target interpreter.",
    ),
    Code.REQUIRES_PYTHON_INVALID: CodeHelp(
        "Requires-Python does not parse",
        "The distribution's Requires-Python is not a valid version specifier.",
    ),
    Code.REQUIREMENT_INVALID: CodeHelp(
        "requirement does not parse",
        "A Requires-Dist line or its marker is not a valid requirement.",
    ),
    Code.VERSION_INVALID: CodeHelp(
        "version does not parse",
        "The distribution's version is not a valid version.",
    ),
    Code.WHEEL_TAG_INVALID: CodeHelp(
        "WHEEL tag does not parse",
        "A tag in the distribution's WHEEL file is not a valid tag.",
    ),
    Code.DEPENDENCY_MISSING: CodeHelp(
        "requirement not installed",
        "A requirement of an installed distribution is not installed.",
    ),
    Code.DEPENDENCY_INCOMPATIBLE: CodeHelp(
        "installed version incompatible",
        "A requirement of an installed distribution is installed in a version it does not accept.",
    ),
    Code.DUPLICATE_DIST_INFO: CodeHelp(
        "two dist-infos of one project in one directory",
        "One site directory holds several dist-infos of one project: an interrupted install or upgrade.",
    ),
    Code.SHADOWED: CodeHelp(
        "dist-info shadowed on sys.path",
        "A dist-info of the same project in an earlier directory on sys.path hides this one; it is never imported.",
    ),
    Code.STALE_DIST_INFO: CodeHelp(
        "a stale dist-info: the files on disk are another's",
        "Beside this distribution's dist-info lies another of the same project, and the files on disk are not "
        "what its RECORD lists: they are the other one's (or it is a copy whose RECORD lists the other's "
        "files). The repair removes every dist-info and installs once the version whose files are there.",
    ),
    Code.STARTUP_HOOK_OWNED: CodeHelp(
        "a distribution ships code that runs at every interpreter start",
        "An installed distribution (or system package) owns a .pth file with an import line, or a "
        "sitecustomize/usercustomize module, that is not a known benign hook: it runs in every Python process "
        "of the environment, whether or not anything imports the distribution. A hook that could not be read "
        "whole is treated as running code.",
    ),
    Code.STARTUP_HOOK_UNOWNED: CodeHelp(
        "code that runs at every interpreter start, recorded by no installer",
        "A .pth file with an import line, or a sitecustomize/usercustomize module, that no RECORD and no system "
        "package lists: something put it there after install, and it runs in every Python process. A hook that "
        "could not be read whole is treated as running code.",
    ),
    Code.UNOWNED_MODULE: CodeHelp(
        "importable module recorded by no installer",
        "A top-level module or package in a site directory that no RECORD and no system package lists: "
        "`import` finds it, and no installer can verify, upgrade or remove it.",
    ),
    Code.LOCKED_MISSING: CodeHelp(
        "locked package not installed",
        "The lock installs this package for the inspected interpreter, and no distribution of that name is installed.",
    ),
    Code.LOCKED_OTHER_VERSION: CodeHelp(
        "installed at another version than the lock's",
        "The distribution is installed, but not at the version the lock selects for this interpreter.",
    ),
    Code.NOT_FROM_LOCKED_WHEEL: CodeHelp(
        "installed from a wheel the lock does not list",
        "The dist-info's WHEEL tags or direct_url.json name a wheel that is not among the lock's files for this "
        "package: it was built locally or came from elsewhere.",
    ),
    Code.NOT_LOCKED: CodeHelp(
        "installed but not in the lock",
        "A distribution is installed that the lock does not hold for this interpreter. Accept it by rule if it "
        "belongs there (a tool installed beside the project).",
    ),
    Code.RECORD_REWRITTEN: CodeHelp(
        "installed RECORD row differs from the locked wheel's",
        "The installed RECORD gives a file a digest (or lists a file) that the locked wheel's own RECORD does "
        "not: the installed RECORD was rewritten. It fails even when the file matches the installed row.",
    ),
    Code.LOCK_HASH_MISMATCH: CodeHelp(
        "wheel's hash differs from the lock",
        "The wheel at hand (a local file, a download, or the size the index reports) is not the one the lock "
        "pins; its RECORD is not used as a reference.",
    ),
    Code.MANAGER_UNVERIFIABLE: CodeHelp(
        "package manager's record unavailable",
        "The package manager that owns this distribution (dpkg, rpm, conda) keeps no usable record of its files "
        "here: no md5sums, rpm not installed, or no digests in conda-meta.",
    ),
    Code.REPLACED: CodeHelp(
        "an overlay's bytes, there on purpose",
        "The path holds the recorded bytes of an intact distribution that requires this one and lies on top of "
        "it (an overlay, as rpm's replaced files): the intended state, not a failure unless --strict.",
    ),
    Code.RECOMPILED: CodeHelp(
        "a shipped .pyc the installer compiled again",
        "The wheel shipped this .pyc and the installer's byte-compilation (pip's compileall) rewrote it from its "
        "source, which is intact: its bytes are exactly what compiling that source here gives. As the installer "
        "made it; not a failure.",
    ),
    Code.REWRITTEN: CodeHelp(
        "a file its installer rewrote in a known way",
        "An installer rewrote this recorded file after writing it, in a way wheeldoctor knows exactly (pipx adds "
        "-E to the python shebang of each app it exposes): the file is RECORD's bytes with that one change, in an "
        "environment that installer made. As the installer made it; not a failure, and a reinstall would undo it.",
    ),
}


def code_help(code: Code) -> CodeHelp:
    """The meaning of ``code``; a code added without one still renders, under its own name."""
    return CODE_HELP.get(code) or CodeHelp(code.name.lower().replace("_", " "), code.name.lower().replace("_", " "))
