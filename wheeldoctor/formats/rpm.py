"""rpm's answers, parsed: ``rpm -qf`` (who owns a path) and ``rpm -V`` (what changed).

Pure: takes the commands' output as text. ``rpm -V`` prints one line per file that
differs from the package's header: nine attribute characters (``S`` size, ``M`` mode,
``5`` digest, ``D`` device, ``L`` link, ``U`` user, ``G`` group, ``T`` mtime, ``P``
capabilities; ``.`` passed, ``?`` not tested), a file-type marker (``c`` config,
``d`` doc, ``g`` ghost, ``l`` license, ``r`` readme) and the path; ``missing`` in place
of the attributes for a file that is gone.
"""

from __future__ import annotations

import re

from wheeldoctor.model.managed import DistroVerdict

_VERIFY_LINE = re.compile(r"(missing|[SM5DLUGTP.?]{8,9})\s+(?:([cdglr])\s+)?(/.*)")


def parse_verify(text: str) -> tuple[DistroVerdict, ...]:
    """The files ``rpm -V`` reports, with their flags; other lines (dependencies, scripts) are skipped."""
    verdicts = []
    for line in text.splitlines():
        match = _VERIFY_LINE.fullmatch(line.rstrip())
        if match is None:
            continue
        flags, marker, path = match.groups()
        if marker == "g":
            continue  # ghost files are not shipped in the package: nothing to compare
        missing = flags == "missing"
        verdicts.append(DistroVerdict(path, missing, "" if missing else flags))
    return tuple(verdicts)


def parse_query_owners(text: str) -> list[tuple[str, str] | None]:
    """``rpm -qf --qf '%{NAME}\\t%{EVR}\\n' PATH...``: (name, version) per path, None where no package owns it."""
    owners: list[tuple[str, str] | None] = []
    for line in text.splitlines():
        if line.startswith(("file ", "error:")) or "not owned" in line:
            owners.append(None)
            continue
        name, _, version = line.partition("\t")
        owners.append((name.strip(), version.strip()) if name.strip() else None)
    return owners


def altered(verdict: DistroVerdict) -> bool:
    """Whether a verdict says the file's bytes are not the packaged ones (missing, size or digest)."""
    return verdict.missing or "5" in verdict.flags or "S" in verdict.flags
