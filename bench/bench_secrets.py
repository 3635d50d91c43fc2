"""The cost of the secret scan on recording: the same ``lockstep record`` with and without it.

Three projects, built once: the 10,000-fixture corpus of ``bench_corpus.py`` (about 1 KB of
invoice JSON per fixture, rendered to a JSON summary), a ledger driver making 100,000
distinct calls ``label(i, "item-<i>")`` whose result is a short string, and the same with
bytes argument and result (``$bytes`` in the file, decoded by the scan).  Each is recorded
from scratch by ``python -m lockstep record`` (the whole command, fresh interpreter,
verification included; CPU seconds), alternating ``[lockstep] secrets = "on"`` (the default) and
``"off"`` after one run that is not counted; the best of ``--repeat`` runs of each is kept,
user + system CPU and user CPU alone.  Issue goal: on/off <= 1.3x.

    python bench/bench_secrets.py [--cases 10000] [--rows 100000] [--repeat 3] [--write-results]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_corpus import HARNESS, SEED, fixture_doc
from results_file import write_section

LEDGER_TARGET = """\
def label(n, name):
    return f"{name}: {n * 3 % 97} units"
"""

BYTES_TARGET = """\
def label(n, name):
    return name + b": " + str(n * 3 % 97).encode() + b" units"
"""

BYTES_DRIVER = """\
from shop.ops import label


def main():
    for i in range({rows}):
        label(i, f"item-{{i}}".encode())
"""

LEDGER_DRIVER = """\
from shop.ops import label


def main():
    for i in range({rows}):
        label(i, f"item-{{i}}")
"""


def corpus_project(root: Path, cases: int) -> None:
    (root / "fixtures").mkdir(parents=True)
    (root / "harness.py").write_text(HARNESS)
    rng = random.Random(SEED)
    for i in range(cases):
        data = json.dumps(fixture_doc(rng, i), indent=1)
        (root / "fixtures" / f"case_{i:06d}.json").write_text(data)
    (root / "oracle.toml").write_text(
        '[[corpus]]\nname = "rows"\nfixtures = "fixtures/*.json"\nrender = "harness:render"\n'
    )


def ledger_project(root: Path, rows: int, *, of_bytes: bool = False) -> None:
    """100,000 calls of ``label``: with str arguments and result, or (``of_bytes``) bytes
    ones, which the scan decodes from their base64 to read them as text."""
    (root / "shop").mkdir(parents=True)
    (root / "shop/__init__.py").write_text("")
    (root / "shop/ops.py").write_text(BYTES_TARGET if of_bytes else LEDGER_TARGET)
    (root / "drive.py").write_text((BYTES_DRIVER if of_bytes else LEDGER_DRIVER).format(rows=rows))
    (root / "oracle.toml").write_text(
        '[[ledger]]\nname = "label"\ntarget = "shop.ops:label"\ndriver = "drive:main"\n'
    )


def record_once(root: Path, secrets: str) -> float:
    """One ``lockstep record`` from scratch; CPU seconds (user + system) of the command and
    the processes it waited for (the verifying interpreter): on a shared, loaded machine
    wall-clock time says more about the neighbours than about the scan."""
    shutil.rmtree(root / "lockstep", ignore_errors=True)
    oracle = (root / "oracle.toml").read_text()
    (root / "lockstep.toml").write_text(f'[lockstep]\nsecrets = "{secrets}"\n\n{oracle}')
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "lockstep", "record"], cwd=root, env=env, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    seconds = user + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(
            f"record failed ({secrets}):\n{proc.stdout.decode()}{proc.stderr.decode()}"
        )
    USER[secrets] = min(USER.get(secrets, float("inf")), user)
    return seconds


USER: dict[str, float] = {}
"""The fastest user CPU seconds of each mode in the current :func:`compare` (system time,
mostly the file system's, swings by seconds on a shared machine; user time is steadier)."""


def compare(root: Path, repeat: int) -> tuple[float, float]:
    """The best of ``repeat`` runs of each mode, after one run that is not counted: the first
    record in a fresh folder pays seconds less system time than any later one (which first
    removes the previous run's 10,000 blob files), and would always fall to "off"."""
    record_once(root, "off")
    USER.clear()
    best = {"on": float("inf"), "off": float("inf")}
    for _ in range(repeat):
        for mode in ("off", "on"):
            best[mode] = min(best[mode], record_once(root, mode))
    return best["off"], best["on"]


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus_project(corpus, args.cases)
        off, on = compare(corpus, args.repeat)
        rows.append((f"corpus, {args.cases:,} fixtures", off, on, USER["off"], USER["on"]))
        print(
            f"corpus {args.cases:,}: off {off:.2f} s, on {on:.2f} s = {on / off:.2f}x "
            f"(user only: {USER['off']:.2f} s, {USER['on']:.2f} s)",
            flush=True,
        )
        ledger = Path(tmp) / "ledger"
        ledger_project(ledger, args.rows)
        off, on = compare(ledger, args.repeat)
        rows.append((f"ledger, {args.rows:,} rows", off, on, USER["off"], USER["on"]))
        print(
            f"ledger {args.rows:,}: off {off:.2f} s, on {on:.2f} s = {on / off:.2f}x "
            f"(user only: {USER['off']:.2f} s, {USER['on']:.2f} s)",
            flush=True,
        )
        ledger_bytes = Path(tmp) / "ledger-bytes"
        ledger_project(ledger_bytes, args.rows, of_bytes=True)
        off, on = compare(ledger_bytes, args.repeat)
        rows.append(
            (f"ledger, {args.rows:,} rows of bytes values", off, on, USER["off"], USER["on"])
        )
        print(
            f"ledger of bytes {args.rows:,}: off {off:.2f} s, on {on:.2f} s = {on / off:.2f}x "
            f"(user only: {USER['off']:.2f} s, {USER['on']:.2f} s)",
            flush=True,
        )
    lines = [
        "## Secrets: recording with and without the scan",
        "",
        f"`python bench/bench_secrets.py --repeat {args.repeat}` (load average "
        f"{load_average()}, {os.cpu_count()} cores). Whole `lockstep record` runs from scratch "
        '(verification included), CPU seconds (user + system, the command and its children), best of each, alternating `[lockstep] secrets = "off"` and '
        'the default `"on"` after one run that is not counted (the first record in a fresh '
        "folder pays seconds less system time than any later one). System time is mostly the "
        "file system's (the same calls in both modes) and swings by seconds between runs; the "
        "user CPU column is the steadier figure for what the scan costs.",
        "",
        "| recording | scan off (CPU) | scan on (CPU) | on / off | user CPU only: off, on | goal |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for label, off, on, user_off, user_on in rows:
        ratio = on / off
        mark = "≤ 1.3× — met" if ratio <= 1.3 else "≤ 1.3× — **not met**"
        lines.append(
            f"| {label} | {off:.2f} s | {on:.2f} s | **{ratio:.2f}×** | "
            f"{user_off:.2f} s, {user_on:.2f} s = {user_on / user_off:.2f}× | {mark} |"
        )
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write_results:
        write_section("## Secrets: recording with and without the scan", section)


if __name__ == "__main__":
    main()
