"""`replay --junit`: one testcase per case, valid against the schema CI servers use
(tests/schemas/junit-10.xsd, the structure of Jenkins' xUnit junit-10.xsd)."""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import invoke_cli
from lockstep.model import Drift, Outcome, Status
from lockstep.report.junit import junit_xml
from report_projects import HOSTILE_ID, hostile_red_project

SCHEMA_PATH = Path(__file__).parent / "schemas" / "junit-10.xsd"


@functools.cache
def _schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMA_PATH))


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return _schema()


def test_replay_junit_has_one_testcase_per_case_with_the_diff(
    tmp_path: Path, schema: xmlschema.XMLSchema
) -> None:
    root = hostile_red_project(tmp_path / "p")
    (root / "fixtures" / "unfrozen.json").write_text(
        '{"label": "g", "total": "1"}', encoding="utf-8"
    )
    result = invoke_cli("replay", "--junit", "reports/junit.xml", cwd=root)
    assert result.code == 1, result.output
    assert "junit: reports/junit.xml" in result.stdout
    xml_path = root / "reports" / "junit.xml"
    schema.validate(str(xml_path))
    tree = ET.parse(xml_path).getroot()
    (suite,) = tree.findall("testsuite")
    assert suite.get("name") == "ledger_lines"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"basic.json", HOSTILE_ID, "unfrozen.json"}
    assert all(c.get("classname") == "ledger_lines" for c in cases.values())
    types = {name: [(f.tag, f.get("type")) for f in case] for name, case in cases.items()}
    assert types == {
        "basic.json": [("failure", "drift")],
        HOSTILE_ID: [("failure", "drift")],
        "unfrozen.json": [("failure", "new")],
    }
    basic = cases["basic.json"].find("failure")
    assert basic is not None and "-total: 12.35\n    +total: 12.350" in (basic.text or "")
    assert tree.get("tests") == suite.get("tests") == "3"


def test_every_status_maps_to_failure_error_or_nothing(schema: xmlschema.XMLSchema) -> None:
    diff = "--- out (recorded)\n+++ out (now)\n@@ -1 +1 @@\n-total 0.13\n+total 0.12\n"
    outcomes = [
        Outcome("rows", "ok", Status.PASS),
        Outcome("rows", "moved", Status.DRIFT, (Drift("output", "a", "b", diff),)),
        Outcome("rows", "fresh", Status.NEW, note="not in the oracle"),
        Outcome("rows", "gone", Status.MISSING),
        Outcome("rows", "edited", Status.STALE, note="argv changed since record"),
        Outcome("pins", "crash", Status.ERROR, note="target no longer imports"),
    ]
    data = junit_xml(outcomes, seconds=1.25)
    schema.validate(data.decode("utf-8"))
    root = ET.fromstring(data)
    shape = {
        c.get("name"): [(child.tag, child.get("type")) for child in c]
        for c in root.iter("testcase")
    }
    assert shape == {
        "ok": [],
        "moved": [("failure", "drift")],
        "fresh": [("failure", "new")],
        "gone": [("failure", "missing")],
        "edited": [("failure", "stale")],
        "crash": [("error", "error")],
    }
    moved = root.find(".//testcase[@name='moved']/failure")
    assert moved is not None and moved.text is not None
    assert "-total 0.13\n    +total 0.12" in moved.text
    assert moved.get("message") == "behaviour drifted from the oracle: output"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert (suites["rows"].get("failures"), suites["rows"].get("errors")) == ("4", "0")
    assert (suites["pins"].get("failures"), suites["pins"].get("errors")) == ("0", "1")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "4", "1")


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1), st.text(), st.text())
def test_any_text_in_ids_notes_and_diffs_stays_valid_xml(
    case_id: str, note: str, diff: str
) -> None:
    schema = _schema()
    outcome = Outcome(case_id, case_id, Status.DRIFT, (Drift(note, note, diff, diff),), note=note)
    data = junit_xml([outcome, Outcome(note or "x", "e", Status.ERROR, note=diff)], seconds=0)
    schema.validate(data.decode("utf-8"))
