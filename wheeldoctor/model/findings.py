"""Findings: one problem each, with a stable code, a kind and its evidence.

The codes are a contract (they appear in JSON and in ``--select``-style filters
later); never renumber one, only add.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """What sort of problem a finding is; the JSON ``kind`` field."""

    MODIFIED = "modified"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    OUTSIDE = "outside"
    UNVERIFIABLE = "unverifiable"
    MALFORMED = "malformed"
    #: Another distribution's recorded bytes, put there by one that requires this one (an overlay).
    REPLACED = "replaced"
    #: Code that runs at every interpreter start (judge/hooks.py).
    STARTUP_HOOK = "startup-hook"
    #: A file in a site directory that no installer recorded (where/unowned.py).
    UNOWNED = "unowned"
    #: A shipped ``.pyc`` the installer compiled again from its intact source (where/rewrites.py).
    RECOMPILED = "recompiled"
    #: A recorded file an installer rewrote in a known way, such as pipx's shebang flag (where/rewrites.py).
    REWRITTEN = "rewritten"
    #: Installed, but the lock does not hold it (judge/locked.py).
    UNLOCKED = "unlocked"
    #: A dist-info beside another of the same project, whose RECORD the files on disk do not match (judge/stale.py).
    STALE = "stale"
    #: A shared object the dynamic loader cannot load: a library it needs is found nowhere (judge/native.py).
    UNLOADABLE = "unloadable"
    #: Native libraries or builds for two CUDA majors in one environment (judge/native.py).
    MIXED = "mixed"


class Code(str, Enum):
    """Stable finding codes; the value is what users see and filter on."""

    HASH_MISMATCH = "WD001"
    SIZE_MISMATCH = "WD002"
    MISSING = "WD003"
    NOT_REGULAR = "WD004"
    UNREADABLE = "WD005"
    CHANGED_WHILE_READ = "WD006"
    OUTSIDE = "WD007"
    #: A recorded path that a symbolic link resolves outside the environment's roots.
    LINK_OUTSIDE = "WD008"
    NO_RECORD = "WD010"
    RECORD_UNDECODABLE = "WD011"
    RECORD_ROW_MALFORMED = "WD012"
    WEAK_HASH = "WD013"
    UNKNOWN_HASH = "WD014"
    NO_HASH = "WD015"
    METADATA_PROBLEM = "WD016"
    DUPLICATE_ROW = "WD017"
    #: The package manager that owns the distribution keeps no usable record of it (judge/managed.py).
    MANAGER_UNVERIFIABLE = "WD018"
    WHEEL_MEMBER_MISSING = "WD020"
    WHEEL_MEMBER_UNRECORDED = "WD021"
    WHEEL_UNSAFE_PATH = "WD022"
    WHEEL_UNREADABLE = "WD023"
    # Metadata against the target interpreter (compat.py, deps.py).
    REQUIRES_PYTHON_UNMET = "WD030"
    TAGS_UNSUPPORTED = "WD031"
    REQUIRES_PYTHON_INVALID = "WD032"
    REQUIREMENT_INVALID = "WD033"
    VERSION_INVALID = "WD034"
    WHEEL_TAG_INVALID = "WD035"
    # Requirements against what is installed (deps.py).
    DEPENDENCY_MISSING = "WD040"
    DEPENDENCY_INCOMPATIBLE = "WD041"
    # Several dist-infos of one project (duplicates.py).
    DUPLICATE_DIST_INFO = "WD050"
    SHADOWED = "WD051"
    #: A dist-info whose files on disk are another dist-info's of the same project, in the same directory.
    STALE_DIST_INFO = "WD052"
    # Paths an overlay (a distribution that requires this one) holds with its own bytes.
    REPLACED = "WD060"
    #: A shipped .pyc whose bytes are the installer's recompilation of its intact recorded source.
    RECOMPILED = "WD061"
    #: A recorded file a known installer step rewrote (pipx's ``-E`` on a script's shebang).
    REWRITTEN = "WD062"
    #: A ``.pyc`` RECORD lists without a hash whose code is not its recorded source's (probes/bytecode.py).
    BYTECODE_DIFFERS = "WD063"
    # Start-up hooks and files nobody recorded (hooks.py, unowned.py).
    STARTUP_HOOK_OWNED = "WD070"
    STARTUP_HOOK_UNOWNED = "WD071"
    UNOWNED_MODULE = "WD072"
    # The environment against its lock, the locked wheels' RECORDs as the reference (judge/locked.py).
    LOCKED_MISSING = "WD080"
    LOCKED_OTHER_VERSION = "WD081"
    NOT_FROM_LOCKED_WHEEL = "WD082"
    NOT_LOCKED = "WD083"
    RECORD_REWRITTEN = "WD084"
    LOCK_HASH_MISMATCH = "WD085"
    #: The locked wheel could not be had (404, host unreachable, a bound passed): not judged against the lock.
    LOCK_WHEEL_UNFETCHED = "WD086"
    #: The lock installs it from no wheel (an sdist, a directory, VCS): no RECORD to judge it against.
    LOCK_NOT_JUDGED = "WD087"
    # Native libraries as the dynamic loader sees them (judge/native.py).
    LIBRARY_UNRESOLVED = "WD090"
    PLUGIN_UNRESOLVED = "WD091"
    CUDA_MAJORS_MIXED = "WD092"
    CUDA_BUILDS_MIXED = "WD093"
    SHARED_OBJECT_UNREADABLE = "WD094"


#: Codes of findings about metadata alone (requirements, duplicates, fit with the interpreter):
#: their ``found`` is evidence to compare (``b 1.0``), never bytes, so a rule need not pin it.
METADATA_CODES = frozenset(
    code.value
    for code in (
        Code.REQUIRES_PYTHON_UNMET,
        Code.TAGS_UNSUPPORTED,
        Code.REQUIRES_PYTHON_INVALID,
        Code.REQUIREMENT_INVALID,
        Code.VERSION_INVALID,
        Code.WHEEL_TAG_INVALID,
        Code.DEPENDENCY_MISSING,
        Code.DEPENDENCY_INCOMPATIBLE,
        Code.DUPLICATE_DIST_INFO,
        Code.SHADOWED,
    )
)

#: The installers' own known rewrites: as the installer made them, so never a problem.
AS_INSTALLED_KINDS = frozenset({Kind.RECOMPILED, Kind.REWRITTEN})
#: Codes that say a distribution is not the lock's (another version, or not locked at all): said of
#: its name, not of its bytes, which may all be intact. They fail the run, under their own word.
LOCK_MEMBERSHIP_CODES = frozenset({Code.LOCKED_OTHER_VERSION, Code.NOT_LOCKED})

#: Codes no ``--select``/``--ignore`` (command line or config) leaves out: a changed, missing or
#: unreadable file, a RECORD that cannot vouch for any, a path out of the environment, a start-up
#: hook, a module nobody installed, and a wheel or version that is not the lock's. Only an accept
#: rule or a baseline entry pinned to the finding (its bytes, where it has any) passes one.
INTEGRITY_CODES = frozenset(
    code.value
    for code in (
        Code.HASH_MISMATCH,
        Code.SIZE_MISMATCH,
        Code.MISSING,
        Code.NOT_REGULAR,
        Code.UNREADABLE,
        Code.CHANGED_WHILE_READ,
        Code.OUTSIDE,
        Code.LINK_OUTSIDE,
        Code.RECORD_UNDECODABLE,
        Code.RECORD_ROW_MALFORMED,
        Code.DUPLICATE_ROW,
        Code.BYTECODE_DIFFERS,
        Code.STARTUP_HOOK_OWNED,
        Code.STARTUP_HOOK_UNOWNED,
        Code.UNOWNED_MODULE,
        Code.LOCKED_MISSING,
        Code.LOCKED_OTHER_VERSION,
        Code.NOT_FROM_LOCKED_WHEEL,
        Code.RECORD_REWRITTEN,
        Code.LOCK_HASH_MISMATCH,
    )
)

_CODES = frozenset(c.value for c in Code)
_GROUPS = frozenset(c[:4] for c in _CODES)
PREFIX_HELP = "a code (WD041) or a group of ten (WD04), as docs/codes.md lists them"


def is_code_prefix(text: str) -> bool:
    """Whether ``text`` is a code :class:`Code` defines or the group of ten of one (``WD07``).

    ``WD`` and ``WD0`` are not: they name nearly every code, so they could only hide.
    """
    return text in _CODES or text in _GROUPS


#: Kinds that mean the bytes on disk are wrong or cannot be trusted.
BREAKING_KINDS = frozenset(
    {Kind.MODIFIED, Kind.MISSING, Kind.UNREADABLE, Kind.OUTSIDE, Kind.MALFORMED, Kind.UNLOCKED, Kind.STALE}
)


@dataclass(frozen=True, slots=True)
class Acceptance:
    """Why a finding does not fail the run: who accepted it (``config`` or ``baseline``), and where."""

    by: str
    reason: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem with one distribution.

    ``path`` is the path as written in RECORD (or the dist-info file concerned);
    ``expected`` and ``found`` are short evidence strings (``sha256=…``, ``1234 bytes``).
    ``content_from`` names the distribution whose recorded bytes are on disk instead,
    when a modified file was clobbered by another installed distribution.
    """

    code: Code
    kind: Kind
    path: str | None
    message: str
    expected: str | None = None
    found: str | None = None
    content_from: str | None = None
    links: int = 1
    """Hard links to the file on disk; above 1 its bytes may be shared with an installer's cache."""
    appended_bytes: int | None = None
    """Set when the file begins with RECORD's exact bytes and this many more follow them."""
    accepted: Acceptance | None = None
    """Set when an accept rule or a baseline accepts this finding: it does not fail the run."""

    @property
    def evidence(self) -> str | None:
        """``appended`` when RECORD's bytes are intact with more appended; else None."""
        return "appended" if self.appended_bytes is not None else None
