"""Which device nodes and shared libraries belong to GPUs and other accelerators: data, not code.

A process that holds one of :data:`GPU_DEVICE_NODES` open has initialised that accelerator's
driver (the CUDA driver opens ``/dev/nvidiactl`` and ``/dev/nvidia0`` in ``cuInit``; merely
loading ``libcuda.so`` opens nothing). Callers, tests among them, pass extended tuples to
:func:`gpu_vendor` and :func:`is_gpu_runtime` to teach them more.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True, slots=True)
class DevicePattern:
    """A device node (shell-style pattern on the full path) and whose accelerator it is."""

    vendor: str
    pattern: str


@dataclass(frozen=True, slots=True)
class LibraryPattern:
    """A GPU runtime or driver library (shell-style pattern on the file name) and its vendor."""

    vendor: str
    pattern: str


#: Device nodes whose opening means an accelerator driver was initialised.
GPU_DEVICE_NODES: tuple[DevicePattern, ...] = (
    # NVIDIA: the control node and one node per GPU are opened by cuInit (and NVML).
    DevicePattern("nvidia", "/dev/nvidiactl"),
    DevicePattern("nvidia", "/dev/nvidia[0-9]*"),
    DevicePattern("nvidia", "/dev/nvidia-uvm"),
    DevicePattern("nvidia", "/dev/nvidia-uvm-tools"),
    DevicePattern("nvidia", "/dev/nvidia-caps/*"),
    # AMD ROCm: the compute driver; render nodes are also how Intel GPUs (and Intel Gaudi's
    # Xe path in hl-thunk) are reached.
    DevicePattern("amd", "/dev/kfd"),
    DevicePattern("dri", "/dev/dri/renderD*"),
    # The kernel's accel subsystem: Intel Gaudi (hl-thunk opens /dev/accel/accel%d and
    # accel_controlD%d), Intel NPU; and Gaudi's older habanalabs names.
    DevicePattern("accel", "/dev/accel/accel*"),
    DevicePattern("habana", "/dev/hl[0-9]*"),
    DevicePattern("habana", "/dev/hl_controlD*"),
    # Google TPU: /dev/accelN up to v4, VFIO groups from v5e on (as jax's hardware_utils reads them).
    DevicePattern("google-tpu", "/dev/accel[0-9]*"),
    DevicePattern("google-tpu", "/dev/vfio/[0-9]*"),
    # AWS Inferentia and Trainium.
    DevicePattern("aws-neuron", "/dev/neuron[0-9]*"),
    # Huawei Ascend.
    DevicePattern("huawei-ascend", "/dev/davinci[0-9]*"),
    DevicePattern("huawei-ascend", "/dev/davinci_manager"),
)

#: Shared libraries of GPU drivers and runtimes; loading one initialises nothing by itself.
GPU_RUNTIME_LIBRARIES: tuple[LibraryPattern, ...] = tuple(
    LibraryPattern(vendor, pattern)
    for vendor, patterns in (
        (
            "nvidia",
            (
                "libcuda.so*",
                "libcudart.so*",
                "libnvrtc*.so*",
                "libnvJitLink.so*",
                "libcublas.so*",
                "libcublasLt.so*",
                "libcudnn*.so*",
                "libcufft*.so*",
                "libcurand.so*",
                "libcusparse*.so*",
                "libcusolver*.so*",
                "libnccl.so*",
                "libnvidia-ml.so*",
                "libcupti.so*",
                "libnvToolsExt.so*",
                "libtorch_cuda*.so*",
                "libc10_cuda.so*",
                "*cuda_plugin*.so*",
            ),
        ),
        (
            "amd",
            (
                "libamdhip64.so*",
                "libhsa-runtime64.so*",
                "libhiprtc*.so*",
                "librocblas.so*",
                "libMIOpen*.so*",
                "librccl.so*",
                "librocm_smi64.so*",
                "libtorch_hip.so*",
            ),
        ),
        ("intel", ("libze_loader.so*", "libze_intel_gpu.so*", "libsycl.so*", "libOpenCL.so*")),
        ("habana", ("libhl-thunk.so*", "libSynapse.so*")),
        ("google-tpu", ("libtpu.so*",)),
        ("aws-neuron", ("libnrt.so*",)),
    )
    for pattern in patterns
)


def gpu_vendor(path: str, patterns: tuple[DevicePattern, ...] = GPU_DEVICE_NODES) -> str | None:
    """The vendor whose accelerator the device node ``path`` is, or None for any other device."""
    for p in patterns:
        if fnmatchcase(path, p.pattern):
            return p.vendor
    return None


def is_gpu_runtime(path: str, patterns: tuple[LibraryPattern, ...] = GPU_RUNTIME_LIBRARIES) -> bool:
    """Whether the shared library at ``path`` is a GPU driver's or runtime's (by its file name)."""
    name = posixpath.basename(path)
    return any(fnmatchcase(name, p.pattern) for p in patterns)
