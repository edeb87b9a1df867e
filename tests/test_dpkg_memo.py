"""dpkg's file lists, scanned once and kept: a kept scan answers as a fresh read, and any change to a list is seen."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from wheeldoctor.engine import cache
from wheeldoctor.engine.store import keeper
from wheeldoctor.where import dpkg_owners
from wheeldoctor.where.dpkg_owners import read_owners

SITE = "/usr/lib/python3/dist-packages"


def _settle() -> None:
    """Wait until just-written files are old enough to be kept (see cache.SETTLE_NS)."""
    time.sleep(2 * cache.SETTLE_NS / 1e9)


@pytest.fixture
def image(tmp_path: Path) -> tuple[Path, Path]:
    """A mounted image's dpkg database (``IMG/var/lib/dpkg``): one package owns a module; and the site directory."""
    root = tmp_path / "img"
    info = root / "var" / "lib" / "dpkg" / "info"
    info.mkdir(parents=True)
    site = root / SITE.lstrip("/")
    (site / "foo").mkdir(parents=True)
    (site / "foo" / "__init__.py").write_bytes(b"")
    (info / "python3-foo.list").write_text(f"/.\n/usr\n{SITE}\n{SITE}/foo\n{SITE}/foo/__init__.py\n")
    (info / "other.list").write_text("/.\n/usr/bin/other\n")
    (root / "var" / "lib" / "dpkg" / "status").write_text(
        "Package: python3-foo\nStatus: install ok installed\nVersion: 1.0-1\n\n"
    )
    return root / "var" / "lib" / "dpkg", site


def test_a_kept_scan_answers_as_a_fresh_read_and_reads_no_list(
    image: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admindir, site = image
    kept = tmp_path / "cache"
    kept.mkdir()
    _settle()
    fresh = read_owners(str(admindir), [str(site)])
    root = admindir.parent.parent.parent
    assert fresh is not None
    assert fresh.owners == {f"{root}{SITE}/foo": "python3-foo", f"{root}{SITE}/foo/__init__.py": "python3-foo"}
    assert read_owners(str(admindir), [str(site)], keeper=keeper(str(kept))) == fresh
    assert len(list(kept.glob("*.dpkg-lists"))) == 1

    lists_read: list[str] = []
    real = dpkg_owners.read_regular

    def counting(path: str, limit: int) -> object:
        if path.endswith(".list"):
            lists_read.append(path)
        return real(path, limit)

    monkeypatch.setattr(dpkg_owners, "read_regular", counting)
    assert read_owners(str(admindir), [str(site)], keeper=keeper(str(kept))) == fresh
    assert lists_read == []


@pytest.mark.parametrize("change", ["append", "new list", "remove list"])
def test_any_change_to_the_lists_is_seen(image: tuple[Path, Path], tmp_path: Path, change: str) -> None:
    admindir, site = image
    info = admindir / "info"
    kept = tmp_path / "cache"
    kept.mkdir()
    _settle()
    read_owners(str(admindir), [str(site)], keeper=keeper(str(kept)))
    if change == "append":
        with open(info / "other.list", "a") as f:
            f.write(f"{SITE}/other.pth\n")
    elif change == "new list":
        (info / "python3-bar.list").write_text(f"{SITE}/bar.py\n")
    else:
        (info / "python3-foo.list").unlink()
    after = read_owners(str(admindir), [str(site)], keeper=keeper(str(kept)))
    assert after == read_owners(str(admindir), [str(site)])
    assert after is not None and after.lists_read == len(list(info.glob("*.list")))


def test_another_environment_keeps_its_own_scan(image: tuple[Path, Path], tmp_path: Path) -> None:
    admindir, site = image
    kept = tmp_path / "cache"
    kept.mkdir()
    _settle()
    first = read_owners(str(admindir), [str(site)], keeper=keeper(str(kept)))
    elsewhere = read_owners(str(admindir), [str(tmp_path / "elsewhere")], keeper=keeper(str(kept)))
    assert elsewhere is not None and elsewhere.owners == {}
    assert len(list(kept.glob("*.dpkg-lists"))) == 2
    assert read_owners(str(admindir), [str(site)], keeper=keeper(str(kept))) == first
