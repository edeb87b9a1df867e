"""The import probe: a standard-library script run inside a target interpreter, and the code that runs and reads it."""
