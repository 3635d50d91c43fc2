"""Rank a package's public surface by how often the project's own suite calls it.

``lockstep init`` proposes a package's surface as one ledger, recorded from the test
suite; a member the suite never calls from outside the package gets no rows, so
nothing would catch a change to it.  Before proposing, init runs the suite once --
``python -m pytest`` in the project, exactly as ``pytest --lockstep-record`` will run
it -- with :mod:`.suite_plugin` counting calls of every function of the packages
(:class:`~lockstep.strength.calls.CallCounter`), then ranks each surface by the calls
from outside the package (the rows recording would see).

The run is a guest in the project: a time limit (its whole process tree is stopped
then), no bytecode or pytest cache written (so nothing lands in the package folder),
proxies pointing at a closed local port (so a test that reaches the network through
the usual client libraries fails fast instead of downloading), pytest-xdist held to one
process (the counts live in that process), pytest-cov's measurement off.  A suite that fails, collects nothing or
does not finish is a note; the ranking is then left out, never the proposal.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lockstep.process import RunResult, run
from lockstep.scaffold.suite_plugin import REQUEST_ENV
from lockstep.surface import Member, package_path, surface

DEFAULT_TIMEOUT: Final = 600.0
"""Seconds the suite may run under the counter before init stops it."""
NOWHERE: Final = "http://127.0.0.1:9"
"""The discard port: a proxy that refuses every connection at once."""
_PROXY_KEYS: Final = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_DROPPED_KEYS: Final = (
    "PYTEST_ADDOPTS",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
    "PYTEST_CURRENT_TEST",
    "COVERAGE_PROCESS_START",
    "no_proxy",
    "NO_PROXY",
)
OUTPUT_KEPT: Final = 64 * 1024 * 1024
"""Bytes of the suite's output per stream before it is stopped (a project's ``-v``)."""


@dataclass(frozen=True)
class MemberCalls:
    """One public member and how often the suite called it."""

    target: str
    """``pkg.mod:qualname``."""
    short: str
    """Its name inside the package (``parser.parse``)."""
    calls: int
    """Calls from outside the package (a test, another library): the rows a package
    ledger records before identical calls fold together; -1 when not known (its code is
    a wrapper other members run too)."""
    inner: int
    """Calls the package makes to it itself (not recorded by a package ledger)."""


@dataclass(frozen=True)
class SuiteCalls:
    """What one run of the suite said about each package's surface."""

    command: tuple[str, ...]
    ranked: Mapping[str, tuple[MemberCalls, ...]]
    """Package → its members, most called from outside first; empty when the run gave
    no counts (see ``notes``)."""
    notes: tuple[str, ...] = ()

    def called(self, package: str) -> tuple[MemberCalls, ...]:
        return tuple(m for m in self.ranked.get(package, ()) if m.calls)

    def never_called(self, package: str) -> tuple[MemberCalls, ...]:
        return tuple(m for m in self.ranked.get(package, ()) if not m.calls)


SHOWN_COMMAND: Final = ("python", "-m", "pytest")


def suite_command_shown() -> tuple[str, ...]:
    """The suite's command as the user would type it."""
    return SHOWN_COMMAND


def member_list(members: Sequence[MemberCalls], limit: int = 12) -> str:
    """``a, b, c … (+4)``: the short names of ``members``, at most ``limit`` of them."""
    names = ", ".join(m.short for m in members[:limit])
    return names + (f" … (+{len(members) - limit})" if len(members) > limit else "")


def suite_command(root: Path) -> list[str]:
    """``python -m pytest`` with the counting plugin, no cache, pytest-xdist (if the
    project's options start workers) held to this process and pytest-cov's measurement
    off (its tracer would slow the run, its threshold fail it)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "lockstep.scaffold.suite_plugin"]
    if importlib.util.find_spec("xdist") is not None:
        command += ["-n", "0"]
    if importlib.util.find_spec("pytest_cov") is not None:
        command += ["--no-cov"]  # a --cov-fail-under in the project's options would fail it
    return command


def _src_folder(root: Path, folders: Sequence[str]) -> Path | None:
    """``root/src`` when a package lives in it: a src layout not installed, whose suite
    finds the package only through the path (replay and recording put ``src`` on it
    themselves; so does this run, or its ranking would fail on the import alone)."""
    src = (root / "src").resolve()
    for folder in folders:
        if Path(folder).resolve().is_relative_to(src):
            return src
    return None


def _env(request: Path, src: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_KEYS}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    env.update(dict.fromkeys(_PROXY_KEYS, NOWHERE))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env[REQUEST_ENV] = str(request)
    return env


_ESCAPES: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""Terminal colour and cursor sequences, which a suite's ``addopts = "--color=yes"`` prints."""


def _last_line(output: bytes) -> str:
    """The line that says why: pytest's last ``error:`` line when there is one (a usage
    error ends with the ini file and rootdir, which say nothing), else its last line."""
    text = _ESCAPES.sub("", output.decode("utf-8", "replace"))  # a suite's --color=yes
    lines = [line.strip() for line in text.splitlines()]
    said = [line for line in lines if line]
    errors = [line for line in said if "error:" in line.lower()]
    return (errors or said or ["no output"])[-1]


def pytest_available() -> bool:
    return importlib.util.find_spec("pytest") is not None


def rank_by_suite(
    root: Path, packages: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT
) -> SuiteCalls:
    """Run the project's suite once in ``root`` and rank each of ``packages``' surfaces
    by its calls."""
    members: dict[str, list[Member]] = {p: surface(p, root, where=p) for p in packages}
    folders = [str(f) for p in packages if (f := package_path(p, root)) is not None]
    command = suite_command(root)
    shown = SHOWN_COMMAND
    if not pytest_available():
        return SuiteCalls(shown, {}, ("pytest is not installed here: the suite was not run",))
    with tempfile.TemporaryDirectory(prefix="lockstep-init-") as tmp:
        request = Path(tmp) / "request.json"
        answer = Path(tmp) / "answer.json"
        request.write_text(
            json.dumps(
                {
                    "watched": folders,
                    "packages": list(packages),
                    "members": [m.target for found in members.values() for m in found],
                    "answer": str(answer),
                }
            ),
            encoding="utf-8",
        )
        result = run(
            command,
            env=_env(request, _src_folder(root, folders)),
            cwd=root,
            timeout=timeout,
            max_output=OUTPUT_KEPT,
        )
        counts = _answer(answer)
    return _ranked(shown, members, counts, result, timeout)


def _answer(path: Path) -> dict[str, list[int]] | None:
    """The plugin's counts; None when it wrote none (or not whole: a run cut short)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _ranked(
    shown: tuple[str, ...],
    members: Mapping[str, list[Member]],
    counts: Mapping[str, list[int]] | None,
    result: RunResult,
    timeout: float,
) -> SuiteCalls:
    """The ranking, or the note saying why there is none."""
    tail = _last_line(result.stdout + result.stderr)
    code = result.exit_code
    if result.truncated_stream:
        why = f"the suite printed more than {OUTPUT_KEPT >> 20} MiB on {result.truncated_stream}"
        return SuiteCalls(shown, {}, (f"{why} (stopped): no ranking by calls",))
    if result.timed_out:
        why = f"the suite did not finish within {timeout:g}s (stopped)"
        return SuiteCalls(shown, {}, (f"{why}: no ranking by calls",))
    if code == 5:
        return SuiteCalls(shown, {}, (f"the suite collected no tests ({tail}): no ranking",))
    if code not in (0, 1) or counts is None:
        return SuiteCalls(
            shown, {}, (f"the suite could not run (exit {code}: {tail}): no ranking",)
        )
    notes = []
    if code == 1:
        notes.append(f"the suite has failing tests ({tail}): calls counted from what ran")
    ranked: dict[str, tuple[MemberCalls, ...]] = {}
    for package, found in members.items():
        rows = []
        for m in found:
            outside, total = counts.get(m.target, [0, 0])
            inner = total - outside if outside >= 0 else 0
            rows.append(MemberCalls(m.target, m.short(package), outside, inner))
        # the most called first, the members not told apart after them, then the uncalled
        ranked[package] = tuple(sorted(rows, key=lambda c: (c.calls == 0, -c.calls, -c.inner)))
    return SuiteCalls(shown, ranked, tuple(notes))


__all__ = [
    "DEFAULT_TIMEOUT",
    "MemberCalls",
    "SuiteCalls",
    "member_list",
    "pytest_available",
    "rank_by_suite",
    "suite_command_shown",
]
