"""Judgement on data alone: claims and file states in, findings, statuses, clashes and verdicts out."""
