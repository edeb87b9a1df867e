"""The search path without running start-up code, against what a normal start builds.

Every comparison starts the real interpreter normally (``PY -c 'print(sys.path)'``) and
holds wheeldoctor's ``-I -S`` answer equal to it, entry for entry and in order, minus
exactly the entries that an ``import`` line of a .pth adds when it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import Venv, VenvFactory, WheelFactory, find_interpreter, make_venv, pip_install, run_checked, uv_install

from wheeldoctor.formats.pth import PthStream, PthTooLarge, parse_pth
from wheeldoctor.model.startup import Origin, Startup
from wheeldoctor.where import probe
from wheeldoctor.where.target import Target, TargetError, load_target, start_probe

VERSIONS = ("3.10", "3.11", "3.12", "3.13")


@pytest.fixture(autouse=True)
def own_user_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user base of this test's own, and no inherited variable that moves the search path."""
    base = tmp_path / "userbase"
    monkeypatch.setenv("PYTHONUSERBASE", str(base))
    for name in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME", "PYTHONSAFEPATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return base


def normal_path(python: Path | str) -> list[str]:
    """``sys.path`` of a normal start of ``python`` (its start-up code runs), without ``-c``'s entry."""
    code = "import json, sys; print(json.dumps(sys.path[1:]))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, check=True)
    paths: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return paths


def inspected(python: Path | str) -> Startup:
    """What wheeldoctor works out for ``--python python``."""
    startup = load_target(Target(python=str(python))).startup
    assert startup is not None
    assert startup.isolated
    return startup


def interpreter(version: str) -> Path:
    found = find_interpreter(version)
    if found is None:
        pytest.skip(f"no Python {version} here")
    return found


def editable_wheel(wheel_factory: WheelFactory, src: Path) -> Path:
    """A wheel shaped like an editable install through path lines (hatchling's, setuptools' compat mode)."""
    lines = f"{src}\n  \n# a comment\nrelative-dir\n{src}\n/no/such/dir\n"
    return wheel_factory("editme", "1.0", {"_editme.pth": lines.encode()})


def test_uv_venv_with_path_lines_matches_a_normal_start(
    venv_factory: VenvFactory, wheel_factory: WheelFactory, uv_bin: Path, tmp_path: Path
) -> None:
    venv = venv_factory()
    src = tmp_path / "src"
    src.mkdir()
    (venv.site_packages / "relative-dir").mkdir()
    uv_install(venv, "--no-deps", editable_wheel(wheel_factory, src), uv_bin=uv_bin)
    startup = inspected(venv.python)
    assert list(startup.paths) == normal_path(venv.python)
    added = {e.path: e for e in startup.entries if e.origin is Origin.PTH}
    assert set(added) == {str(src), str(venv.site_packages / "relative-dir")}
    assert added[str(src)].line == 1
    assert startup.not_run == ()


@pytest.mark.parametrize("version", VERSIONS)
def test_pip_venv_matches_a_normal_start(version: str, wheel_factory: WheelFactory, tmp_path: Path) -> None:
    python = interpreter(version)
    run_checked([python, "-m", "venv", "--without-pip", tmp_path / "venv"])
    venv_python = tmp_path / "venv" / "bin" / "python"
    site_packages = tmp_path / "venv/lib" / f"python{version}/site-packages"
    venv = Venv(tmp_path / "venv", venv_python, site_packages, venv_python.parent)
    src = tmp_path / "src"
    src.mkdir()
    pip_install(venv, "--no-deps", editable_wheel(wheel_factory, src))
    assert list(inspected(venv.python).paths) == normal_path(venv.python)


@pytest.mark.parametrize("version", VERSIONS)
def test_system_site_packages_and_user_site_match_a_normal_start(
    version: str, tmp_path: Path, own_user_base: Path
) -> None:
    python = interpreter(version)
    run_checked([python, "-m", "venv", "--without-pip", "--system-site-packages", tmp_path / "venv"])
    user_site = own_user_base / "lib" / f"python{version}" / "site-packages"
    user_site.mkdir(parents=True)
    (tmp_path / "from-user-pth").mkdir()
    (user_site / "mine.pth").write_text(f"{tmp_path / 'from-user-pth'}\n")
    startup = inspected(tmp_path / "venv" / "bin" / "python")
    expected = normal_path(tmp_path / "venv" / "bin" / "python")
    assert list(startup.paths) == expected
    assert str(user_site) in expected  # the user site is on, as with any system-site venv
    assert [d.path for d in startup.site_dirs if d.user] == [str(user_site)]
    # The base interpreter's own site-packages comes after the venv's and the user's.
    assert [d.user for d in startup.site_dirs][:2] == [False, True]


def test_user_site_of_a_plain_interpreter_and_pythonnousersite(
    tmp_path: Path, own_user_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = interpreter("3.12")
    user_site = own_user_base / "lib" / "python3.12" / "site-packages"
    user_site.mkdir(parents=True)
    assert list(inspected(python).paths) == normal_path(python)
    assert str(user_site) in inspected(python).paths
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    assert list(inspected(python).paths) == normal_path(python)
    assert str(user_site) not in inspected(python).paths


def test_a_venv_without_system_site_packages_has_no_user_site(venv_factory: VenvFactory, own_user_base: Path) -> None:
    venv = venv_factory()
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (own_user_base / "lib" / f"python{version}" / "site-packages").mkdir(parents=True)
    startup = inspected(venv.python)
    assert list(startup.paths) == normal_path(venv.python)
    assert not any(d.user for d in startup.site_dirs)


def test_pythonpath_applies_as_at_a_normal_start(
    venv_factory: VenvFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = venv_factory()
    (tmp_path / "rel").mkdir()
    # A relative part is taken from the working directory, an empty one is the directory itself,
    # a site directory named there keeps its place, and its .pth files are still read by site.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/no/such", "", "rel", str(venv.site_packages)]))
    (tmp_path / "via-pth").mkdir()
    (venv.site_packages / "x.pth").write_text(f"{tmp_path / 'via-pth'}\n")
    startup = inspected(venv.python)
    assert list(startup.paths) == normal_path(venv.python)
    assert [e.origin for e in startup.entries][:4] == [Origin.PYTHONPATH] * 4
    assert str(tmp_path / "via-pth") in startup.paths


def test_entries_only_an_import_line_adds_are_the_difference(venv_factory: VenvFactory, tmp_path: Path) -> None:
    venv = venv_factory()
    hidden = tmp_path / "added-by-code"
    hidden.mkdir()
    marker = tmp_path / "ran"
    pth = venv.site_packages / "sneaky.pth"
    code = f"import sys; sys.path.append({str(hidden)!r}); open({str(marker)!r}, 'w')"
    pth.write_text(f"# adds a directory by running code\n{code}\n")
    startup = inspected(venv.python)
    assert not marker.exists()  # the inspection ran nothing
    normal = normal_path(venv.python)
    assert marker.exists()  # the normal start did
    # site reads a venv's .pth files twice (once for the venv, once more for PREFIXES), so the
    # line runs twice and appends twice: everything else is identical and in order.
    assert normal[: len(startup.paths)] == list(startup.paths)
    assert set(normal[len(startup.paths) :]) == {str(hidden)}
    assert startup.not_run == ((str(pth), 2),)


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system interpreter")
def test_debian_dist_packages_match_a_normal_start() -> None:
    startup = inspected("/usr/bin/python3")
    assert list(startup.paths) == normal_path("/usr/bin/python3")
    if Path("/usr/lib/python3/dist-packages").is_dir():
        assert "/usr/lib/python3/dist-packages" in [d.path for d in startup.site_dirs]


@pytest.mark.network
def test_real_editable_installs_match_a_normal_start(tmp_path: Path, uv_bin: Path) -> None:
    # setuptools' editable finder (an import line) and a path line (src layout, hatchling).
    flat = tmp_path / "flat"
    (flat / "flatpkg").mkdir(parents=True)
    (flat / "flatpkg" / "__init__.py").write_text("")
    (flat / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "flatpkg"\nversion = "1.0"\n[tool.setuptools]\npackages = ["flatpkg"]\n'
    )
    srcproj = tmp_path / "srcproj"
    (srcproj / "src" / "srcpkg").mkdir(parents=True)
    (srcproj / "src" / "srcpkg" / "__init__.py").write_text("")
    (srcproj / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "srcpkg"\nversion = "1.0"\n[tool.hatch.build.targets.wheel]\npackages = ["src/srcpkg"]\n'
    )
    venv = make_venv(tmp_path / "venv", uv_bin=uv_bin)
    pip_install(venv, "--no-deps", "-e", flat, "-e", srcproj)
    startup = inspected(venv.python)
    assert list(startup.paths) == normal_path(venv.python)
    assert str(srcproj / "src") in startup.paths


@pytest.mark.parametrize("version", VERSIONS)
def test_pth_lines_run_exactly_as_site_runs_them(version: str, tmp_path: Path) -> None:
    python = interpreter(version)
    site_dir = tmp_path / "site"
    site_dir.mkdir()

    def runs(tag: str) -> str:
        return f"import sys; sys.stderr.write('ran:{tag}\\n')"

    files = {
        "a.pth": b"\xef\xbb\xbf" + runs("bom").encode() + b"\n",
        "b.pth": "\n".join(
            [
                runs("plain"),
                "import\t" + runs("tab")[len("import ") :],
                " " + runs("indented"),
                "#" + runs("comment"),
                "importsys",
                runs("cr") + "\r" + runs("after-cr"),
                runs("crlf") + "\r\n# x",
                "# form feed\x0c" + runs("after-ff"),
                "# line sep\u2028" + runs("after-ls"),
            ]
        ).encode(),
    }
    for name, data in files.items():
        (site_dir / name).write_bytes(data)
    # -S: site is imported without running; addsitedir then processes the .pth files for real.
    code = f"import site; site.addsitedir({str(site_dir)!r})"
    done = subprocess.run([str(python), "-S", "-c", code], capture_output=True, text=True, timeout=60, check=False)
    ran = {line.split(":", 1)[1] for line in done.stderr.splitlines() if line.startswith("ran:")}
    major, minor = (int(p) for p in version.split("."))
    ours = {
        line.text.split("'ran:")[1].split("\\n")[0]
        for data in files.values()
        for line in parse_pth(data, (major, minor)).executing
    }
    assert ours == ran
    assert {"plain", "tab", "cr", "after-cr", "crlf"} <= ran
    assert ("bom" in ran) == ((major, minor) >= (3, 13))


def test_a_probe_started_ahead_answers_as_one_started_late(venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    late = load_target(Target(python=str(venv.python)), with_tags=True)
    start_probe(Target(python=str(venv.python)), with_tags=True)
    start_probe(Target(python=str(venv.python)))  # another question: not the answer to the first
    assert sorted(key[1] for key in probe.started) == [False, True]
    ahead = load_target(Target(python=str(venv.python)), with_tags=True)
    assert [key[1] for key in probe.started] == [False]  # collected, and reaped by its `with`
    assert (ahead.startup, ahead.paths, ahead.prefixes, ahead.markers, ahead.tags, ahead.python) == (
        late.startup,
        late.paths,
        late.prefixes,
        late.markers,
        late.tags,
        late.python,
    )
    assert load_target(Target(python=str(venv.python))).tags is None
    assert not probe.started


def test_no_probe_is_started_for_what_cannot_run(tmp_path: Path) -> None:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\nexit 3\n")  # not executable
    for given in (Target(python=str(script)), Target(python="no-such-python-anywhere"), Target(paths=(str(tmp_path),))):
        start_probe(given)
    assert not probe.started
    with pytest.raises(TargetError, match="no such interpreter"):
        load_target(Target(python=str(script)))
    script.chmod(0o755)
    start_probe(Target(python=str(script)))
    with pytest.raises(TargetError, match="exited 3"):
        load_target(Target(python=str(script)))
    assert not probe.started


#: .pth texts whose line breaks the two readings split differently, with a BOM, CR, CRLF, U+2028, bad UTF-8.
STREAMED = [
    b"\xef\xbb\xbfimport os\r\n/a\rimport sys\n# c\n\n  \n/b\xc2\x85import x\n",
    b"/a\r\n\r\nimport a; b\xe2\x80\xa8import c\x0cimport d\x1e/e\n\xff\xfeimport z",
    b"import\tq\n\xef\xbb\xbfimport mid_bom\n" * 3 + b"/no/final/break",
]


@pytest.mark.unit
@pytest.mark.parametrize("data", STREAMED)
@pytest.mark.parametrize("version", [(3, 12), (3, 13)])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 64])
def test_a_pth_fed_in_chunks_gives_the_lines_of_the_whole(data: bytes, version: tuple[int, int], size: int) -> None:
    stream = PthStream(version, max_line=1 << 20, max_lines=1000)
    for start in range(0, len(data), size):
        stream.feed(data[start : start + size])
    assert stream.finish() == parse_pth(data, version)


@pytest.mark.unit
def test_a_streamed_pth_is_bounded() -> None:
    long_line = PthStream((3, 12), max_line=8, max_lines=10)
    with pytest.raises(PthTooLarge, match="a line over 8 bytes"):
        for _ in range(5):
            long_line.feed(b"#####")
    many = PthStream((3, 13), max_line=8, max_lines=2)
    with pytest.raises(PthTooLarge, match="over 2 lines"):
        many.feed(b"/a\n/b\nimport c\n")
