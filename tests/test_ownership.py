"""where/ownership.py: the first column of a RECORD, read fast, names what the full parser names."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import VenvFactory, WheelFactory, uv_install

from wheeldoctor.formats.record import decode_record
from wheeldoctor.where.environment import load_environment
from wheeldoctor.where.ownership import Owners, record_paths

H = "sha256=" + "A" * 43


@pytest.mark.parametrize(
    "text",
    [
        f"pkg/__init__.py,{H},1\npkg/core.py,{H},2\npkg-1.0.dist-info/RECORD,,\n",
        f"pkg/a.py,{H},1\r\npkg/__pycache__/a.cpython-311.pyc,,\r\n",
        f'"pkg/with,comma.py",{H},3\n"pkg/""quoted"".py",{H},4\npkg/plain.py,{H},5\n',
        f"pkg/a.py,{H},1\npkg/a.py,{H},1\nnot,enough\n\n",
    ],
)
def test_record_paths_are_the_paths_the_parser_lists(tmp_path: Path, text: str) -> None:
    (tmp_path / "RECORD").write_bytes(text.encode())
    assert set(record_paths(str(tmp_path))) == set(decode_record(text.encode()).listed)


def test_a_missing_record_names_nothing(tmp_path: Path) -> None:
    assert record_paths(str(tmp_path)) == []


def test_of_two_active_claimants_the_first_in_the_environments_order_owns_a_path(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path
) -> None:
    venv = venv_factory()
    # Two distributions claim shared/x.py: the map keeps the first one the environment lists.
    for name, files in (
        ("alpha", {"alpha/__init__.py": b"", "shared/x.py": b"a"}),
        ("beta", {"beta/__init__.py": b"", "beta/sub/y.py": b"", "shared/x.py": b"b"}),
    ):
        uv_install(venv, "--no-deps", wheel_factory(name, "1.0", files), uv_bin=uv_bin)
    env = load_environment("test", [str(venv.site_packages)], [str(venv.prefix)])
    shared = str(venv.site_packages / "shared" / "x.py")
    assert Owners(env).recorded[shared] is next(d for d in env.distributions if d.name in ("alpha", "beta"))
