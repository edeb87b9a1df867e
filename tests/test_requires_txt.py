"""requires.txt read exactly as pip reads it: our parse against pip's own, on the same egg-info directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from wheeldoctor.formats.requires_txt import parse_requires_txt
from wheeldoctor.model.environment import MetadataDir
from wheeldoctor.where.environment import load_distribution

pytestmark = pytest.mark.unit

CASES = {
    "plain": "a\nb>=1\n",
    "comments and blanks": "# a comment\n\n  a  \n\n# another\nb\n",
    "marker section": '[:python_version >= "3"]\nc\n[:sys_platform == "win32"]\nd\n',
    "extras": "base\n[ssl]\npyopenssl\n[test]\npytest>=7\n[test]\nmore\n",
    "extra with marker": '[socks:python_version >= "3.8"]\npysocks>=1.5\n',
    "empty section": "[unused]\n[docs]\nsphinx\n",
    "nothing": "",
}


def _egg_info(tmp_path: Path, requires: str, pkg_info: str = "") -> Path:
    egg = tmp_path / "demo-1.0-py3.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n{pkg_info}")
    (egg / "requires.txt").write_text(requires)
    return egg


def _pip_reads(egg: Path) -> tuple[list[str], list[str]]:
    from pip._internal.metadata.importlib import Distribution

    metadata = Distribution.from_directory(str(egg)).metadata
    return metadata.get_all("Requires-Dist", []), metadata.get_all("Provides-Extra", [])


def _ours(egg: Path) -> tuple[list[str], list[str]]:
    dist = load_distribution(MetadataDir(str(egg), str(egg.parent), "demo"), str(egg.parent), read_record=False)
    assert dist.metadata is not None
    return list(dist.metadata.requires_dist), list(dist.metadata.provides_extra)


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_the_same_requirements_and_extras_as_pip(tmp_path: Path, text: str) -> None:
    egg = _egg_info(tmp_path, text)
    assert _ours(egg) == _pip_reads(egg)


def test_requires_dist_in_pkg_info_wins_as_in_pip(tmp_path: Path) -> None:
    egg = _egg_info(tmp_path, "from-requires-txt\n", "Requires-Dist: from-pkg-info\n")
    assert _ours(egg) == _pip_reads(egg) == (["from-pkg-info"], [])


def test_an_extra_is_normalised_as_a_name() -> None:
    parsed = parse_requires_txt("[Socks_Proxy:python_version >= '3']\npysocks\n")
    assert parsed.requires_dist == ("pysocks ; (python_version >= '3') and extra == \"socks-proxy\"",)
    assert parsed.provides_extra == ("socks-proxy",)
