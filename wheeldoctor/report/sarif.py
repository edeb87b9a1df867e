"""Cases -> a SARIF 2.1.0 log, for GitHub code scanning and other security dashboards.

One run; ``tool.driver.rules`` has one rule per code used, each self-contained (the log
may be read where no page of ours can be reached): short and full descriptions and, as its
help, what to do (:data:`~wheeldoctor.model.code_help.CODE_HELP`, as docs/codes.md says),
with ``security-severity`` (a 0-10 score GitHub ranks alerts by) and ``tags``. Each item
is a result whose location is the RECORD path relative to a ``uriBaseId`` naming its site
directory (``SITE0``, ``SITE1``... declared in ``originalUriBaseIds``), and whose
``partialFingerprints`` hash distribution, version, path, code and found digest, so the
same problem keeps its identity from run to run. A result that can be repaired carries
the command (or the accept rule to paste) in ``properties.repair`` and at the end of its
message; SARIF's ``fixes`` hold artifact edits only, and the repair is a command.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any
from urllib.parse import quote

from wheeldoctor.model.code_help import CodeHelp, code_help
from wheeldoctor.model.findings import Code
from wheeldoctor.report import inert
from wheeldoctor.report.cases import Case, Cases, Item

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT = "wheeldoctorFinding/v1"

#: What items without a WD code are, by their kind.
_OTHER_RULES = {
    "not-installed": CodeHelp(
        short="distribution not installed",
        full="A distribution named on the command line is not installed.",
        todo="Check the name, or install it.",
        severity=3.0,
        tags=("dependencies",),
    ),
    "clash": CodeHelp(
        short="wheels ship one path with different bytes",
        full="Two wheels install the same path with different bytes: whichever is installed last wins, file by file.",
        todo="Install only one of the two, or install them one after the other in the order the tip gives.",
        severity=6.0,
        tags=("security", "integrity"),
    ),
    "unrelated-pair": CodeHelp(
        short="unrelated distributions write the same paths",
        full="Two installed distributions, neither requiring the other, write the same paths: uninstalling either "
        "deletes the other's files.",
        todo="Keep one: the tip gives the commands for either choice.",
        severity=5.0,
        tags=("security", "integrity"),
    ),
    "overwrite": CodeHelp(
        short="wheel would replace another distribution's file",
        full="Installing the wheel would overwrite a file that another installed distribution records.",
        todo="Do not install both; if one is meant to lie on top of the other, make it require the other.",
        severity=6.0,
        tags=("security", "integrity"),
    ),
}


def document(cases: Cases) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    from wheeldoctor import __version__

    bases = {site: f"SITE{i}" for i, site in enumerate(dict.fromkeys(cases.sites))}
    for _, item in cases.items():
        if item.base is not None and item.base not in bases:
            bases[item.base] = f"SITE{len(bases)}"
    rule_ids = list(dict.fromkeys(item.rule for _, item in cases.items()))
    results = [_result(case, item, bases, rule_ids.index(item.rule)) for case, item in cases.items()]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "wheeldoctor",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(rule_id) for rule_id in rule_ids],
            }
        },
        "originalUriBaseIds": {
            base_id: {"uri": _directory_uri(site), "description": {"text": f"site directory {site}"}}
            for site, base_id in bases.items()
        },
        "invocations": [{"executionSuccessful": True, "properties": {"command": cases.command}}],
        "results": results,
        "properties": {"healthy": cases.healthy, "environment": cases.environment, "config": cases.config},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(cases: Cases) -> str:
    """The SARIF log, serialised."""
    return json.dumps(inert.document(document(cases)), indent=2, ensure_ascii=False) + "\n"


def _rule(rule_id: str) -> dict[str, Any]:
    try:
        meaning = code_help(Code(rule_id))
        name = Code(rule_id).name.title().replace("_", "")
    except ValueError:
        fallback = rule_id.replace("-", " ")
        meaning = _OTHER_RULES.get(rule_id, CodeHelp(short=fallback, full=fallback))
        name = rule_id.title().replace("-", "")
    todo = f" What to do: {meaning.todo}" if meaning.todo else ""
    rule: dict[str, Any] = {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": meaning.short},
        "fullDescription": {"text": meaning.full},
        "help": {
            "text": f"{rule_id}: {meaning.full}{todo}",
            "markdown": f"**{rule_id}**: {meaning.full}" + (f"\n\n**What to do**: {meaning.todo}" if todo else ""),
        },
        "properties": {"tags": list(meaning.tags)},
    }
    if meaning.severity:
        rule["properties"]["security-severity"] = f"{meaning.severity:.1f}"
    return rule


def _result(case: Case, item: Item, bases: dict[str, str], rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": item.rule,
        "ruleIndex": rule_index,
        "level": item.level,
        "message": {"text": f"{case.subject}: {item.line()}" + (f" Tip: {item.tip}" if item.tip else "")},
        "partialFingerprints": {FINGERPRINT: fingerprint(case, item)},
        "properties": {"distribution": case.name, "version": case.version, "check": case.suite, "kind": item.kind},
    }
    if item.tip:
        # A command, not an edit of the artifact: SARIF's ``fixes`` describe file replacements only.
        result["properties"]["repair"] = item.tip
    location: dict[str, Any] = {"logicalLocations": [{"name": case.name, "kind": "package"}]}
    if item.path is not None:
        if item.base is not None:
            artifact = {"uri": quote(_bytes(item.path)), "uriBaseId": bases[item.base]}
        else:
            artifact = {"uri": _file_uri(item.path)}
        location["physicalLocation"] = {"artifactLocation": artifact}
    result["locations"] = [location]
    return result


def fingerprint(case: Case, item: Item) -> str:
    """A digest of what identifies a problem across runs: distribution, version, path, code, found."""
    fields = (case.suite, case.name, case.version or "", item.path or "", item.rule, item.found or "")
    return hashlib.sha256("\0".join(fields).encode("utf-8", "surrogateescape")).hexdigest()


def _file_uri(path: str) -> str:
    return "file://" + quote(_bytes(os.path.abspath(path)))


def _bytes(path: str) -> bytes:
    """A path's bytes: undecodable names (surrogate escapes) percent-encode as the bytes they were."""
    return path.encode("utf-8", "surrogateescape")


def _directory_uri(path: str) -> str:
    uri = _file_uri(path)
    return uri if uri.endswith("/") else uri + "/"
