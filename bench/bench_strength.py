"""Strength benchmark: ``lockstep strength --mutants`` next to mutmut 3 and cosmic-ray.

The same target module with its own test suite, side by side in one run: inflection 0.5.1
(one 426-line module of rule tables and string functions, 455 tests), downloaded from PyPI
at bench time (``pip download --no-deps --no-binary :all:``) into a temporary folder and
never committed.  lockstep judges mutants with ledgers recorded from that suite (one per
public function, ``pytest --lockstep-record``); mutmut 3 and cosmic-ray run the suite itself.

For each tool: mutants generated, mutants per second (all its mutants over the wall time of
the whole command, set-up included) and the kill rate (killed + timeout over judged).  A peer
that cannot finish within ``--peer-limit`` seconds is stopped, and its rate and kill rate are
taken over the mutants it did judge (said so in the table).

Prints figures; asserts nothing.

    python bench/bench_strength.py [--jobs 2] [--peer-limit 600] [--skip-peers]
        [--skip-cosmic-ray] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

LIBRARY = "inflection"
VERSION = "0.5.1"
FUNCTIONS = [
    "camelize",
    "dasherize",
    "humanize",
    "ordinal",
    "ordinalize",
    "parameterize",
    "pluralize",
    "singularize",
    "tableize",
    "titleize",
    "transliterate",
    "underscore",
]
LEAN_PYTEST = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
"""Peers run the suite with no third-party pytest plugins: the fastest fair setting."""


@dataclass
class Figures:
    tool: str
    mutants: int
    judged: int
    caught: int
    seconds: float
    cpu: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.mutants / self.seconds if self.seconds else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.mutants / self.cpu if self.cpu else 0.0

    @property
    def kill_rate(self) -> float:
        return self.caught / self.judged if self.judged else 0.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float | None = None
) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """Run ``argv``; the result (None on timeout) and its wall seconds (CPU: :func:`_cpu`)."""
    full = {**os.environ, **(env or {})}
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.perf_counter() - started
    return subprocess.CompletedProcess(
        argv, proc.returncode, out, err
    ), time.perf_counter() - started


def prepare(work: Path) -> Path | None:
    """The library's module and tests in ``work/lib``, or None (with a message) when offline."""
    download = work / "download"
    got, _ = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{LIBRARY}=={VERSION}",
            "-d",
            str(download),
        ],
        cwd=work,
    )
    archives = list(download.glob(f"{LIBRARY}-{VERSION}.tar.gz"))
    if got is None or got.returncode != 0 or not archives:
        reason = (got.stderr.strip().splitlines() or ["no archive"])[-1] if got else "timed out"
        print(f"skipped: cannot download {LIBRARY}=={VERSION} from PyPI ({reason})")
        return None
    with tarfile.open(archives[0]) as tar:
        tar.extractall(work / "sdist", filter="data")
    source = work / "sdist" / f"{LIBRARY}-{VERSION}"
    lib = work / "lib"
    lib.mkdir()
    shutil.copytree(source / LIBRARY, lib / LIBRARY)
    shutil.copy(source / f"test_{LIBRARY}.py", lib)
    return lib


def copy_of(lib: Path, name: str) -> Path:
    target = lib.parent / name
    shutil.copytree(lib, target)
    return target


def module_lines(lib: Path) -> int:
    return len((lib / LIBRARY / "__init__.py").read_text().splitlines())


# ---------------------------------------------------------------------- lockstep


def bench_lockstep(lib: Path, jobs: int) -> tuple[Figures, Figures, dict[str, object]]:
    project = copy_of(lib, "lockstep")
    config = "".join(f'[[ledger]]\nname = "{f}"\ntarget = "{LIBRARY}:{f}"\n\n' for f in FUNCTIONS)
    (project / "lockstep.toml").write_text(config)
    record_args = [f"--lockstep-record={f}" for f in FUNCTIONS]
    recorded, record_seconds = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            f"test_{LIBRARY}.py",
            *record_args,
        ],
        cwd=project,
    )
    assert recorded is not None and recorded.returncode == 0, recorded and recorded.stdout[-2000:]
    command = [
        sys.executable,
        "-m",
        "lockstep",
        "strength",
        "--mutants",
        "--jobs",
        str(jobs),
        "--json",
    ]
    first = _strength(project, [*command, "--no-cache"], "lockstep strength --mutants (cold)")
    _strength(project, command, "")  # fills the cache
    second = _strength(project, command, "lockstep strength --mutants (cached)")
    rows = sum(1 for p in (project / "lockstep").glob("*.ledger.jsonl") for _ in p.open()) - len(
        FUNCTIONS
    )
    return first, second, {"record_seconds": record_seconds, "rows": rows}


def _strength(project: Path, command: list[str], label: str) -> Figures:
    cpu = _cpu()
    done, seconds = _run(command, cwd=project)
    cpu = _cpu() - cpu
    assert done is not None and done.returncode == 0, done and done.stderr[-2000:]
    data = json.loads(done.stdout)["mutants"]
    counts = data["counts"]
    caught = counts["killed"] + counts["timeout"]
    note = f"{data['evaluated']} evaluated, {sum(r['cached'] for r in data['results'])} cached"
    return Figures(label, data["total"], data["judged"], caught, seconds, cpu, note)


# ---------------------------------------------------------------------- mutmut


MUTMUT_TIMEOUTS = {36, -24, 24, 152, 255}


def bench_mutmut(lib: Path, jobs: int, limit: float) -> Figures:
    project = copy_of(lib, "mutmut")
    (project / "setup.cfg").write_text(
        f"[mutmut]\nsource_paths=\n    {LIBRARY}/\n"
        f"pytest_add_cli_args_test_selection=\n    test_{LIBRARY}.py\n"
    )
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).with_name("mutmut"))
    cpu = _cpu()
    done, seconds = _run(
        [mutmut, "run", "--max-children", str(jobs)], cwd=project, env=LEAN_PYTEST, timeout=limit
    )
    codes: list[int | None] = []
    for meta in (project / "mutants").rglob("*.meta"):
        codes.extend(json.loads(meta.read_text())["exit_code_by_key"].values())
    cpu = _cpu() - cpu
    judged = [c for c in codes if c in (0, 1, 3) or c in MUTMUT_TIMEOUTS]
    caught = sum(1 for c in judged if c != 0)
    note = "" if done is not None else f"stopped after {limit:.0f}s; figures over what it judged"
    if done is not None and done.returncode != 0:
        note = f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-200:]}"
    figures = Figures("mutmut 3 run", len(codes), len(judged), caught, seconds, cpu, note)
    if done is None:  # rate over the judged mutants only
        figures.mutants = len(judged)
    return figures


# ---------------------------------------------------------------------- cosmic-ray


def bench_cosmic_ray(lib: Path, limit: float) -> Figures:
    project = copy_of(lib, "cosmic-ray")
    (project / "cr.toml").write_text(
        "[cosmic-ray]\n"
        f'module-path = "{LIBRARY}/__init__.py"\n'
        "timeout = 30.0\n"
        "excluded-modules = []\n"
        f'test-command = "{sys.executable} -m pytest -x -q -p no:cacheprovider test_{LIBRARY}.py"\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )
    tool = str(Path(sys.executable).with_name("cosmic-ray"))
    started = time.perf_counter()
    cpu = _cpu()
    init, _ = _run([tool, "init", "cr.toml", "cr.sqlite"], cwd=project, env=LEAN_PYTEST)
    if init is None or init.returncode != 0:
        return Figures(
            "cosmic-ray exec", 0, 0, 0, 0.0, 0.0, f"init failed: {init and init.stderr[-200:]}"
        )
    remaining = max(1.0, limit - (time.perf_counter() - started))
    done, _ = _run(
        [tool, "exec", "cr.toml", "cr.sqlite"], cwd=project, env=LEAN_PYTEST, timeout=remaining
    )
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    with sqlite3.connect(project / "cr.sqlite") as db:
        total = db.execute("select count(*) from mutation_specs").fetchone()[0]
        outcomes = [
            str(row[0]).lower() for row in db.execute("select test_outcome from work_results")
        ]
    judged = [o for o in outcomes if o in ("killed", "survived", "incompetent")]
    caught = sum(1 for o in judged if o != "survived")
    note = "" if done is not None else f"stopped after {limit:.0f}s; figures over what it judged"
    mutants = total if done else len(judged)
    return Figures("cosmic-ray exec", mutants, len(judged), caught, seconds, cpu, note)


# ---------------------------------------------------------------------- report


def table(rows: list[Figures], base: Figures | None) -> str:
    lines = [
        "| tool | mutants | judged | killed % | wall s | CPU s | mutants/s wall | mutants/CPU-s "
        "| vs mutmut (wall, CPU) | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for f in rows:
        ratio = (
            f"{f.rate / base.rate:.1f}x, {f.cpu_rate / base.cpu_rate:.1f}x"
            if base and base.rate and base.cpu_rate
            else "-"
        )
        lines.append(
            f"| {f.tool} | {f.mutants} | {f.judged} | {100 * f.kill_rate:.0f}% | "
            f"{f.seconds:.1f} | {f.cpu:.1f} | {f.rate:.1f} | {f.cpu_rate:.1f} | {ratio} | {f.note} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--peer-limit", type=float, default=600.0)
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument(
        "--skip-cosmic-ray", action="store_true", help="mutmut only (cosmic-ray takes 10 minutes)"
    )
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-strength-"))
    work.mkdir(parents=True, exist_ok=True)
    lib = prepare(work)
    if lib is None:
        return
    cold, cached, info = bench_lockstep(lib, args.jobs)
    rows = [cold, cached]
    base = None
    if not args.skip_peers:
        base = bench_mutmut(lib, args.jobs, args.peer_limit)
        rows.append(base)
        if not args.skip_cosmic_ray:
            rows.append(bench_cosmic_ray(lib, args.peer_limit))
    load = os.getloadavg()[0]
    text = table(rows, base)
    print(text)
    header = (
        f"{LIBRARY} {VERSION}: {module_lines(lib)}-line module, {info['rows']} ledger rows recorded "
        f"from its 455 tests in {info['record_seconds']:.1f}s; --jobs {args.jobs}; "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end"
    )
    print(header)
    if args.write_results:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from results_file import write_section

        write_section("## Strength", f"## Strength\n\n{header}\n\n{text}\n")


if __name__ == "__main__":
    main()
