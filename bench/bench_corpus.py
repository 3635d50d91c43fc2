"""Corpus benchmark: lockstep record/replay against syrupy and pytest-regressions on one corpus.

Run ``python bench/bench_corpus.py [--cases N] [--work DIR] [--repeat R] [--write-results]``.

It builds a deterministic project (N invoice fixtures of about 1 KB JSON and a
render function that parses each one and computes Decimal totals), then times,
each as a fresh subprocess as a user would type it:

* ``lockstep record`` and ``lockstep replay`` (``--jobs 1`` and ``--jobs 2``),
* ``pytest --lockstep -q`` (every locked case collected as a pytest item),
* syrupy: one parametrized test asserting ``render(path) == snapshot``
  (create run with ``--snapshot-update``, then the verify run),
* pytest-regressions: the same test with ``data_regression.check(render(path))``
  (create run with ``--regen-all``, then the verify run),

and the peak memory (max RSS, from ``os.wait4`` on the child) of ``lockstep
replay`` on a 1,000-fixture and an N-fixture copy of the corpus, next to the
in-memory size of the lock and the fixture index, to show that memory grows only
with those.  Create runs run once on a clean state; verify runs are repeated and
the fastest is kept.  It prints a table of seconds and ratios against
``lockstep replay --jobs 1``; with ``--write-results`` it also rewrites the
"Corpus" section of ``bench/RESULTS.md``, leaving the other sections alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from results_file import RESULTS, write_section

HERE = Path(__file__).resolve().parent
SEED = 20240611
MEMORY_SMALL = 1_000

# --------------------------------------------------------------------------- the project

HARNESS = '''\
"""Render one invoice fixture: parse it and compute its totals with Decimal arithmetic."""
import json
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def _money(value):
    return str(value.quantize(CENT, rounding=ROUND_HALF_UP))


def render(path):
    doc = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
    lines = []
    net_total = Decimal(0)
    tax_total = Decimal(0)
    by_rate = {}
    for line in doc["lines"]:
        qty = Decimal(line["qty"])
        gross = qty * Decimal(line["unit_price"])
        discount = (gross * Decimal(line.get("discount", "0"))).quantize(CENT, ROUND_HALF_UP)
        net = gross - discount
        rate = Decimal(line["tax_rate"])
        tax = (net * rate).quantize(CENT, ROUND_HALF_UP)
        net_total += net
        tax_total += tax
        by_rate[str(rate)] = by_rate.get(str(rate), Decimal(0)) + tax
        lines.append(
            {
                "sku": line["sku"].upper(),
                "text": " ".join(line["description"].split()).capitalize(),
                "qty": int(qty),
                "net": _money(net),
                "tax": _money(tax),
            }
        )
    customer = doc["customer"]
    return {
        "invoice": doc["invoice"],
        "customer": " ".join(w.capitalize() for w in customer["name"].split()),
        "country": customer["country"].upper(),
        "currency": doc["currency"],
        "lines": lines,
        "tax_by_rate": {rate: _money(tax) for rate, tax in sorted(by_rate.items())},
        "net": _money(net_total),
        "tax": _money(tax_total),
        "total": _money(net_total + tax_total),
    }
'''

LOCKSTEP_TOML = """\
[lockstep]
dir = "lockstep"

[[corpus]]
name = "rows"
fixtures = "fixtures/*.json"
render = "harness:render"
"""

PYTEST_INI = """\
[pytest]
testpaths = tests
pythonpath = .
addopts = -p no:cacheprovider
"""

PEER_HEADER = """\
from pathlib import Path

import pytest

from harness import render

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("*.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
"""

SYRUPY_TEST = (
    PEER_HEADER
    + """\
def test_render(path, snapshot):
    assert render(path) == snapshot
"""
)

REGRESSIONS_TEST = (
    PEER_HEADER
    + """\
def test_render(path, data_regression):
    data_regression.check(render(path))
"""
)

WORDS = [
    "bolt",
    "nut",
    "washer",
    "bracket",
    "hinge",
    "spring",
    "gasket",
    "valve",
    "pipe",
    "elbow",
    "flange",
    "coupling",
    "sealant",
    "tape",
    "cable",
    "clamp",
    "fuse",
    "relay",
    "switch",
    "socket",
    "plug",
    "lamp",
    "filter",
    "belt",
    "pulley",
]
NAMES = [
    "ada",
    "grace",
    "alan",
    "edsger",
    "barbara",
    "donald",
    "ken",
    "dennis",
    "margaret",
    "john",
    "frances",
    "linus",
]
SURNAMES = [
    "lovelace",
    "hopper",
    "turing",
    "dijkstra",
    "liskov",
    "knuth",
    "thompson",
    "ritchie",
    "hamilton",
    "backus",
]


def fixture_doc(rng: random.Random, index: int) -> dict[str, object]:
    """One invoice of about 1 KB: deterministic given the generator state."""
    lines = []
    for n in range(rng.randint(4, 6)):
        lines.append(
            {
                "sku": f"{rng.choice(WORDS)[:3]}-{rng.randint(100, 999)}",
                "description": "  ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))),
                "qty": rng.randint(1, 40),
                "unit_price": f"{rng.randint(1, 99999) / 100:.2f}",
                "discount": rng.choice(["0", "0.05", "0.10", "0.125"]),
                "tax_rate": rng.choice(["0.20", "0.10", "0.055", "0"]),
                "line": n + 1,
            }
        )
    return {
        "invoice": f"INV-{index:06d}",
        "issued": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "currency": rng.choice(["EUR", "GBP", "USD", "CHF"]),
        "customer": {
            "name": f"{rng.choice(NAMES)}  {rng.choice(SURNAMES)}",
            "country": rng.choice(["fr", "de", "gb", "us", "ch", "nl"]),
            "vat_id": f"VAT{rng.randint(10**8, 10**9 - 1)}",
        },
        "lines": lines,
        "notes": " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))),
    }


def build_project(root: Path, cases: int) -> int:
    """Lay out the project; returns the total size of the fixtures in bytes."""
    if root.exists():
        shutil.rmtree(root)
    (root / "fixtures").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "README.txt").write_text("the project's own tests would live here\n")
    (root / "harness.py").write_text(HARNESS)
    (root / "lockstep.toml").write_text(LOCKSTEP_TOML)
    (root / "pytest.ini").write_text(PYTEST_INI)
    for folder, text in (("peer_syrupy", SYRUPY_TEST), ("peer_regressions", REGRESSIONS_TEST)):
        (root / folder).mkdir()
        (root / folder / f"test_{folder}.py").write_text(text)
    rng = random.Random(SEED)
    total = 0
    for i in range(cases):
        data = json.dumps(fixture_doc(rng, i), indent=1).encode("utf-8")
        (root / "fixtures" / f"case_{i:06d}.json").write_bytes(data)
        total += len(data)
    return total


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Run:
    """One timed child process."""

    seconds: float
    """Wall-clock time."""
    cpu: float
    """User + system CPU time of the child and every process it waited for (workers)."""
    max_rss_mb: float
    code: int


def run(argv: list[str], cwd: Path, log: Path) -> Run:
    """Run ``argv`` in ``cwd``: wall seconds, peak RSS of the child (and what it waited for)."""
    env = dict(os.environ)
    for key in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "LOCKSTEP_CONFIG"):
        env.pop(key, None)
    env["NO_COLOR"] = "1"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Run(seconds, cpu, usage.ru_maxrss / 1024, proc.returncode)


def checked(argv: list[str], cwd: Path, log: Path, label: str, ok: tuple[int, ...] = (0,)) -> Run:
    result = run(argv, cwd, log)
    if result.code not in ok:
        tail = log.read_text(errors="replace")[-3000:]
        sys.exit(f"{label}: exit {result.code}\n{tail}")
    return result


def best(argv: list[str], cwd: Path, log: Path, label: str, repeat: int) -> Run:
    """The fastest of ``repeat`` runs, wall and CPU each taken at its minimum."""
    runs = [checked(argv, cwd, log, label) for _ in range(repeat)]
    return Run(
        min(r.seconds for r in runs),
        min(r.cpu for r in runs),
        max(r.max_rss_mb for r in runs),
        0,
    )


PY = sys.executable
LOCKSTEP = [PY, "-m", "lockstep"]
PYTEST = [PY, "-m", "pytest", "-q"]

BARE_RENDER = """\
import sys
from pathlib import Path
sys.path.insert(0, ".")
from harness import render
for path in sorted(Path("fixtures").glob("*.json")):
    render(path)
"""

LOCK_SIZE_PROBE = """\
import sys, tracemalloc
from pathlib import Path
from lockstep.config import load_project
from lockstep.oracles.corpus import kind as corpus
project = load_project(Path.cwd())
spec = project.oracle("rows")
path = corpus.oracle_path(project, spec)
tracemalloc.start()
lock = corpus.read_lock(path)
lock_bytes = tracemalloc.get_traced_memory()[0]
found = corpus.fixtures(project, spec)
index_bytes = tracemalloc.get_traced_memory()[0] - lock_bytes
print(lock_bytes, index_bytes)
"""


IN_PROCESS_PROBE = """\
import sys, time
from pathlib import Path
sys.path.insert(0, ".")
from harness import render
from lockstep.config import load_project
from lockstep.model import ReplayOptions, Status
from lockstep.oracles.corpus import kind as corpus
project = load_project(Path.cwd())
spec = project.oracle("rows")
def bare():
    for path in sorted(Path("fixtures").glob("*.json")):
        render(path)
def replay():
    for outcome in corpus.replay(project, spec, ReplayOptions()):
        assert outcome.status is Status.PASS
best = {"bare": 1e9, "replay": 1e9}
for _ in range(REPEAT):
    for name, fn in (("bare", bare), ("replay", replay)):
        start = time.process_time()
        fn()
        best[name] = min(best[name], time.process_time() - start)
print(best["bare"], best["replay"])
"""


def in_process(root: Path, repeat: int) -> tuple[float, float]:
    """CPU seconds of the bare render loop and of ``corpus.replay`` in one warm process.

    Interleaved, fastest of ``repeat``: what replay adds per fixture, without the
    interpreter start-up and imports that a whole CLI run also pays.
    """
    code = IN_PROCESS_PROBE.replace("REPEAT", str(max(repeat, 3)))
    out = subprocess.run(
        [PY, "-c", code], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def in_memory_sizes(root: Path) -> tuple[float, float]:
    """MB held by the decoded lock and by the fixture index, measured in a fresh process."""
    out = subprocess.run(
        [PY, "-c", LOCK_SIZE_PROBE], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split()
    return int(out[0]) / 2**20, int(out[1]) / 2**20


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Row:
    label: str
    run: Run


def versions() -> dict[str, str]:
    names = ("lockstep", "pytest", "syrupy", "pytest-regressions", "pytest-xdist", "msgspec")
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        memory = f", {mem:.0f} GiB RAM"
    except (ValueError, OSError):
        memory = ""
    return (
        f"{cpu}, {os.cpu_count()} cores{memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def table(rows: list[Row], base: Run) -> list[str]:
    """Seconds and ratios to ``base`` (lockstep replay --jobs 1), wall and CPU side by side."""
    width = max(len(r.label) for r in rows)
    lines = [
        f"| {'run':<{width}} | wall s | CPU s | wall / replay | CPU / replay | peak RSS MB |",
        f"|{'-' * (width + 2)}|-------:|------:|--------------:|-------------:|------------:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.label:<{width}} | {r.run.seconds:6.2f} | {r.run.cpu:5.2f} "
            f"| {r.run.seconds / base.seconds:12.2f}x | {r.run.cpu / base.cpu:11.2f}x "
            f"| {r.run.max_rss_mb:11.1f} |"
        )
    return lines


@dataclass(frozen=True)
class Memory:
    cases: int
    rss_mb: float
    lock_mb: float
    index_mb: float


def memory_lines(small: Memory, large: Memory) -> list[str]:
    lines = [
        "| fixtures | replay peak RSS MB | lock in memory MB | fixture index MB |",
        "|---------:|-------------------:|------------------:|-----------------:|",
    ]
    for m in (small, large):
        lines.append(
            f"| {m.cases:>8,} | {m.rss_mb:18.1f} | {m.lock_mb:17.1f} | {m.index_mb:16.1f} |"
        )
    growth = large.rss_mb - small.rss_mb
    held = (large.lock_mb + large.index_mb) - (small.lock_mb + small.index_mb)
    lines.append("")
    lines.append(
        f"RSS grew {growth:.1f} MB from {small.cases:,} to {large.cases:,} fixtures; "
        f"the lock and fixture index account for {held:.1f} MB of it "
        f"(other growth: {growth - held:+.1f} MB)."
    )
    return lines


def goal_lines(by: dict[str, Run], small: Memory, large: Memory) -> list[str]:
    """Each goal of issue 2, judged on CPU time (steady on a shared box) with wall beside it."""
    replay, syrupy, plugin = by["replay1"], by["syrupy_verify"], by["plugin"]
    replay2 = by["replay2"]
    other = (large.rss_mb - small.rss_mb) - (
        (large.lock_mb + large.index_mb) - (small.lock_mb + small.index_mb)
    )
    flat = other < 0.1 * small.rss_mb

    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"

    speedup = syrupy.cpu / replay.cpu
    return [
        f"- `lockstep replay --jobs 1` is {speedup:.2f}x faster than syrupy's verify run in CPU "
        f"time ({syrupy.seconds / replay.seconds:.2f}x in wall time; `--jobs 2`: "
        f"{syrupy.seconds / replay2.seconds:.2f}x in wall time). Goal >= 10x: "
        f"{mark(speedup >= 10)}",
        f"- `pytest --lockstep` takes {plugin.cpu / syrupy.cpu:.2f}x syrupy's verify CPU time "
        f"({plugin.seconds / syrupy.seconds:.2f}x wall). Goal <= 1x: "
        f"{mark(plugin.cpu <= syrupy.cpu)}",
        f"- replay memory beyond the lock and the fixture index grows {other:+.1f} MB from "
        f"{small.cases:,} to {large.cases:,} fixtures. Goal flat (< 10% of the "
        f"{small.cases:,}-fixture peak): {mark(flat)}",
    ]


def render_section(
    cases: int,
    fixture_bytes: int,
    rows: list[Row],
    base: Run,
    memory: list[str],
    goals: list[str],
    repeat: int,
    load: str,
) -> str:
    vers = versions()
    body = [
        "## Corpus",
        "",
        f"`python bench/bench_corpus.py --cases {cases}` on {time.strftime('%Y-%m-%d')}: "
        f"{cases:,} invoice fixtures ({fixture_bytes / cases:.0f} bytes of JSON each on average), "
        "rendered by parsing each one and computing Decimal totals. Every figure is one fresh "
        "process as a user would type it; CPU is user + system time of that process and the "
        f"workers it started. Verify runs are the fastest of {repeat}; create runs run once on a "
        "clean state. The bare render loop is the floor: the same render over the same files in "
        "a plain Python process, with no framework at all.",
        "",
        f"Machine: {machine()}; load average during the run {load}.  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
        "",
        *table(rows, base),
        "",
        "Peak memory (max RSS) of `lockstep replay rows --jobs 1`, with what the decoded lock "
        "and the fixture index (id → path of every file the glob matches) hold:",
        "",
        *memory,
        "",
        "Goals (issue 2):",
        "",
        *goals,
        "",
    ]
    return "\n".join(body)


def load_average() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.1f} (1 min) / {five:.1f} (5 min)"


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=10_000, help="fixtures (default 10,000)")
    parser.add_argument("--work", type=Path, default=None, help="folder to build in (kept)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each verify (best kept)")
    parser.add_argument("--write-results", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--skip-peers", action="store_true", help="time lockstep only")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="lockstep-bench-"))
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    root = work / "corpus"
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    print(f"building {args.cases:,} fixtures in {root} ...", flush=True)
    fixture_bytes = build_project(root, args.cases)
    print(f"  {fixture_bytes / args.cases:.0f} bytes per fixture on average", flush=True)

    by: dict[str, Run] = {}
    steps: list[tuple[str, str, list[str], bool]] = [
        ("record", "lockstep record", [*LOCKSTEP, "record", "rows"], False),
        ("replay1", "lockstep replay --jobs 1", [*LOCKSTEP, "replay", "rows", "--jobs", "1"], True),
        ("replay2", "lockstep replay --jobs 2", [*LOCKSTEP, "replay", "rows", "--jobs", "2"], True),
        ("plugin", "pytest --lockstep -q", [*PYTEST, "--lockstep"], True),
        ("plugin_n2", "pytest --lockstep -q -n 2", [*PYTEST, "--lockstep", "-n", "2"], True),
        ("bare", "bare render loop (floor)", [PY, "-c", BARE_RENDER], True),
    ]
    if not args.skip_peers:
        steps += [
            (
                "syrupy_create",
                "syrupy create (--snapshot-update)",
                [*PYTEST, "peer_syrupy", "--snapshot-update"],
                False,
            ),
            ("syrupy_verify", "syrupy verify", [*PYTEST, "peer_syrupy"], True),
        ]
    if not args.skip_peers and versions()["pytest-regressions"] == "not installed":
        print("  (pytest-regressions is not installed: its rows are left out)", flush=True)
    elif not args.skip_peers:
        steps += [
            (
                "regr_create",
                "pytest-regressions create (--regen-all)",
                [*PYTEST, "peer_regressions", "--regen-all"],
                False,
            ),
            ("regr_verify", "pytest-regressions verify", [*PYTEST, "peer_regressions"], True),
        ]
    load_before = load_average()
    rows: list[Row] = []
    for key, label, argv, repeated in steps:
        print(f"  {label} ...", end=" ", flush=True)
        log = logs / f"{key}.log"
        result = (
            best(argv, root, log, label, args.repeat)
            if repeated
            else checked(argv, root, log, label)
        )
        print(f"{result.seconds:.2f} s wall, {result.cpu:.2f} s CPU", flush=True)
        by[key] = result
        rows.append(Row(label, result))

    bare_cpu, replay_cpu = in_process(root, args.repeat)
    in_process_line = (
        f"In one warm process (no start-up, no imports; CPU, fastest of {max(args.repeat, 3)}): "
        f"bare render loop {bare_cpu:.3f} s, `corpus.replay` {replay_cpu:.3f} s = "
        f"{replay_cpu / bare_cpu:.2f}x the floor."
    )
    print(in_process_line, flush=True)
    print("measuring replay memory ...", flush=True)
    small_root = work / "corpus-small"
    build_project(small_root, min(MEMORY_SMALL, args.cases))
    checked([*LOCKSTEP, "record", "rows"], small_root, logs / "small-record.log", "small record")
    sizes: list[Memory] = []
    for folder in (small_root, root):
        n = sum(1 for _ in (folder / "fixtures").iterdir())
        rss = best(
            [*LOCKSTEP, "replay", "rows", "--jobs", "1"],
            folder,
            logs / "memory.log",
            "memory replay",
            args.repeat,
        )
        lock_mb, index_mb = in_memory_sizes(folder)
        sizes.append(Memory(n, rss.max_rss_mb, lock_mb, index_mb))
    small, large = sizes
    load = f"{load_before} at the start, {load_average()} at the end"

    base = by["replay1"]
    print()
    print(f"Corpus benchmark: {args.cases:,} fixtures; {machine()}; load average {load}")
    print("Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    print()
    print("\n".join(table(rows, base)))
    print()
    print("\n".join(memory_lines(small, large)))
    print()
    print(in_process_line)
    if "syrupy_verify" in by:
        goals = goal_lines(by, small, large)
        print()
        print("\n".join(goals))
        if args.write_results:
            write_section(
                "## Corpus",
                render_section(
                    args.cases,
                    fixture_bytes,
                    rows,
                    base,
                    memory_lines(small, large),
                    goals,
                    args.repeat,
                    load,
                ),
            )
            print(f"\nwrote the Corpus section of {RESULTS}")
    elif args.write_results:
        print("\n--write-results needs the peer runs; RESULTS.md left as it is")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"\nproject and logs kept in {work}")


if __name__ == "__main__":
    main()
