"""Native libraries of real environments: objects built by gcc, in wheels installed by pip and uv.

The objects have constructors that write a marker file when loaded: every test ends by
checking that nothing loaded them (and one shows that loading one does write it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import Venv, VenvFactory, pip_install, uv_install
from native_objects import need_gcc
from native_stack import EXT, Stack, build_stack

from wheeldoctor.judge.native import judge_native
from wheeldoctor.judge.native_audit import NativeAudit
from wheeldoctor.judge.requirements import RequirementGraph
from wheeldoctor.model.findings import Code
from wheeldoctor.model.native import NativeScan, Provider, SharedObject
from wheeldoctor.where.loader import read_system
from wheeldoctor.where.native import scan_native
from wheeldoctor.where.target import Target, load_target


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Stack:
    need_gcc()
    return build_stack(tmp_path_factory.mktemp("native-stack"))


def scanned(venv: Venv) -> tuple[NativeScan, NativeAudit]:
    env = load_target(Target(python=str(venv.python)))
    scan = scan_native(env)
    audit = judge_native(scan, [(d.name, d.version) for d in env.active()], RequirementGraph.of(env).requires)
    return scan, audit


def one(scan: NativeScan, recorded_end: str) -> SharedObject:
    (found,) = [o for o in scan.objects if o.recorded.endswith(recorded_end)]
    return found


def codes(audit: NativeAudit) -> list[tuple[str, str]]:
    return sorted((f.subject, f.finding.code.value) for f in audit.findings)


def system_has(name: str) -> bool:
    """Whether this host's loader would find ``name`` itself: a test that needs it missing is then skipped."""
    system = read_system()
    return name in system.entries or any(Path(d, name).exists() for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64"))


def test_a_healthy_cuda_13_stack_is_found_where_torch_finds_it(stack: Stack, venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", stack.runtime13, stack.torch13)
    scan, audit = scanned(venv)
    ext = one(scan, f"wdtorch/_C{EXT}")
    assert ext.extension and ext.loaded
    needs = {n.name: n for n in ext.needs}
    assert needs["libcudart.so.13"].provider is Provider.ENVIRONMENT
    assert needs["libcudart.so.13"].owner == "wd-cuda-runtime" and needs["libcudart.so.13"].via == "RUNPATH"
    # CUDA 13 keeps cuSPARSE's .so.12 name: one major of each library, so nothing is mixed.
    assert needs["libcusparse.so.12"].owner == "wd-cuda-runtime"
    assert needs["libc.so.6"].provider is Provider.SYSTEM
    sparse = one(scan, "libcusparse.so.12")
    assert sparse.loaded and not sparse.extension
    assert audit.findings == () and audit.failing == ()
    assert not stack.marker.exists()


def test_two_majors_of_libcudart_are_reported_with_both_named(stack: Stack, venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    uv_install(venv, "--no-index", "--no-deps", stack.runtime12, stack.runtime13, stack.torch13, stack.nixl12)
    _, audit = scanned(venv)
    assert codes(audit) == [("libcudart", "WD092"), ("wd-cuda-runtime", "WD093")]
    (mixed,) = [f for f in audit.findings if f.finding.code is Code.CUDA_MAJORS_MIXED]
    message = mixed.finding.message
    assert message.startswith("majors 12 and 13 in one environment: ")
    assert "libcudart.so.12 from wd-cuda-runtime-cu12 12.8.90, needed by wdnixl (wdnixl/_ep" in message
    assert (
        "libcudart.so.13 from wd-cuda-runtime 13.0.96, needed by wd-cuda-runtime (nvidia/cu13/lib/libcusparse"
        in message
    )
    (builds,) = [f for f in audit.findings if f.finding.code is Code.CUDA_BUILDS_MIXED]
    assert "wd-cuda-runtime 13.0.96 (unsuffixed), wd-cuda-runtime-cu12 12.8.90 (cu12)" in builds.finding.message
    assert {f.finding.code for f in audit.failing} == {Code.CUDA_MAJORS_MIXED, Code.CUDA_BUILDS_MIXED}
    assert not stack.marker.exists()


def test_a_library_found_nowhere_is_reported_with_the_major_that_is_there(
    stack: Stack, venv_factory: VenvFactory
) -> None:
    if system_has("libcudart.so.12"):
        pytest.skip("this host's loader finds a libcudart.so.12 of its own")
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", stack.runtime13, stack.torch13, stack.nixl12)
    scan, audit = scanned(venv)
    assert one(scan, f"wdnixl/_ep{EXT}").needs[0].provider is Provider.UNRESOLVED
    (found,) = audit.failing
    assert (found.subject, found.version, found.finding.code) == ("wdnixl", "1.0", Code.LIBRARY_UNRESOLVED)
    assert found.finding.path == f"wdnixl/_ep{EXT}"
    assert found.finding.message == (
        "needs libcudart.so.12 (wd-cuda-runtime 13.0.96 provides libcudart.so.13: another major): found nowhere; "
        "it cannot load, and what imports it fails"
    )
    assert not stack.marker.exists()


def test_plugins_foreign_objects_and_rpath_chains(stack: Stack, venv_factory: VenvFactory) -> None:
    venv = venv_factory()
    pip_install(venv, "--no-index", "--no-deps", stack.plugins)
    scan, audit = scanned(venv)
    # The grafted library has no RPATH of its own: its need is found through the extension's, as glibc finds it.
    grafted = one(scan, "libwda-5e6f7a8b.so.1")
    assert grafted.loaded
    assert [(n.name, n.provider, n.via) for n in grafted.needs if n.name.startswith("libwdb")] == [
        ("libwdb-1a2b3c4d.so.1", Provider.ENVIRONMENT, "RPATH of a loader")
    ]
    foreign = one(scan, "libwd_arm64.so")
    assert foreign.foreign and foreign.needs == ()
    plugin = one(scan, "libwd_transport.so.3")
    assert not plugin.loaded and not plugin.extension
    assert codes(audit) == [("wdplugins", "WD091"), ("wdplugins", "WD094")]
    assert audit.failing == ()  # a plugin nothing needs, and an object that cannot be read: reported, not failing
    by_code = {f.finding.code: f.finding for f in audit.findings}
    assert by_code[Code.PLUGIN_UNRESOLVED].message == (
        "needs libwdgone.so.1: found nowhere; it cannot load here; nothing in the environment imports or needs it"
    )
    assert by_code[Code.SHARED_OBJECT_UNREADABLE].path == "wdplugins/lib/libwd_cut.so.1"
    assert not stack.marker.exists()


def test_the_marker_is_written_when_an_object_is_loaded(stack: Stack, tmp_path: Path) -> None:
    """The other tests' check is one that can fail: loading an object writes the marker."""
    marker = stack.marker
    assert not marker.exists()
    lib = stack.objects["libcudart.so.13"]
    try:
        subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(lib)!r})"], check=True)
        assert marker.read_text() == "libcudart.so.13\n"
    finally:
        marker.unlink(missing_ok=True)
