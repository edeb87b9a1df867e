"""What one run of a command found: the values commands/ return and report/ renders. Plain data, no work."""
