"""dpkg's database formats, parsed from bytes as dpkg writes them."""

from __future__ import annotations

import hashlib

import pytest

from wheeldoctor.formats.dpkg import (
    DpkgFormatError,
    filtered_out,
    parse_diversions,
    parse_list,
    parse_md5sums,
    parse_path_filters,
    parse_status,
)

pytestmark = pytest.mark.unit

STATUS = b"""\
Package: python3-yaml
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 6.0-3+b2
Description: YAML parser and emitter for Python3
 PyYAML is a YAML parser and emitter for Python.

Package: python3-cffi-backend
Status: install ok installed
Architecture: amd64
Multi-Arch: same
Version: 1.15.1-5+b1

Package: sudo
Status: install ok installed
Architecture: amd64
Version: 1.9.13p3-1+deb12u1
Conffiles:
 /etc/sudoers 45437b4e86fba2ab890ac81db2ec3606
 /etc/pam.d/sudo 85da64f888739f193fc0fa896680030e

Package: python3-old
Status: deinstall ok config-files
Architecture: all
Version: 1.0-1
"""


def test_status_stanzas_by_info_name() -> None:
    packages = parse_status(STATUS)
    assert set(packages) == {"python3-yaml", "python3-cffi-backend:amd64", "sudo", "python3-old"}
    assert packages["python3-yaml"].version == "6.0-3+b2"
    assert packages["sudo"].conffiles == {"/etc/sudoers", "/etc/pam.d/sudo"}
    assert packages["python3-old"].installed is False
    assert parse_status(STATUS, {"python3-cffi-backend:amd64"}).keys() == {"python3-cffi-backend:amd64"}


def test_md5sums_lines_as_md5sum_prints_them() -> None:
    digest = hashlib.md5(b"x").hexdigest()
    data = f"{digest}  usr/lib/python3/dist-packages/a b.py\n{digest.upper()} *./usr/bin/tool\n\n".encode()
    assert parse_md5sums(data) == {
        "/usr/lib/python3/dist-packages/a b.py": hashlib.md5(b"x").digest(),
        "/usr/bin/tool": hashlib.md5(b"x").digest(),
    }
    with pytest.raises(DpkgFormatError, match="line 1"):
        parse_md5sums(b"not-a-digest  usr/bin/tool\n")


def test_lists_and_diversions() -> None:
    assert parse_list(b"/.\n/usr\n/usr/bin/tool\n") == ["/usr", "/usr/bin/tool"]
    diversions = parse_diversions(b"/usr/bin/tool\n/usr/bin/tool.distrib\nother-pkg\n/etc/x\n/etc/x.local\n:\n")
    assert diversions["/usr/bin/tool"].to == "/usr/bin/tool.distrib"
    assert diversions["/usr/bin/tool"].by == "other-pkg"
    assert diversions["/etc/x"].by is None
    with pytest.raises(DpkgFormatError):
        parse_diversions(b"/a\n/b\n")


@pytest.mark.parametrize(
    ("path", "excluded"),
    [
        ("/usr/share/doc/python3-yaml/changelog.gz", True),
        ("/usr/share/doc/python3-yaml/copyright", False),
        ("/usr/share/man/man1/x.1.gz", True),
        ("/usr/lib/python3/dist-packages/yaml/__init__.py", False),
    ],
)
def test_path_filters_the_last_match_decides(path: str, excluded: bool) -> None:
    # As Ubuntu's minimized images write /etc/dpkg/dpkg.cfg.d/excludes.
    text = (
        "# Drop all man pages\npath-exclude=/usr/share/man/*\n"
        "path-exclude=/usr/share/doc/*\npath-include=/usr/share/doc/*/copyright\n"
    )
    assert filtered_out(path, parse_path_filters(text)) is excluded
