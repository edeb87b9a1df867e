"""Which environment: the interpreter, its site directories, and the distributions installed there."""
