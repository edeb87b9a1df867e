"""One module per command: pick the environment, run the checks, return one result value."""
