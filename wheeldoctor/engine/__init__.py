"""How file states are obtained: hashing, the cache and memos, threads and forked workers."""
