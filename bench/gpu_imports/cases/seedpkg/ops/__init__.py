"""Re-exports the kernel eagerly, as seed 000's package did: importing seedpkg initialises CUDA."""

from seedpkg.ops.cutedsl_kernel import KERNEL as KERNEL
