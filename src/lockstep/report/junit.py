"""Replay outcomes as JUnit XML, the format every CI server reads.

One ``<testsuite>`` per oracle, one ``<testcase>`` per case (``classname`` the oracle,
``name`` the case id).  A drift, a stale record, a new case nobody froze and a vanished
input are ``<failure>`` (each makes the replay red), carrying the same text the terminal
prints; a case that could not run is an ``<error>``.  Replay skips nothing, so no
``<skipped>`` is written.  The shape follows Jenkins' ``junit-10.xsd``, which GitLab,
GitHub and Azure reporters accept too.

Text from the project (outputs, ids) may hold characters XML 1.0 cannot carry at all
(NUL, most control characters); they are written as ``\\xNN`` so the file always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Final

from lockstep.model import Outcome, Status
from lockstep.report.terminal import outcome_text

_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_FAILURE_MESSAGE: Final = {
    Status.DRIFT: "behaviour drifted from the oracle",
    Status.STALE: "the oracle's record of this case is stale",
    Status.NEW: "new case: its behaviour is not frozen yet",
    Status.MISSING: "the case's input has disappeared",
}


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as ``\\xNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _message(outcome: Outcome) -> str:
    base = _FAILURE_MESSAGE.get(outcome.status, outcome.note or "could not run")
    if outcome.drifts:
        base += ": " + ", ".join(d.aspect for d in outcome.drifts)
    elif outcome.note and outcome.status is not Status.ERROR:
        base += f": {outcome.note}"
    return xml_safe(base)


def _testcase(suite: ET.Element, outcome: Outcome) -> tuple[int, int]:
    """Append the case; return (failures, errors) it adds."""
    case = ET.SubElement(
        suite,
        "testcase",
        {"classname": xml_safe(outcome.oracle), "name": xml_safe(outcome.case_id), "time": "0"},
    )
    if outcome.ok:
        return 0, 0
    tag = "error" if outcome.status is Status.ERROR else "failure"
    element = ET.SubElement(case, tag, {"type": outcome.status.value, "message": _message(outcome)})
    element.text = xml_safe(outcome_text(outcome).plain)
    return (0, 1) if tag == "error" else (1, 0)


def junit_xml(outcomes: Iterable[Outcome], *, seconds: float, name: str = "lockstep") -> bytes:
    """The whole report, UTF-8, with an XML declaration."""
    root = ET.Element("testsuites", {"name": xml_safe(name), "time": f"{seconds:.3f}"})
    suites: dict[str, ET.Element] = {}
    totals = {"tests": 0, "failures": 0, "errors": 0}
    per_suite: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        suite = suites.get(outcome.oracle)
        if suite is None:
            suite = suites[outcome.oracle] = ET.SubElement(
                root, "testsuite", {"name": xml_safe(outcome.oracle)}
            )
            per_suite[outcome.oracle] = {"tests": 0, "failures": 0, "errors": 0}
        failures, errors = _testcase(suite, outcome)
        for counts in (per_suite[outcome.oracle], totals):
            counts["tests"] += 1
            counts["failures"] += failures
            counts["errors"] += errors
    for oracle, suite in suites.items():
        counts = per_suite[oracle]
        for key in ("tests", "failures", "errors"):
            suite.set(key, str(counts[key]))
        suite.set("skipped", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"
