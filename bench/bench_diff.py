"""Diff benchmark: the document diff of a drift where every other line changed.

Run ``python bench/bench_diff.py [--lines N ...] [--old-limit M] [--write-results]``.

For each size N it builds a text of N lines and a copy in which every other line
changed (the worst case of a pins drift: no run of more than one equal line), then
times

* ``lockstep.diff.document_diff`` as it is now (the bounded matcher), and
* the diff as it was before, ``difflib.unified_diff`` over the same lines, only up to
  ``--old-limit`` lines (it is quadratic: 25,000 lines take minutes).

It also times ``lockstep replay`` of a pins oracle whose program prints the largest N
lines and now changes every other one (the whole command, as a user runs it).

With ``--write-results`` it rewrites the "Diff" section of ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import write_section

from lockstep.diff import document_diff

SECTION = "## Diff"


def _texts(n: int) -> tuple[bytes, bytes]:
    old = "".join(f"row {i}\ntotal {i}\n" for i in range(n // 2))
    new = "".join(f"row {i}\ntotal {i}?\n" for i in range(n // 2))
    return old.encode(), new.encode()


def _new(old: bytes, new: bytes) -> float:
    start = time.perf_counter()
    text = document_diff(old, new)
    took = time.perf_counter() - start
    assert text.startswith("--- expected")
    return took


def _old(old: bytes, new: bytes) -> float:
    start = time.perf_counter()
    lines = list(
        difflib.unified_diff(
            old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True)
        )
    )
    took = time.perf_counter() - start
    assert lines
    return took


PROGRAM = """\
import os
mark = os.environ.get("MARK", "")
for i in range({half}):
    print(f"row {{i}}")
    print(f"total {{i}}" + mark)
"""


def _replay(n: int) -> tuple[float, int]:
    """Seconds and exit code of ``lockstep replay`` on a pins drift of ``n`` lines."""
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        (root / "lockstep.toml").write_text(
            '[[pins]]\nname = "long"\ncommand = ["python", "long.py"]\n'
            'cases = "cases.toml"\nenv_keys = ["MARK"]\n'
        )
        (root / "cases.toml").write_text('[[case]]\nid = "all"\n')
        program = root / "long.py"
        program.write_text(PROGRAM.format(half=n // 2))
        lockstep = [sys.executable, "-m", "lockstep"]
        subprocess.run([*lockstep, "record", "long"], cwd=root, check=True, capture_output=True)
        program.write_text(PROGRAM.format(half=n // 2).replace('os.environ.get("MARK", "")', '"?"'))
        start = time.perf_counter()
        done = subprocess.run([*lockstep, "replay", "long"], cwd=root, capture_output=True)
        return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--lines", type=int, nargs="+", default=[12_500, 25_000, 400_000], help="sizes"
    )
    parser.add_argument(
        "--old-limit", type=int, default=25_000, help="largest size difflib alone is timed at"
    )
    parser.add_argument("--write-results", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    rows = []
    for n in args.lines:
        old, new = _texts(n)
        now = _new(old, new)
        before = _old(old, new) if n <= args.old_limit else None
        shown = f"{before:.2f} s" if before is not None else "not run"
        print(f"{n:>9,} lines, every other changed: before {shown:>9}, now {now:.2f} s")
        rows.append(f"| {n:,} | {shown} | **{now:.2f} s** |")
    biggest = max(args.lines)
    took, code = _replay(biggest)
    print(f"lockstep replay, pins drift of {biggest:,} lines: {took:.2f} s (exit {code})")
    load = os.getloadavg()[0]
    section = (
        f"{SECTION}\n\n"
        "`python bench/bench_diff.py` (a text of N lines and a copy in which every other\n"
        "line changed; `document_diff` now, next to `difflib.unified_diff` alone, which is\n"
        f"what it was before). Python {platform.python_version()}, {os.cpu_count()} cores,\n"
        f"load average {load:.1f}.\n\n"
        "| lines | before (difflib) | now |\n|---:|---:|---:|\n"
        + "\n".join(rows)
        + f"\n\nThe whole `lockstep replay` of a pins drift of {biggest:,} such lines"
        f" (record, then the program changed): **{took:.2f} s**, exit {code}.\n"
    )
    if args.write_results:
        write_section(SECTION, section)
    else:
        sys.stdout.write("\n" + section)


if __name__ == "__main__":
    main()
