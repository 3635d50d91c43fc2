"""The secret scan imports detect-secrets without ``requests``, and finds the same.

detect-secrets imports ``requests`` in each plugin's module for verifying a finding with
its service, which lockstep never does; importing it (and ``urllib3``, ``idna``...) was
most of the scan's cost in a recording whose one suspicious row opened a gate.  Each case
runs in a fresh interpreter: what is imported is a property of the whole process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SCAN = """
import json, sys
{before}
from lockstep.secrets.detect import scan_text
from secret_vectors import vectors
found = {{kind: [[n, h.detector, h.secret_digest] for n, h in scan_text(line)]
         for kind, (_, line) in sorted(vectors().items())}}
loaded = sorted(m for m in ("requests", "urllib3", "idna", "charset_normalizer")
                if m in sys.modules)
{after}
print(json.dumps({{"found": found, "loaded": loaded, "after": after}}))
"""


def _scan(before: str = "", after: str = "after = None") -> dict[str, object]:
    code = SCAN.format(before=before, after=after)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout)
    return out


def test_a_scan_that_opens_every_gate_imports_no_requests_and_finds_the_same() -> None:
    deferred = _scan()
    assert deferred["loaded"] == []
    found = deferred["found"]
    assert isinstance(found, dict) and len(found) >= 20
    assert all(found.values()), "every vector is found"
    plain = _scan(before="import requests")  # already imported: detect-secrets uses it as is
    assert plain["loaded"] != []
    assert plain["found"] == found


def test_requests_imported_after_a_scan_is_the_real_module_everywhere() -> None:
    after = """
import requests
import detect_secrets.plugins.base as base
after = [requests.__name__, hasattr(requests, "get"),
         base.requests.exceptions.RequestException is requests.exceptions.RequestException,
         sys.modules["requests"] is requests]
"""
    out = _scan(after=after)
    assert out["loaded"] == []
    assert out["after"] == ["requests", True, True, True]


def test_a_scan_no_gate_opens_for_never_imports_detect_secrets() -> None:
    code = """
import json, sys
from lockstep.secrets.detect import detector, scan_text
found = [scan_text('["' + "A" * 80 + '"]'), list(detector().scan_line("'" + "A" * 80 + "'"))]
print(json.dumps([found, "detect_secrets" in sys.modules]))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=TESTS, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [[[], []], False]
