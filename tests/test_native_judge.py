"""The native judge on data alone: what cannot load, CUDA majors and builds mixed, the driver's libraries."""

from __future__ import annotations

import pytest

from wheeldoctor.judge.native import cuda_major, is_driver_library, judge_native
from wheeldoctor.judge.native_builds import cuda_variant
from wheeldoctor.model.findings import Code
from wheeldoctor.model.native import ElfObject, ElfProblem, NativeScan, Need, Provider, SharedObject

pytestmark = pytest.mark.unit

X86_64 = (64, True, 62)


def obj(
    recorded: str,
    owner: str,
    *needs: Need,
    loaded: bool = True,
    soname: str | None = None,
    foreign: bool = False,
    problem: ElfProblem | None = None,
) -> SharedObject:
    elf = None if problem else ElfObject(bits=64, little_endian=True, machine=62, type=3, soname=soname)
    return SharedObject(
        path=f"/site/{recorded}",
        recorded=recorded,
        owner=owner,
        version="1.0",
        location="/site",
        elf=elf,
        problem=problem,
        foreign=foreign,
        extension=loaded,
        loaded=loaded,
        needs=needs,
    )


def env_need(name: str, owner: str) -> Need:
    return Need(name=name, provider=Provider.ENVIRONMENT, path=f"/site/lib/{name}", owner=owner, via="RUNPATH")


def missing(name: str) -> Need:
    return Need(name=name, provider=Provider.UNRESOLVED)


def judge(
    *objects: SharedObject, installed: tuple[tuple[str, str], ...] = (), requires=lambda a, b: False, strict=False
):  # type: ignore[no-untyped-def]
    scan = NativeScan(arch=X86_64, objects=objects, cache="/etc/ld.so.cache")
    return judge_native(scan, installed, requires, strict=strict)


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("libcudart.so.12", ("libcudart", "12")),
        ("libcublasLt.so.13", ("libcublasLt", "13")),
        ("libcudnn_ops.so.9", ("libcudnn_ops", "9")),
        ("libnvrtc-builtins.so.13.0", ("libnvrtc-builtins", "13")),
        ("libnccl.so.2", ("libnccl", "2")),
        ("libcufft.so.11", ("libcufft", "11")),
        ("libcudart.so", None),  # no major
        ("libcuda.so.1", None),  # the driver's
        ("libnvidia-ml.so.1", None),  # the driver's
        ("libstdc++.so.6", None),  # not CUDA's
    ],
)
def test_cuda_libraries_and_their_majors(name: str, parsed: tuple[str, str] | None) -> None:
    assert cuda_major(name) == parsed


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("nvidia-cublas-cu12", ("nvidia-cublas", "cu12")),
        ("nvidia-cutlass-dsl-libs-cu13", ("nvidia-cutlass-dsl-libs", "cu13")),
        ("cupy-cuda12x", ("cupy", "cuda12x")),
        ("jax-cuda12-plugin", ("jax-plugin", "cuda12")),
        ("nvidia-cuda-runtime", None),
        ("cuda-python", None),
        ("torch", None),
    ],
)
def test_cuda_variants_of_distribution_names(name: str, parsed: tuple[str, str] | None) -> None:
    assert cuda_variant(name) == parsed


def test_the_rule_is_per_library_not_per_toolkit() -> None:
    # CUDA 13: libcudart.so.13 beside cuSPARSE's and cuFFT's .so.12: one major of each library.
    healthy = judge(
        obj(
            "torch/_C.so",
            "torch",
            env_need("libcudart.so.13", "nvidia-cuda-runtime"),
            env_need("libcusparse.so.12", "nvidia-cusparse"),
            env_need("libcufft.so.12", "nvidia-cufft"),
        )
    )
    assert healthy.findings == ()
    # cuFFT 11 (CUDA 12's) and 12 (CUDA 13's) both needed: mixed.
    mixed = judge(
        obj("torch/_C.so", "torch", env_need("libcufft.so.12", "nvidia-cufft")),
        obj(
            "jaxlib/x.so",
            "jaxlib",
            Need(name="libcufft.so.11", provider=Provider.SYSTEM, path="/usr/lib/libcufft.so.11"),
        ),
        installed=(("nvidia-cufft", "12.0.0"),),
    )
    (finding,) = mixed.findings
    assert (finding.subject, finding.finding.code) == ("libcufft", Code.CUDA_MAJORS_MIXED)
    assert finding.finding.message == (
        "majors 11 and 12 in one environment: libcufft.so.11 from the system (/usr/lib/libcufft.so.11), "
        "needed by jaxlib (jaxlib/x.so); libcufft.so.12 from nvidia-cufft 12.0.0, needed by torch (torch/_C.so)"
    )


def test_only_majors_that_are_needed_count() -> None:
    # Two builds a wheel opens by path at run time (triton's two libcupti): nothing needs either by name.
    audit = judge(
        obj("triton/lib/cupti/libcupti.so.12", "triton", soname="libcupti.so.12", loaded=False),
        obj("triton/lib/cupti-blackwell/libcupti.so.13", "triton", soname="libcupti.so.13", loaded=False),
    )
    assert audit.findings == ()


def test_an_unresolved_need_fails_where_an_import_loads_it_and_only_warns_in_a_plugin() -> None:
    audit = judge(
        obj("nixl/_ep.so", "nixl", missing("libcudart.so.12"), env_need("libc.so.6", "x")),
        obj("nvidia/cu13/lib/libcudart.so.13", "nvidia-cuda-runtime", soname="libcudart.so.13", loaded=False),
        obj(
            "nvshmem/lib/transport.so.3",
            "nvidia-nvshmem-cu13",
            missing("libmlx5.so.1"),
            missing("libibverbs.so.1"),
            loaded=False,
        ),
        installed=(("nvidia-cuda-runtime", "13.0.96"),),
    )
    assert [(f.subject, f.finding.code) for f in audit.findings] == [
        ("nixl", Code.LIBRARY_UNRESOLVED),
        ("nvidia-nvshmem-cu13", Code.PLUGIN_UNRESOLVED),
    ]
    assert "libcudart.so.12 (nvidia-cuda-runtime 13.0.96 provides libcudart.so.13: another major)" in (
        audit.findings[0].finding.message
    )
    assert audit.findings[1].finding.message.startswith("needs libmlx5.so.1, libibverbs.so.1: found nowhere;")
    assert [f.subject for f in audit.failing] == ["nixl"]


def test_the_drivers_libraries_are_no_finding_and_are_summed_up_as_the_drivers() -> None:
    assert is_driver_library("libcuda.so.1") and is_driver_library("libnvidia-ml.so.1")
    assert not is_driver_library("libcudart.so.12")
    audit = judge(obj("cupy/driver.so", "cupy-cuda12x", missing("libcuda.so.1")))
    assert audit.findings == ()
    assert [(s.provider, s.library, s.needed_by) for s in audit.sources] == [("driver", "libcuda.so.1", 1)]


def test_foreign_objects_are_not_judged() -> None:
    audit = judge(obj("debugpy/attach_x86.so", "debugpy", missing("libwhatever.so.1"), foreign=True))
    assert audit.findings == () and audit.sources == ()


def test_an_unreadable_object_fails_only_under_strict() -> None:
    broken = obj("x/lib.so", "x", problem=ElfProblem("the dynamic segment: beyond the end of the file"))
    assert [f.finding.code for f in judge(broken).findings] == [Code.SHARED_OBJECT_UNREADABLE]
    assert judge(broken).failing == ()
    assert len(judge(broken, strict=True).failing) == 1


def test_builds_for_two_cuda_variants_unless_one_requires_the_other() -> None:
    installed = (
        ("nvidia-cutlass-dsl-libs-base", "4.5.0"),
        ("nvidia-cutlass-dsl-libs-cu13", "4.5.0"),
        ("nvidia-nccl-cu12", "2.27.3"),
        ("nvidia-nccl-cu13", "2.30.7"),
        ("cupy-cuda12x", "13.6.0"),
    )

    def requires(a: str, b: str) -> bool:  # the cu13 libs overlay their base, as the real ones do
        return (a, b) == ("nvidia-cutlass-dsl-libs-cu13", "nvidia-cutlass-dsl-libs-base")

    audit = judge(installed=installed, requires=requires)
    (finding,) = audit.findings
    assert (finding.subject, finding.finding.code) == ("nvidia-nccl", Code.CUDA_BUILDS_MIXED)
    assert finding.finding.message.endswith("nvidia-nccl-cu12 2.27.3 (cu12), nvidia-nccl-cu13 2.30.7 (cu13)")
    # Without the overlay's requirement, base and cu13 are two builds side by side.
    unrelated = judge(installed=installed[:2])
    assert [f.subject for f in unrelated.findings] == ["nvidia-cutlass-dsl-libs"]
    assert "(base)" in unrelated.findings[0].finding.message
