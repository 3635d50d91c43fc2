"""What installing lockstep costs a project that does not use it.

Builds two virtual environments: one with pytest only, one with pytest and lockstep
installed as ``pip install .`` installs it (no extras). In each, an unrelated project with
one test runs ``pytest --collect-only`` (lockstep's plugin loads through its entry point
there, with no ``--lockstep`` option), interleaved, and the fastest and median wall times
are printed side by side. ``python -X importtime`` then names the modules lockstep's
plugin (and anything it pulls in) imported, largest first. It also times
``lockstep --help`` next to ``python -c pass``.

    python bench/bench_plugin_cost.py [--repeat 15] [--venvs DIR] [--python python3]

``--venvs DIR`` keeps the environments in DIR and reuses them on the next run.
Figures depend on the machine's load: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST = "def test_one():\n    assert 1 + 1 == 2\n"
GOAL = 1.25


def _venv(where: Path, python: str, packages: list[str]) -> Path:
    bin_python = where / "bin" / "python"
    if not bin_python.exists():
        subprocess.run([python, "-m", "venv", str(where)], check=True)
        subprocess.run(
            [str(bin_python), "-m", "pip", "install", "-q", *packages],
            check=True,
        )
    return bin_python


def _time(argv: list[str], cwd: Path) -> float:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "LOCKSTEP_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _imports(python: Path, cwd: Path) -> list[tuple[int, str]]:
    """Top-level imports by cumulative microseconds, from ``-X importtime``."""
    proc = subprocess.run(
        [str(python), "-X", "importtime", "-m", "pytest", "--collect-only", "-q"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):
            found.append((int(cumulative), name.strip()))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--venvs", type=Path, default=None)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="plugin-cost-") as scratch:
        venvs = args.venvs or Path(scratch)
        venvs.mkdir(parents=True, exist_ok=True)
        bare = _venv(venvs / "pytest-only", args.python, ["pytest"])
        with_lockstep = _venv(venvs / "with-lockstep", args.python, ["pytest", str(ROOT)])
        project = Path(scratch) / "project"
        project.mkdir()
        (project / "test_one.py").write_text(TEST, encoding="utf-8")

        collect = ["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        for python in (bare, with_lockstep):  # warm the file cache and the .pyc files
            _time([str(python), *collect], project)
        times: dict[str, list[float]] = {"pytest only": [], "with lockstep": []}
        for _ in range(args.repeat):
            times["pytest only"].append(_time([str(bare), *collect], project))
            times["with lockstep"].append(_time([str(with_lockstep), *collect], project))

        lockstep = str(with_lockstep.parent / "lockstep")
        help_times: dict[str, list[float]] = {"python -c pass": [], "lockstep --help": []}
        for _ in range(args.repeat):
            help_times["python -c pass"].append(_time([str(with_lockstep), "-c", "pass"], project))
            help_times["lockstep --help"].append(_time([lockstep, "--help"], project))

        print(f"pytest --collect-only on a one-test project, {args.repeat} runs each (seconds)")
        print(f"{'':16}{'fastest':>9}{'median':>9}")
        for label, values in times.items():
            print(f"{label:16}{min(values):9.3f}{statistics.median(values):9.3f}")
        ratio = min(times["with lockstep"]) / min(times["pytest only"])
        verdict = "met" if ratio <= GOAL else "NOT met"
        print(f"with lockstep / pytest only (fastest): {ratio:.2f}x (goal <= {GOAL}x: {verdict})")
        print()
        print(f"{'':16}{'fastest':>9}{'median':>9}")
        for label, values in help_times.items():
            print(f"{label:16}{min(values):9.3f}{statistics.median(values):9.3f}")
        help_ratio = min(help_times["lockstep --help"]) / min(help_times["python -c pass"])
        print(f"lockstep --help / python -c pass (fastest): {help_ratio:.1f}x (goal <= 6x)")
        print()
        bare_names = {name for _, name in _imports(bare, project)}
        extra = [(t, n) for t, n in _imports(with_lockstep, project) if n not in bare_names]
        extra.sort(reverse=True)
        print("top-level imports only the lockstep environment makes (cumulative ms):")
        for cumulative, name in extra[:12]:
            print(f"  {cumulative / 1000:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
