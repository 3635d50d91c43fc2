"""Corpus lock benchmark: peak memory of ``record --new-only`` and ``accept`` on a big lock.

Run ``python bench/bench_corpus_lock.py [--entries 1000000] [--baseline-src DIR] [--work DIR]
[--write-results]``.

It builds a git project with a corpus of two fixtures, records it, then grows its lock to
``--entries`` entries whose fixtures are gone (as a lock of many cases is, to a command that
does not render them: ``--new-only`` keeps them, an accept keeps them), and measures, each
as a fresh ``python -m lockstep`` process:

* ``lockstep record rows --new-only`` adding one new fixture;
* ``lockstep accept --all`` of one drifted fixture (after ``replay --keep-pending``, not
  measured), which re-records it through the record path and replays it.

Peak memory is the process's own high-water mark (``VmHWM`` of ``/proc/self/status``, read
at exit by a small wrapper; ``ru_maxrss`` also counts the pages of the parent it was forked
from).  With ``--baseline-src DIR`` (another checkout's ``src``) the same steps run on a copy
of the project with that lockstep first on ``PYTHONPATH``, beside this one.  With
``--write-results`` the "Corpus lock memory" section of ``bench/RESULTS.md`` is rewritten.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from results_file import RESULTS, write_section

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
HEADING = "## Corpus lock memory: record --new-only and accept"

CONFIG = """\
[[corpus]]
name = "rows"
fixtures = "fixtures/*.json"
render = "harness:render"
"""

HARNESS = """\
import json


def render(path):
    return json.loads(path.read_text())
"""

WRAPPER = """\
import contextlib, re, resource, sys
from lockstep.cli import main
with contextlib.suppress(SystemExit):
    main(sys.argv[1:], prog_name="lockstep")
try:
    with open("/proc/self/status") as fh:
        peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", fh.read()).group(1))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("PEAK", peak, file=sys.stderr)
"""


@dataclass(frozen=True)
class Measured:
    peak_mib: float
    seconds: float


def run(
    argv: list[str], cwd: Path, src: Path, *, expect: int | None = 0
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("LOCKSTEP_CONFIG", None)
    env["PYTHONPATH"] = str(src)
    env["NO_COLOR"] = "1"
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if expect is not None and proc.returncode != expect:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc


def measured(args: list[str], cwd: Path, src: Path) -> Measured:
    start = time.perf_counter()
    proc = run([sys.executable, "-c", WRAPPER, *args], cwd, src)
    seconds = time.perf_counter() - start
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK ")][-1]
    return Measured(int(peak.split()[1]) / 1024, seconds)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build(root: Path, entries: int) -> float:
    """The project with a lock of ``entries`` + 2 entries, committed; returns the lock's MB."""
    sys.path.insert(0, str(SRC))
    from lockstep.oracles.corpus.lock import Entry, Lock, read_lock, write_lock

    (root / "fixtures").mkdir(parents=True)
    (root / "lockstep.toml").write_text(CONFIG)
    (root / "harness.py").write_text(HARNESS)
    (root / "fixtures/m_one.json").write_text('{"a": 1}')
    (root / "fixtures/m_two.json").write_text('{"a": 2}')
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.invalid")
    git(root, "config", "user.name", "Bench")
    run([sys.executable, "-m", "lockstep", "record", "rows"], root, SRC)
    path = root / "lockstep/rows.lock.json"
    lock = read_lock(path)
    vanished = (f"v{i:08}.json" for i in range(entries))
    grown = [
        *lock.entries,
        *(Entry(i, hashlib.sha256(i.encode()).hexdigest(), 8) for i in vanished),
    ]
    fields = {f: getattr(lock, f) for f in lock.__struct_fields__}
    write_lock(path, Lock(**{**fields, "entries": grown}))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a big lock")
    return path.stat().st_size / 2**20


def steps(root: Path, src: Path) -> dict[str, Measured]:
    (root / "fixtures/a_new.json").write_text('{"a": 0}')
    found = {"record --new-only": measured(["record", "rows", "--new-only"], root, src)}
    (root / "fixtures/m_one.json").write_text('{"a": 11}')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one fixture changed")
    run([sys.executable, "-m", "lockstep", "replay", "rows", "--keep-pending"], root, src, expect=1)
    found["accept"] = measured(["accept", "--all", "--why", "One is eleven now."], root, src)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--baseline-src", type=Path, default=None, help="another checkout's src")
    parser.add_argument("--baseline-label", default="before", help="its name in the table")
    parser.add_argument("--work", type=Path, default=None, help="folder to build in (kept)")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()

    work = (args.work or Path(tempfile.mkdtemp(prefix="lockstep-bench-lock-"))).resolve()
    base = work / "base"
    print(f"building a lock of {args.entries:,} entries in {base} ...", flush=True)
    size_mb = build(base, args.entries)
    print(f"  {size_mb:.0f} MB", flush=True)
    trees = [("this tree", SRC)]
    if args.baseline_src is not None:
        trees.append((args.baseline_label, args.baseline_src.resolve()))
    results: dict[str, dict[str, Measured]] = {}
    load = os.getloadavg()[0]
    for label, src in trees:
        root = work / label.replace(" ", "-")
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root, symlinks=True)
        print(f"{label}: ...", flush=True)
        results[label] = steps(root, src)
        for what, m in results[label].items():
            print(f"  {what}: {m.peak_mib:.1f} MiB peak, {m.seconds:.1f} s", flush=True)
    lines = [
        "| command | " + " | ".join(f"{label}: peak MiB, wall s" for label, _ in trees) + " |",
        "|---|" + "---:|" * len(trees),
    ]
    for what in ("record --new-only", "accept"):
        cells = [
            f"{results[label][what].peak_mib:.0f}, {results[label][what].seconds:.0f}"
            for label, _ in trees
        ]
        lines.append(f"| `{what}` | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print()
    print(table)
    if args.write_results:
        section = "\n".join(
            [
                HEADING,
                "",
                f"`python bench/bench_corpus_lock.py --entries {args.entries}` on "
                f"{time.strftime('%Y-%m-%d')}: a corpus lock of {args.entries + 2:,} entries "
                f"({size_mb:.0f} MB) whose fixtures are gone but two; `record --new-only` adds a "
                "third fixture, `accept --all` accepts one drifted fixture. Peak memory is the "
                "command process's own high-water mark (VmHWM); wall time on a shared 2-core "
                f"machine, load average {load:.1f} at the start (not a stable figure).",
                "",
                table,
                "",
            ]
        )
        write_section(HEADING, section)
        print(f"\nwrote the section to {RESULTS}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
