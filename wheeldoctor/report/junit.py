"""Cases -> JUnit XML, as GitLab and Jenkins read it.

One ``<testsuite>`` per check (``doctor`` has two: ``check`` and ``deps``), one
``<testcase>`` per judged distribution or wheel (``classname`` is its name), a
``<failure>`` listing its findings when it fails and ``<skipped>`` when it has only
warnings (unverifiable, accepted, shadowed). A healthy run keeps its passing cases.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from wheeldoctor.report import inert
from wheeldoctor.report.cases import Case, Cases

#: What XML 1.0 cannot hold at all, escaped or not: most C0 controls, lone surrogates
#: (undecodable file names arrive as surrogate escapes), U+FFFE and U+FFFF.
_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: str) -> str:
    """``value`` with each character XML forbids written as a visible ``\\xNN``/``\\uNNNN`` escape.

    Undecodable bytes read ``\\xNN`` as in every format (:func:`wheeldoctor.report.inert.data`).
    """
    return _FORBIDDEN.sub(lambda m: _escape(m.group()), inert.data(value))


def xml_attribute(value: str) -> str:
    """``value`` for an attribute: one line with controls and bidi characters escaped, as :func:`inert.text` does.

    GitLab and Jenkins show attributes (names, messages) as HTML text, where a bidi override would reorder them.
    """
    return xml_text(inert.text(value))


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def render(cases: Cases) -> str:
    """The whole JUnit document, UTF-8, with an XML declaration."""
    suites = list(dict.fromkeys(c.suite for c in cases.cases)) or [cases.command]
    root = ET.Element("testsuites", {"name": f"wheeldoctor {cases.command}"})
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for suite in suites:
        members = [c for c in cases.cases if c.suite == suite]
        element = ET.SubElement(root, "testsuite", {"name": f"wheeldoctor {suite}"})
        said = {"environment": cases.environment, "config": cases.config}
        if cases.environment is not None or cases.config is not None:
            properties = ET.SubElement(element, "properties")
            for name, text in said.items():
                if text is not None:
                    ET.SubElement(properties, "property", {"name": name, "value": xml_attribute(text)})
        counts = {"tests": len(members), "failures": 0, "skipped": 0}
        names: set[str] = set()
        for case in members:
            outcome = _testcase(element, case, _unique(case.subject, names))
            if outcome:
                counts[outcome] += 1
        element.attrib.update({k: str(v) for k, v in counts.items()} | {"errors": "0"})
        for key, value in counts.items():
            totals[key] += value
    root.attrib.update({k: str(v) for k, v in totals.items()} | {"errors": "0"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name} ({n})"
    taken.add(candidate)
    return candidate


def _testcase(suite: ET.Element, case: Case, name: str) -> str | None:
    """Add one testcase; returns ``failures``, ``skipped`` or None (passed)."""
    element = ET.SubElement(suite, "testcase", {"classname": xml_attribute(case.name), "name": xml_attribute(name)})
    if not case.items:
        return None
    lines = "\n".join(f"{i.level}: {inert.text(i.line())}" for i in case.items)  # one line per item
    codes = ",".join(dict.fromkeys(i.rule for i in case.items))
    if case.failing:
        errors = sum(i.level == "error" for i in case.items)
        message = f"{case.subject}: {case.status}: {errors} problem(s): {codes}"
        failure = ET.SubElement(element, "failure", {"message": xml_attribute(message), "type": xml_attribute(codes)})
        failure.text = xml_text(lines)
        return "failures"
    skipped = ET.SubElement(element, "skipped", {"message": xml_attribute(f"{case.subject}: {case.status}: {codes}")})
    skipped.text = xml_text(lines)
    return "skipped"
