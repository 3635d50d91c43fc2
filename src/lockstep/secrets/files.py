"""``lockstep scan``: secrets in files already on disk (oracle files, blobs, fixtures).

Recording refuses a secret before it is written; this is the check for what is
already committed (files recorded before the scan existed, fixtures written by hand),
for CI and pre-commit.  Each line of each file goes through the same detector and
allow-list as recording; a finding names the file, the line, the field (a JSON line's
key, ``args[0]``, ``stdout``...) and the detector -- never the value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from wcmatch import glob

from lockstep.config import Project
from lockstep.model import field_text
from lockstep.secrets.detect import decoded_views, detector, may_hold_secret, scan_text
from lockstep.secrets.policy import INLINE_ALLOW, SecretPolicy

MAX_FILE: Final = 64 * 1024 * 1024
"""Bigger files are read only up to here (an oracle file of more is itself a finding)."""


@dataclass(frozen=True, order=True)
class FileFinding:
    """One secret in one line of one file."""

    path: str
    line: int
    field: str
    detector: str

    def text(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.detector}"


def default_paths(project: Project, inputs: Iterable[str]) -> list[Path]:
    """The oracle folder and the files the oracles' configured inputs match."""
    found: list[Path] = []
    if project.oracle_dir.exists():
        found.append(project.oracle_dir)
    for pattern in inputs:
        matched = glob.glob(pattern, root_dir=str(project.root), flags=glob.GLOBSTAR)
        found.extend(project.root / m for m in sorted(matched))
    return found


def _files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
        elif path.is_file():
            yield path


def _json_line(line: str) -> Any:
    """A line that is a JSON object or array (a JSONL oracle file's row), else None."""
    if not line.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def _key_of(line: str) -> str:
    """The key of a pretty-printed JSON line (``  "stdout": ...``), else ``-``."""
    stripped = line.lstrip()
    if stripped.startswith('"'):
        end = stripped.find('":')
        if end > 0:
            return stripped[1:end]
    return "-"


def scan_file(path: Path, shown: str, policy: SecretPolicy) -> list[FileFinding]:
    """Every finding in one file."""
    with path.open("rb") as fh:
        data = fh.read(MAX_FILE)
    text = data.decode("utf-8", "replace")
    findings: set[FileFinding] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if INLINE_ALLOW in line:
            continue
        if policy.scrubber:  # a known value needs no gate: it is found as itself
            findings.update(
                FileFinding(shown, lineno, _key_of(line), f"value of {p}")
                for p in policy.scrubber.leaks(line)
            )
        findings.update(_encoded_findings(shown, lineno, line, policy))
        if not may_hold_secret(line):
            continue
        value = _json_line(line)
        if value is not None:  # a JSON line: scan its strings, and name the field
            findings.update(
                FileFinding(shown, lineno, field_text(f.path[1:]) or "value", f.detector)
                for f in policy.findings({"": value})
            )
            continue
        hits = [h for h in detector().scan_line(line) if h.secret_digest not in policy.allowed]
        leaks = [f"value of {p}" for p in policy.scrubber.leaks(line)]
        key = _key_of(line)
        findings.update(
            FileFinding(shown, lineno, key, d) for d in [h.detector for h in hits] + leaks
        )
    return sorted(findings)


def _encoded_findings(
    shown: str, lineno: int, line: str, policy: SecretPolicy
) -> Iterator[FileFinding]:
    """Secrets a line holds encoded once (base64, hex, URL-quoted): the detector's
    findings in each decoded view, named with the encoding (``GitHub Token (base64)``).
    A secret the line holds as it is, decoding did not reveal: the line's own reading
    judges it (a ledger's ``$bytes`` is read as the text it holds; its base64, seen
    quoted in the URL-unquoted line, was flagged as a high-entropy string in a ledger
    that recording had just written)."""
    for encoding, view in decoded_views(line):
        if not may_hold_secret(view):
            continue
        for lineno_in_view, hit in scan_text(view):
            if hit.secret_digest in policy.allowed:
                continue
            text = view.split("\n")[lineno_in_view - 1].rstrip("\r")
            values = [value for _, value in detector().secrets_in(text)]
            if values and all(value in line for value in values):
                continue
            yield FileFinding(shown, lineno, _key_of(line), f"{hit.detector} ({encoding})")


def scan_paths(paths: Iterable[Path], root: Path, policy: SecretPolicy) -> list[FileFinding]:
    """Every finding in the files under ``paths`` (shown relative to ``root`` when inside)."""
    findings: list[FileFinding] = []
    for path in _files(paths):
        try:
            shown = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = str(path)
        findings.extend(scan_file(path, shown, policy))
    return findings
