"""What each part of ``pytest --lockstep-record`` adds to a library's suite, phase by phase.

For each library folder given (as ``bench_suite_record.py`` takes them: an unpacked sdist
with its tests and a ``lockstep.toml``), alternating ``--rounds`` times: the plain suite,
the recording, the recording without the further hash seeds (no row a seed suspect, no
further seed's interpreter started), and the recording without any verification (no row
replayed before it is written), each timed phase by phase by the ``bench_suite_timeline``
plugin from just before pytest starts to its process's end; the medians, and each run's
total against the plain suite's.  The two runs with a part switched off
(``bench_suite_without.py``) write what lockstep would not: they measure what the part
costs, never what a user gets.

    python bench/bench_suite_parts.py LIBDIR [LIBDIR ...] [--rounds 7] [--cached-bytecode]

Run it on a quiet machine; the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_suite_record import PHASES, _clear_ledgers, _env, _timeline

RUNS: tuple[tuple[str, bool, str], ...] = (
    ("plain suite", False, ""),
    ("recording", True, ""),
    ("recording without the further seeds", True, "seeds"),
    ("recording without any verification", True, "verification"),
)
"""Each run of a round: its name, whether it records, and the part switched off."""
WITHOUT_PLUGIN = "bench_suite_without"


def _runs(lib: Path, rounds: int) -> dict[str, list[dict[str, float]]]:
    env = _env(lib)
    bench_dir = str(Path(__file__).resolve().parent)
    timed: dict[str, list[dict[str, float]]] = {}
    for _ in range(rounds):
        for name, record, without in RUNS:
            run_env = dict(env)
            if without:
                run_env["LOCKSTEP_BENCH_WITHOUT"] = without
                run_env["PYTHONPATH"] = os.pathsep.join([bench_dir, env["PYTHONPATH"]])
                run_env["PYTEST_ADDOPTS"] = f"-p {WITHOUT_PLUGIN}"
            phases = _timeline(lib, run_env, record)
            phases["total"] = sum(phases.values())
            timed.setdefault(name, []).append(phases)
    _clear_ledgers(lib)
    return timed


def _table(lib: str, timed: dict[str, list[dict[str, float]]]) -> str:
    names = [name for name, _, _ in PHASES]
    lines = [
        f"{lib} (seconds, the median of {len(next(iter(timed.values())))} alternating runs):",
        "",
        "| run | " + " | ".join(names) + " | total | × plain |",
        "|---|" + "---:|" * (len(names) + 2),
    ]
    plain = statistics.median(run["total"] for run in timed[RUNS[0][0]])
    for name, runs in timed.items():
        cells = [f"{statistics.median(r.get(phase, 0.0) for r in runs):.2f}" for phase in names]
        total = statistics.median(run["total"] for run in runs)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {total:.2f} | {total / plain:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("libs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--cached-bytecode",
        action="store_true",
        help="unset PYTHONDONTWRITEBYTECODE and run each suite once untimed first",
    )
    args = parser.parse_args()
    if args.cached_bytecode:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(Path(__file__).parent.parent / "src")]
        )
    print(f"load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for lib in args.libs:
        scratch = Path(tempfile.mkdtemp()) / lib.name
        shutil.copytree(lib, scratch)
        try:
            if args.cached_bytecode:  # untimed: the bytecode these runs write is cached
                _timeline(scratch, _env(scratch), False)
                _timeline(scratch, _env(scratch), True)
            print(_table(lib.name, _runs(scratch, args.rounds)))
        finally:
            shutil.rmtree(scratch.parent, ignore_errors=True)
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
