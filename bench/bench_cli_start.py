"""How long ``lockstep --help`` takes next to ``python -c pass`` (the issue's bound: 6×).

Runs each command N times, interleaved (pass, --help, --version, replay --help, pass, ...),
so that a busy machine slows them alike, and prints the median and the fastest wall time of
each with its ratio to ``python -c pass``; then what ``--help`` imports (``python -X
importtime``, the ten costliest modules).  Asserts nothing.

    python bench/bench_cli_start.py [--repeat 31] [--baseline-src DIR] [--write-results]

``--baseline-src DIR`` adds ``python -m lockstep --help`` run from another checkout's
``src`` folder (``git worktree add`` of an older commit), for a before/after comparison.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import write_section


def _lockstep() -> list[str]:
    script = shutil.which("lockstep")
    return [script] if script else [sys.executable, "-m", "lockstep"]


COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "lockstep --help": [*_lockstep(), "--help"],
    "lockstep --version": [*_lockstep(), "--version"],
    "lockstep replay --help": [*_lockstep(), "replay", "--help"],
}


BASELINE = "lockstep --help (baseline src)"


def _time(argv: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - started


def measure(repeat: int, baseline: Path | None) -> dict[str, list[float]]:
    commands = dict(COMMANDS)
    envs: dict[str, dict[str, str] | None] = {name: None for name in commands}
    if baseline is not None:
        commands[BASELINE] = [sys.executable, "-m", "lockstep", "--help"]
        envs[BASELINE] = dict(os.environ, PYTHONPATH=str(baseline.resolve()))
    times: dict[str, list[float]] = {name: [] for name in commands}
    for name, argv in commands.items():  # warm the file cache once
        _time(argv, envs[name])
    for _ in range(repeat):
        for name, argv in commands.items():
            times[name].append(_time(argv, envs[name]))
    return times


def imports_of_help() -> list[tuple[int, str]]:
    """The ten modules ``lockstep --help`` spends most import time in (cumulative µs)."""
    code = "import sys; sys.argv = ['lockstep', '--help']; from lockstep.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:10]


def table(times: dict[str, list[float]]) -> list[str]:
    base = statistics.median(times["python -c pass"])
    lines = [
        "| command | median | fastest | median ÷ `python -c pass` |",
        "|---|---:|---:|---:|",
    ]
    for name, xs in times.items():
        median = statistics.median(xs)
        lines.append(
            f"| `{name}` | {median * 1000:.1f} ms | {min(xs) * 1000:.1f} ms | {median / base:.2f}× |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    times = measure(args.repeat, args.baseline_src)
    rows = table(times)
    print("\n".join(rows))
    heavy = imports_of_help()
    print("\nlockstep --help, costliest imports (cumulative, -X importtime):")
    for micros, module in heavy:
        print(f"  {micros / 1000:7.1f} ms  {module.strip()}")
    if args.write_results:
        from importlib.metadata import version

        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        section = "\n".join(
            [
                "## CLI start-up",
                "",
                f"`python bench/bench_cli_start.py --repeat {args.repeat}"
                + (" --baseline-src OLD/src" if args.baseline_src else "")
                + "`: wall time of each command, interleaved runs"
                + (
                    "; the baseline is the commit before the lazy command list"
                    if args.baseline_src
                    else ""
                )
                + "; Python "
                f"{platform.python_version()}, click {version('click')}, {os.cpu_count()} "
                f"cores, load average {load:.1f} at the start.",
                "",
                *rows,
                "",
                "The root help lists the commands from one table in `lockstep.cli.app` and "
                "imports none of their modules; the `lockstep` package imports its public "
                "names on first use. Costliest imports of `lockstep --help` (cumulative, "
                "`-X importtime`, which inflates them): "
                + ", ".join(f"`{m.strip()}` {us / 1000:.1f} ms" for us, m in heavy[:5])
                + ".",
                "",
            ]
        )
        write_section("## CLI start-up", section)


if __name__ == "__main__":
    main()
