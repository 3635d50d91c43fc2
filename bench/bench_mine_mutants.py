"""Mutant-guided mining next to the differential gate, on one subject.

Run ``python bench/bench_mine_mutants.py [--generate 2000] [--time-limit 60]``.

The subject is the example project of ``tests/test_mine_survivors.py`` (two ledgers
whose recorded calls take every branch, and three value-level changes they cannot
see), in a real temporary git repository.  It prints, side by side:

* ``lockstep mine`` with mutants (the default) and with ``--no-mutants``: rows kept per
  second, mutants killed per minute (the ones the recorded rows miss), and how many of
  the three changes a plain ``lockstep replay`` of the mined ledgers then catches;
* ``lockstep replay --against HEAD~1 --generate N`` run once per change (the change
  committed on top of the legacy code): inputs per second, and changes caught per
  minute.

``mine`` pays once and leaves rows that catch every later change in a plain replay;
``--against`` pays per change.  It asserts nothing: the figures vary with the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_mine_survivors import CHANGES, CONFIG, DRIVER, PARSE, TEXT  # noqa: E402

ORACLES = ("parse_percent", "abbreviate")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("LOCKSTEP_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path) -> None:
    import textwrap

    files = {
        "units/__init__.py": "",
        "units/text.py": TEXT,
        "units/parse.py": PARSE,
        "drive.py": DRIVER,
        "lockstep.toml": CONFIG,
        ".gitignore": "__pycache__/\n.lockstep-cache/\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "b@example.invalid")
    _git(root, "config", "user.name", "bench")
    assert _run(root, "record").returncode == 0
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "legacy")


def _changed(root: Path, change: tuple[str, str, str]) -> str:
    rel, old, new = change
    original = (root / rel).read_text()
    (root / rel).write_text(original.replace(old, new))
    return original


def _caught_by_replay(root: Path) -> int:
    caught = 0
    for change in CHANGES.values():
        original = _changed(root, change)
        try:
            caught += _run(root, "replay").returncode == 1
        finally:
            (root / change[0]).write_text(original)
    return caught


def _mine(root: Path, time_limit: str, *extra: str) -> tuple[float, int, int]:
    """Seconds, rows added and mutants killed by mining every oracle."""
    seconds, rows, killed = 0.0, 0, 0
    for name in ORACLES:
        start = time.perf_counter()
        done = _run(root, "mine", name, "--time-limit", time_limit, *extra)
        seconds += time.perf_counter() - start
        assert done.returncode == 0, done.stdout + done.stderr
        rows += int(re.search(r"added (\d+) row", done.stdout).group(1))  # type: ignore[union-attr]
        found = re.search(r"the mined inputs (\d+) of", done.stdout)
        killed += int(found.group(1)) if found else 0
    return seconds, rows, killed


def _against(root: Path, generate: int) -> tuple[float, int, int]:
    """Seconds, inputs compared and changes caught by one --against run per change."""
    seconds, inputs, caught = 0.0, 0, 0
    for change in CHANGES.values():
        _changed(root, change)
        _git(root, "commit", "-q", "-am", "change")
        start = time.perf_counter()
        done = _run(root, "replay", "--against", "HEAD~1", "--generate", str(generate))
        seconds += time.perf_counter() - start
        caught += done.returncode == 1
        counted = re.findall(r"(\d+) input\(s\)", done.stdout)
        inputs += sum(int(n) for n in counted)
        _git(root, "reset", "-q", "--hard", "HEAD~1")
    return seconds, inputs, caught


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generate", type=int, default=2000)
    parser.add_argument("--time-limit", default="60")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        _project(base)
        rows_of: dict[str, tuple[float, int, int, int]] = {}
        for label, extra in (("mine", ()), ("mine --no-mutants", ("--no-mutants",))):
            root = Path(tmp) / label.replace(" ", "_")
            shutil.copytree(base, root)
            seconds, rows, killed = _mine(root, args.time_limit, *extra)
            rows_of[label] = (seconds, rows, killed, _caught_by_replay(root))
        root = Path(tmp) / "against"
        shutil.copytree(base, root)
        against = _against(root, args.generate)

    total = len(CHANGES)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {total} value-level changes")
    for label, (seconds, rows, killed, caught) in rows_of.items():
        print(
            f"{label:<22} {rows / seconds:8.2f} rows kept/s   {killed * 60 / seconds:8.1f} "
            f"mutants killed/min   {rows} rows in {seconds:.1f} s; "
            f"a plain replay then catches {caught}/{total} changes"
        )
    seconds, inputs, caught = against
    print(
        f"{'replay --against':<22} {inputs / seconds:8.1f} inputs/s       "
        f"{caught * 60 / seconds:8.1f} changes caught/min   "
        f"--generate {args.generate}, one run per change, {seconds:.1f} s: catches {caught}/{total}"
    )


if __name__ == "__main__":
    main()
