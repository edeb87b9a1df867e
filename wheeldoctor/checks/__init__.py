"""Judgements: files against RECORD, shared paths, requirements, duplicates, compatibility, repairs."""
