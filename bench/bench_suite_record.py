"""Recording under a project's own suite: ``pytest --lockstep-record`` against the plain suite.

For each library folder given (an unpacked sdist with its tests and a ``lockstep.toml``
naming ``[[ledger]]`` oracles on its functions), copied to a scratch folder first:

* the plain suite, ``python -m pytest -p no:randomly -p no:cacheprovider -q -n 0``, and the
  same with ``--lockstep-record`` (every configured ledger, created afresh each round),
  back to back, ``--rounds`` times: wall and CPU seconds (user + system of pytest and
  every process it waited for, so the verifying interpreter and its forks count), the
  medians and the ratio recording / plain (goal: at most 1.5×);
* after each recording, the same suite re-recorded with ``--lockstep-new-only`` over the
  ledgers it just wrote (the run a project repeats once its ledgers are committed: nothing
  is new, so nothing is verified);
* once more recording, with a plugin that times where the added time goes: merging the
  spooled parts, the secret scan, verification (starting its interpreter, replaying the
  candidates), writing the ledgers.  The rest of the added time is the recording itself
  (the wrappers around every call of the targets);
* three more plain and three more recording runs, alternating, each timed phase by phase
  by the ``bench_suite_timeline`` plugin (pytest's start to its collection, collection,
  the tests, the session's end, the summary and exit): where the added time falls.

    python bench/bench_suite_record.py LIBDIR [LIBDIR ...] [--rounds 5] [--write-results]
        [--against OTHER/src]

With ``--against``, each round records once more with another tree's lockstep (its
``src`` first on ``PYTHONPATH``), right after this one's, and the table sets the two side
by side: on a shared machine whose speed drifts, only figures of one run compare.

``LIBDIR/src`` is put on ``PYTHONPATH`` when it exists (a src layout not installed).  The
machine's load average is printed with the figures: on a shared machine compare ratios
measured in one run, never seconds between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.5
PHASES_PLUGIN = "bench_suite_phases"
TIMELINE_PLUGIN = "bench_suite_timeline"
TIMELINE_RUNS = 3
PHASES: tuple[tuple[str, str, str], ...] = (
    ("start to collection", "", "collect_start"),
    ("collection", "collect_start", "collect_end"),
    ("the tests", "tests_start", "tests_end"),
    ("the session's end", "finish_start", "finish_end"),
    ("summary and exit", "finish_end", "end"),
)
"""Each phase of a pytest run the timeline table shows: its name, and the marks of
``bench_suite_timeline`` it runs between ("": pytest's start; "end": its process's end)."""
SERVER_IMPORTS = "import lockstep.cli.verify_child\nfrom lockstep.oracles.ledger import kind"
"""What the verifying interpreter does before its first candidate (its start's CPU cost)."""


def _env(lib: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "LOCKSTEP_")) and k != "PYTHONHASHSEED"
    }
    paths = [str(lib / "src")] if (lib / "src").is_dir() else []
    env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra or {})
    return env


def _clear_ledgers(lib: Path) -> None:
    """Remove the recorded ledgers, so each recording round creates them afresh."""
    for path in lib.rglob("*.ledger.jsonl"):
        path.unlink()


def _run(argv: list[str], lib: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (this command and its waited-for children), exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=lib, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout.decode()[-2000:] + proc.stderr.decode()[-2000:])
    return wall, cpu, proc.returncode


def _pytest(record: bool) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"]
    argv += ["-q", "-n", "0"]
    return [*argv, "--lockstep-record"] if record else argv


def _bytecode_state() -> str:
    """Whether this run writes bytecode, and how many of lockstep's modules have theirs: with
    ``PYTHONDONTWRITEBYTECODE`` set and no ``.pyc`` (an editable install), every run compiles
    each module it imports, which weighs on the recording (it imports more) and on the
    verifying interpreter."""
    import importlib.util

    import lockstep

    sources = list(Path(lockstep.__file__).parent.rglob("*.py"))
    cached = sum(Path(importlib.util.cache_from_source(str(p))).exists() for p in sources)
    writes = "not written" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "written"
    return f"bytecode {writes}; {cached} of {len(sources)} lockstep modules have a .pyc"


def _timeline(lib: Path, env: dict[str, str], record: bool) -> dict[str, float]:
    """Seconds each phase of :data:`PHASES` took in one run, plain or recording (its
    ledgers cleared first), timed by the ``bench_suite_timeline`` plugin."""
    _clear_ledgers(lib)
    out = Path(tempfile.mkdtemp()) / "timeline.json"
    bench_dir = str(Path(__file__).resolve().parent)
    run_env = {**env, "LOCKSTEP_BENCH_TIMELINE": str(out)}
    run_env["PYTHONPATH"] = os.pathsep.join([bench_dir, env["PYTHONPATH"]])
    run_env["LOCKSTEP_BENCH_T0"] = str(time.monotonic())
    subprocess.run(
        [*_pytest(record), "-p", TIMELINE_PLUGIN], cwd=lib, env=run_env, capture_output=True
    )
    marks = {"": 0.0, "end": time.monotonic() - float(run_env["LOCKSTEP_BENCH_T0"])}
    if out.exists():
        marks.update(json.loads(out.read_text()))
    shutil.rmtree(out.parent, ignore_errors=True)
    return {
        name: marks[finish] - marks[start]
        for name, start, finish in PHASES
        if start in marks and finish in marks
    }


def _timelines(lib: Path, env: dict[str, str]) -> dict[str, float]:
    """The median of :data:`TIMELINE_RUNS` alternating plain and recording runs, phase by
    phase: ``plain <phase>`` and ``record <phase>``."""
    runs: dict[str, list[float]] = {}
    for _ in range(TIMELINE_RUNS):
        for record in (False, True):
            for name, seconds in _timeline(lib, env, record).items():
                runs.setdefault(f"{'record' if record else 'plain'} {name}", []).append(seconds)
    _clear_ledgers(lib)
    return {key: statistics.median(values) for key, values in runs.items()}


def _against_env(lib: Path, src: Path) -> dict[str, str]:
    """The environment of a recording by the lockstep of another tree (``src``: its
    ``src`` folder, first on ``PYTHONPATH``)."""
    env = _env(lib)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env["PYTHONPATH"]]))
    return env


def bench_library(
    lib: Path, rounds: int, warm: bool = False, against: Path | None = None
) -> dict[str, float | str]:
    env = _env(lib)
    other = _against_env(lib, against) if against is not None else None
    _clear_ledgers(lib)  # a copy of a folder recorded in before
    if warm:  # a first plain and recording run, untimed: the bytecode they write is cached
        _run(_pytest(False), lib, env)
        for each in (env, other):
            if each is not None:
                _run(_pytest(True), lib, each)
                _clear_ledgers(lib)
    plain: list[tuple[float, float]] = []
    recording: list[tuple[float, float]] = []
    again: list[tuple[float, float]] = []
    before: list[tuple[float, float]] = []
    before_again: list[tuple[float, float]] = []
    codes = set()
    rerecord = [*_pytest(True), "--lockstep-new-only"]
    for index in range(rounds):
        wall, cpu, _code = _run(_pytest(False), lib, env)
        plain.append((wall, cpu))

        def ours() -> None:
            _clear_ledgers(lib)
            wall, cpu, code = _run(_pytest(True), lib, env)
            codes.add(code)
            recording.append((wall, cpu))
            wall, cpu, code = _run(rerecord, lib, env)  # over the ledgers just written
            codes.add(code)
            again.append((wall, cpu))

        def theirs(other: dict[str, str]) -> None:
            _clear_ledgers(lib)
            wall, cpu, _code = _run(_pytest(True), lib, other)
            before.append((wall, cpu))
            wall, cpu, _code = _run(rerecord, lib, other)
            before_again.append((wall, cpu))

        if other is None:
            ours()
        elif index % 2:  # the other tree first every second round: neither always follows plain
            theirs(other)
            ours()
        else:
            ours()
            theirs(other)
    ledgers = len(list(lib.rglob("*.ledger.jsonl")))
    rows = sum(
        max(0, len(p.read_text(encoding="utf-8").splitlines()) - 1)
        for p in lib.rglob("*.ledger.jsonl")
    )
    _clear_ledgers(lib)
    out = Path(tempfile.mkdtemp()) / "phases.json"
    bench_dir = str(Path(__file__).resolve().parent)
    phase_env = _env(lib, {"LOCKSTEP_BENCH_PHASES": str(out)})
    phase_env["PYTHONPATH"] = os.pathsep.join([bench_dir, phase_env["PYTHONPATH"]])
    _run([*_pytest(True), "-p", PHASES_PLUGIN], lib, phase_env)
    phases = json.loads(out.read_text()) if out.exists() else {}
    shutil.rmtree(out.parent, ignore_errors=True)
    timeline = _timelines(lib, env)
    starts = [_run([sys.executable, "-c", SERVER_IMPORTS], lib, env)[1] for _ in range(3)]
    phases["server_start"] = statistics.median(starts)
    p_wall = statistics.median(w for w, _ in plain)
    p_cpu = statistics.median(c for _, c in plain)
    r_wall = statistics.median(w for w, _ in recording)
    r_cpu = statistics.median(c for _, c in recording)
    against_figures: dict[str, float | str] = {}
    if before:
        a_wall = statistics.median(w for w, _ in before)
        a_cpu = statistics.median(c for _, c in before)
        against_figures = {
            "against_wall": a_wall,
            "against_cpu": a_cpu,
            "against_ratio_wall": a_wall / p_wall,
            "against_ratio_cpu": a_cpu / p_cpu,
            "against_again_ratio_wall": statistics.median(w for w, _ in before_again) / p_wall,
            "against_ratio_fastest": min(w for w, _ in before) / min(w for w, _ in plain),
        }
    return {
        **against_figures,
        "library": lib.name,
        "ledgers": ledgers,
        "rows": rows,
        "plain_wall": p_wall,
        "plain_cpu": p_cpu,
        "record_wall": r_wall,
        "record_cpu": r_cpu,
        "ratio_wall": r_wall / p_wall,
        "ratio_cpu": r_cpu / p_cpu,
        # the fastest recording against the fastest plain run: on a machine whose speed
        # drifts within a run, the least disturbed of each
        "ratio_fastest": min(w for w, _ in recording) / min(w for w, _ in plain),
        "again_wall": statistics.median(w for w, _ in again),
        "again_ratio_wall": statistics.median(w for w, _ in again) / p_wall,
        "ratios_cpu": " ".join(f"{r[1] / p[1]:.2f}" for p, r in zip(plain, recording, strict=True)),
        "codes": ",".join(str(c) for c in sorted(codes)),
        **{f"phase_{k}": v for k, v in phases.items()},
        **{f"timeline {k}": v for k, v in timeline.items()},
    }


def _table(figures: list[dict[str, float | str]]) -> str:
    lines = [
        "| library | ledgers, rows | plain wall / CPU s | recording wall / CPU s | × plain (wall) | × plain (wall, fastest of each) | × plain (CPU) | CPU ratio per round | re-recording `--lockstep-new-only`, wall s (× plain) |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for f in figures:
        lines.append(
            f"| {f['library']} | {f['ledgers']}, {f['rows']} | {f['plain_wall']:.2f} / "
            f"{f['plain_cpu']:.2f} | {f['record_wall']:.2f} / {f['record_cpu']:.2f} | "
            f"{f['ratio_wall']:.2f} | {f['ratio_fastest']:.2f} | **{f['ratio_cpu']:.2f}** | "
            f"{f['ratios_cpu']} | "
            f"{f['again_wall']:.2f} ({f['again_ratio_wall']:.2f}) |"
        )
    lines += [
        "",
        "Where the recording run's time goes (one timed run; seconds of wall time in the pytest",
        "process at the session's end, interpreters counted by the session):",
        "",
        "| library | verification interpreters started | writing every ledger (span) | verifying (waits, summed over ledgers) | interpreter start and imports (server, CPU s) | secret scan (CPU s) | merge parts | write ledgers | pytest process / verifying processes, CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for f in figures:
        lines.append(
            f"| {f['library']} | {f.get('phase_starts', 0):.0f} | "
            f"{f.get('phase_all_ledgers', 0):.3f} | {f.get('phase_verify', 0):.3f} | "
            f"{f.get('phase_server_start', 0):.3f} | {f.get('phase_secrets', 0):.3f} "
            f"({f.get('phase_secrets_cpu', 0):.3f}) | "
            f"{f.get('phase_merge', 0):.3f} | {f.get('phase_write', 0):.3f} | "
            f"{f.get('phase_pytest_cpu', 0):.2f} / {f.get('phase_children_cpu', 0):.2f} |"
        )
    lines += [
        "",
        "Phase by phase (seconds; the median of three alternating plain and recording runs,",
        "timed by the `bench_suite_timeline` plugin from pytest's start to its process's end):",
        "",
        "| library | " + " | ".join(f"{name}: plain → recording" for name, _, _ in PHASES) + " |",
        "|---|" + "---:|" * len(PHASES),
    ]
    for f in figures:
        cells = []
        for name, _, _ in PHASES:
            plain, record = f.get(f"timeline plain {name}"), f.get(f"timeline record {name}")
            ok = isinstance(plain, float) and isinstance(record, float)
            cells.append(f"{plain:.2f} → {record:.2f}" if ok else "–")
        lines.append(f"| {f['library']} | " + " | ".join(cells) + " |")
    if any("against_wall" in f for f in figures):
        lines += [
            "",
            "The same rounds, each recording once more by the other tree's lockstep (`--against`):",
            "",
            "| library | recording wall / CPU s, other tree → this tree | × plain (wall), other → this | fastest × fastest plain, other → this | × plain (CPU), other → this | re-recording × plain (wall), other → this |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for f in figures:
            if "against_wall" in f:
                lines.append(
                    f"| {f['library']} | {f['against_wall']:.2f} / {f['against_cpu']:.2f} → "
                    f"{f['record_wall']:.2f} / {f['record_cpu']:.2f} | "
                    f"{f['against_ratio_wall']:.2f} → **{f['ratio_wall']:.2f}** | "
                    f"{f['against_ratio_fastest']:.2f} → **{f['ratio_fastest']:.2f}** | "
                    f"{f['against_ratio_cpu']:.2f} → **{f['ratio_cpu']:.2f}** | "
                    f"{f['against_again_ratio_wall']:.2f} → **{f['again_ratio_wall']:.2f}** |"
                )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("libs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write-results", action="store_true")
    parser.add_argument(
        "--cached-bytecode",
        action="store_true",
        help="unset PYTHONDONTWRITEBYTECODE and run each suite once untimed first, as a "
        "user whose bytecode is cached runs it",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="another tree's src folder: each round also records with that lockstep, so the "
        "two are compared in one run on the same machine state",
    )
    args = parser.parse_args()
    if args.cached_bytecode:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        import compileall

        import lockstep

        compileall.compile_dir(str(Path(lockstep.__file__).parent), quiet=1)
    state = _bytecode_state()
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for lib in args.libs:
            work = Path(tmp) / lib.resolve().name
            shutil.copytree(lib, work, ignore=shutil.ignore_patterns(".git", "__pycache__"))
            figures.append(
                bench_library(work, args.rounds, warm=args.cached_bytecode, against=args.against)
            )
            print(json.dumps(figures[-1]), flush=True)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    table = _table(figures)
    print(table)
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    print(state)
    print(f"goal: recording ≤ {GOAL}× the plain suite")
    if args.write_results:
        from results_file import write_section

        write_section(
            "## Recording under a suite",
            "## Recording under a suite\n\n"
            f"`python bench/bench_suite_record.py` ({args.rounds} rounds, load average "
            f"{' '.join(load_before)} before, {' '.join(load_after)} after; {state})\n\n{table}",
        )


if __name__ == "__main__":
    main()
