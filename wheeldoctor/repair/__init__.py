"""One repair plan, built from findings: typed steps that the text, fix and CI formats render."""
