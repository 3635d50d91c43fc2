"""Tape benchmark: the cost of recording one collaborator call, next to unittest.mock.

Run ``python bench/bench_tape.py [--calls N] [--repeat R] [--write-results]``.

For each kind of call it times N calls through

* the bare function (the baseline every figure subtracts),
* ``lockstep.Tape.spy`` and a ``Tape.watch`` proxy (events frozen through the
  canonical codec at call time, ordered, with their outcomes),
* ``unittest.mock.Mock(wraps=fn)`` and ``Mock(side_effect=fn)`` (each call kept in
  ``mock_calls``, arguments kept by reference, not frozen),

with a fresh recorder per run; the fastest of R runs is kept.  The goal for
the tape is under 3 µs of overhead per event with small arguments.  It also
times comparing two 10,000-event tapes (ordered with one call missing, and
multiset) and writing one as a tape file.  With ``--write-results`` it rewrites
the "Tape" section of ``bench/RESULTS.md``, leaving the other sections alone.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from importlib import metadata
from pathlib import Path
from typing import Any
from unittest import mock

from results_file import write_section

from lockstep import Tape
from lockstep.oracles.tape.compare import compare
from lockstep.oracles.tape.document import VERSION, Output, TapeDocument, write_document

HERE = Path(__file__).resolve().parent
SECTION = "## Tape"


class Rates:
    def rate(self, currency: str, day: int) -> float:
        return 1.0


def rate(currency: str, day: int) -> float:
    return 1.0


def fee(total: Decimal, *, days: int) -> Decimal:
    return total


CallMaker = Callable[[], Callable[..., Any]]

SCENARIOS: list[tuple[str, Callable[[Callable[..., Any]], None], Any]] = [
    ("small args: rate('EUR', 3)", lambda f: f("EUR", 3), rate),
    ("Decimal + kwarg: fee(Decimal('12.50'), days=3)", lambda f: f(Decimal("12.50"), days=3), fee),
]


def best_per_call(
    make: CallMaker, call: Callable[[Callable[..., Any]], None], n: int, repeat: int
) -> float:
    """Fastest of ``repeat`` runs of ``n`` calls, in CPU µs per call (a fresh recorder each
    run; CPU time, so other jobs on the machine do not count)."""
    best = float("inf")
    for _ in range(repeat):
        target = make()
        start = time.process_time_ns()
        for _ in range(n):
            call(target)
        elapsed = time.process_time_ns() - start
        best = min(best, elapsed / n / 1000)
    return best


def recorders(fn: Callable[..., Any]) -> list[tuple[str, CallMaker]]:
    def spy() -> Callable[..., Any]:
        return Tape().spy("rates.rate", fn)

    def watched() -> Callable[..., Any]:
        owner = type("Owner", (), {"call": staticmethod(fn)})()
        proxy = Tape().watch(owner, name="rates")
        return lambda *a, **k: proxy.call(*a, **k)

    return [
        ("bare function (baseline)", lambda: fn),
        ("lockstep Tape.spy", spy),
        ("lockstep Tape.watch proxy", watched),
        ("unittest.mock.Mock(wraps=fn)", lambda: mock.Mock(wraps=fn)),
        ("unittest.mock.Mock(side_effect=fn)", lambda: mock.Mock(side_effect=fn)),
    ]


def time_tapes(n: int) -> list[tuple[str, float]]:
    tape = Tape()
    spied = tape.spy("rates.rate", rate)
    for i in range(n):
        spied(("EUR", "USD", "GBP")[i % 3], i)
    events = tape.events
    missing = events[: n // 2] + events[n // 2 + 1 :]
    shuffled = list(reversed(events))
    rows = []
    start = time.perf_counter()
    lines = compare(events, missing, "ordered")
    rows.append(
        (
            f"compare ordered, {n:,} events, one call missing ({len(lines)} lines)",
            time.perf_counter() - start,
        )
    )
    start = time.perf_counter()
    compare(events, shuffled, "multiset")
    rows.append((f"compare multiset, {n:,} events, reversed", time.perf_counter() - start))
    with tempfile.TemporaryDirectory() as folder:
        doc = TapeDocument(
            version=VERSION, name="bench", mode="ordered", rules=[], events=events, output=Output()
        )
        start = time.perf_counter()
        write_document(Path(folder) / "bench.tape.json", doc)
        rows.append((f"write a {n:,}-event tape file", time.perf_counter() - start))
    return rows


def machine() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"lockstep {metadata.version('lockstep')}, msgspec {metadata.version('msgspec')}"
    )


def run(n: int, repeat: int) -> str:
    out = [SECTION, "", f"Machine: {machine()}.", ""]
    out.append(
        f"Per-call cost, fastest of {repeat} runs of {n:,} calls (µs per call; overhead = minus the bare call)."
    )
    out.append("")
    for title, call, fn in SCENARIOS:
        out += [f"### {title}", "", "| recorder | µs/call | overhead µs |", "|---|---:|---:|"]
        baseline = None
        for name, make in recorders(fn):
            per_call = best_per_call(make, call, n, repeat)
            baseline = per_call if baseline is None else baseline
            overhead = "" if name.startswith("bare") else f"{per_call - baseline:.2f}"
            out.append(f"| {name} | {per_call:.2f} | {overhead} |")
        out.append("")
    out += ["### Whole tapes", "", "| operation | seconds |", "|---|---:|"]
    for name, seconds in time_tapes(10_000):
        out.append(f"| {name} | {seconds:.3f} |")
    out.append("")
    out.append(
        "The tape freezes arguments and outcomes through the canonical codec at call time "
        "(so a list mutated later is recorded as passed); Mock keeps references."
    )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--calls", type=int, default=100_000, help="calls per run (default 100,000)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per recorder (fastest kept)")
    parser.add_argument("--write-results", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    section = run(args.calls, args.repeat)
    sys.stdout.write(section)
    if args.write_results:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()
