"""A drift (``wheeldoctor diff``) -> its versioned JSON document (docs/schema/diff.schema.json).

Two views of the same differences: ``differences``, one per aspect with every node's value,
and ``nodes``, one per node that differs with what it has against whom. Values are strings
(a version, a digest, an installer) or objects (an interpreter, platform tags, a hook, the
unowned files), never prose.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from wheeldoctor.judge.drift import Difference, Drift, DriftKind, Value

#: Bump the major part on any change that can break a reader; add fields freely.
SCHEMA_VERSION = "2.0"


def value(found: Value | None) -> Any:
    """A value as JSON: a string as it is, a record as an object (its tuples as lists), None as null."""
    if found is None or isinstance(found, str):
        return found
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(found).items()}


def change(difference: Difference, index: int) -> str:
    """What one node's difference is, in one word: ``missing``, ``extra``, ``version``, or the kind itself."""
    if difference.kind in (DriftKind.DISTRIBUTION, DriftKind.HOOK):
        if difference.values[index] is None:
            return "missing"
        if difference.reference is None:
            return "extra"
        return "version" if difference.kind is DriftKind.DISTRIBUTION else "changed"
    return str(difference.kind.value)


def document(drift: Drift) -> dict[str, Any]:
    """``drift`` as a JSON object: the nodes, whether they agree, the odd ones, the differences by aspect and node."""
    labels = drift.labels
    return {
        "schema": "wheeldoctor-diff",
        "version": SCHEMA_VERSION,
        "snapshots": [{"file": label, "host": host} for label, host in zip(labels, drift.hosts, strict=True)],
        "reference": None if drift.reference is None else labels[drift.reference],
        "agree": drift.agree,
        "odd": [labels[i] for i in drift.odd],
        "ignored": drift.ignored,
        "differences": [
            {
                "kind": d.kind.value,
                "subject": d.subject,
                "path": d.path,
                "reference": value(d.reference),
                "values": {labels[i]: value(v) for i, (v, c) in enumerate(zip(d.values, d.compared, strict=True)) if c},
                "odd": [labels[i] for i in d.odd],
            }
            for d in drift.differences
        ],
        "nodes": [
            {
                "file": labels[i],
                "host": drift.hosts[i],
                "changes": [
                    {
                        "kind": d.kind.value,
                        "change": change(d, i),
                        "subject": d.subject,
                        "path": d.path,
                        "value": value(d.values[i]),
                        "reference": value(d.reference),
                    }
                    for d in differences
                ],
            }
            for i, differences in drift.by_node()
        ],
    }


def render(drift: Drift) -> str:
    """The JSON text (ASCII); a name's undecodable bytes read ``\\xNN``, as in every format (report/inert.py)."""
    from wheeldoctor.report import inert

    return json.dumps(inert.document(document(drift)), indent=2, ensure_ascii=True) + "\n"
