"""Plain data every stage shares: findings and their codes, files as seen on disk. Imports nothing upward."""
