from seedpkg.ops import KERNEL as KERNEL
