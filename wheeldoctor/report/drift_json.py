"""A drift (``wheeldoctor diff``) -> its versioned JSON document."""

from __future__ import annotations

import json
from typing import Any

from wheeldoctor.judge.drift import Drift

#: Bump the major part on any change that can break a reader; add fields freely.
SCHEMA_VERSION = "1.0"


def document(drift: Drift) -> dict[str, Any]:
    """``drift`` as a JSON object: the nodes, whether they agree, the odd ones, every difference."""
    labels = drift.labels
    return {
        "schema": "wheeldoctor-diff",
        "version": SCHEMA_VERSION,
        "snapshots": [{"file": label, "host": host} for label, host in zip(labels, drift.hosts, strict=True)],
        "agree": drift.agree,
        "odd": [labels[i] for i in drift.odd],
        "differences": [
            {
                "kind": d.kind.value,
                "subject": d.subject,
                "path": d.path,
                "reference": d.reference,
                "values": {labels[i]: v for i, (v, c) in enumerate(zip(d.values, d.compared, strict=True)) if c},
                "odd": [labels[i] for i in d.odd],
            }
            for d in drift.differences
        ],
    }


def render(drift: Drift) -> str:
    """The JSON text (ASCII: a name that is not UTF-8 keeps one spelling)."""
    return json.dumps(document(drift), indent=2, ensure_ascii=True) + "\n"
