"""Locked wheels read from an index or a file: HTTP with bounds, ranged zip reads, their RECORDs."""
