"""The bytes on disk: hostile-file-safe reads, hashing by threads and forked workers, the verification cache."""
