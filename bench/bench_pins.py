"""Pins benchmark: replaying N pins of a small Python CLI, against a shell loop, prysk and TextTest.

Run ``python bench/bench_pins.py [--cases N] [--repeat R] [--probe-cases P] [--probe-runs K]
[--work DIR] [--write-results] [--warm]``.

With ``--warm`` it measures warm pins instead (``warm = true``): the shell loop,
cold replay and warm replay of the same CLI, 1 job, side by side, once as is and
once importing a stdlib-heavy set first; its figures go to "Pins, warm".

It builds a project with a small deterministic Python CLI (an invoice
calculator: parses its arguments and an env key, prints a few lines on stdout
and one on stderr, exits 0 or 3) and N cases, records the pins once, then
times, each as a fresh subprocess as a user would type it:

* ``lockstep replay`` with ``--jobs 1`` and ``--jobs 2``;
* the floor: a plain ``sh`` loop running the same N commands in the same
  environment and comparing exit code, stdout and stderr with ``cmp`` (and the
  same loop split over 2 processes with ``xargs -P 2``);
* prysk running the same cases as N ``.t`` files (exit code and both streams
  in the transcript);
* TextTest (``texttestc -b``) running the same cases (exit code, stdout and
  stderr), when it is installed;
* ``lockstep probe NAME`` with P cases × K runs, ``--jobs 1`` and ``--jobs 2``,
  next to a shell loop running the same P × K commands.

Verify runs are repeated and the fastest kept.  It prints a table of seconds
and ratios; with ``--write-results`` it also rewrites the "Pins" section of
``bench/RESULTS.md``, leaving the other sections alone.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shlex
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
PY = sys.executable
LOCKSTEP = [PY, "-m", "lockstep"]
BIN = Path(PY).parent

CLI = """\
import os, sys
args = sys.argv[1:]
rate = float(os.environ.get("TAX_RATE", "0"))
if not args:
    print("usage: calc QTY UNIT_CENTS [NAME]", file=sys.stderr)
    sys.exit(3)
qty, unit = int(args[0]), int(args[1])
name = args[2] if len(args) > 2 else "anonymous"
net = qty * unit
tax = int(round(net * rate))
print(f"customer: {name}")
print(f"net:   {net // 100}.{net % 100:02d}")
print(f"tax:   {tax // 100}.{tax % 100:02d}")
print(f"gross: {(net + tax) // 100}.{(net + tax) % 100:02d}")
print(f"calc: {qty} x {unit}", file=sys.stderr)
"""

ENV_BASE = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0"}


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    env: dict[str, str]


def make_cases(n: int) -> list[Case]:
    cases = []
    for i in range(n):
        argv: tuple[str, ...] = () if i % 50 == 49 else (str(i % 7 + 1), str(100 + i * 37), f"c{i}")
        env = {"TAX_RATE": f"0.{i % 3 + 1}"} if i % 2 else {}
        cases.append(Case(f"case-{i:04d}", argv, env))
    return cases


HEAVY_IMPORTS = ("argparse", "csv", "decimal", "email.message", "http.client", "json")
"""What the heavy variant of the CLI imports first (a stdlib-heavy set, ~40 ms of imports)."""

HEAVY_CLI = "import " + ", ".join(HEAVY_IMPORTS) + "\n" + CLI


def build_project(root: Path, cases: list[Case], *, cli: str = CLI, extra: str = "") -> None:
    root.mkdir(parents=True)
    (root / "calc.py").write_text(cli, encoding="utf-8")
    (root / "lockstep.toml").write_text(
        '[[pins]]\nname = "calc"\ncommand = ["python", "calc.py"]\ncases = "cases.toml"\n'
        'env_keys = ["TAX_RATE"]\nrules = ["uuid", "iso-timestamp"]\n' + extra,
        encoding="utf-8",
    )
    lines = []
    for c in cases:
        lines.append(f'[[case]]\nid = "{c.id}"\nargv = [{", ".join(repr(a) for a in c.argv)}]')
        if c.env:
            lines.append("env = { " + ", ".join(f'{k} = "{v}"' for k, v in c.env.items()) + " }")
        lines.append("")
    (root / "cases.toml").write_text("\n".join(lines), encoding="utf-8")


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], **ENV_BASE, **extra}


def expected_outputs(root: Path, cases: list[Case]) -> None:
    """Run each case once and keep exit code, stdout and stderr (the shell loop's oracle)."""
    exp = root / "expected"
    exp.mkdir()
    for c in cases:
        proc = subprocess.run(
            [PY, "calc.py", *c.argv],
            cwd=root,
            env=child_env(c.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
        (exp / f"{c.id}.out").write_bytes(proc.stdout)
        (exp / f"{c.id}.err").write_bytes(proc.stderr)
        (exp / f"{c.id}.code").write_text(f"{proc.returncode}\n")


def shell_line(c: Case) -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in child_env(c.env).items())
    cmd = " ".join(shlex.quote(a) for a in (PY, "calc.py", *c.argv))
    d = f"/tmp/$$-{c.id}"
    return (
        f"env -i {env} {cmd} </dev/null >{d}.out 2>{d}.err; echo $? >{d}.code; "
        f"cmp -s {d}.out expected/{c.id}.out && cmp -s {d}.err expected/{c.id}.err && "
        f"cmp -s {d}.code expected/{c.id}.code || echo FAIL {c.id}; rm -f {d}.out {d}.err {d}.code"
    )


def build_shell(root: Path, cases: list[Case], repeat_each: int = 1, name: str = "loop") -> None:
    body = [shell_line(c) for c in cases for _ in range(repeat_each)]
    (root / f"{name}.sh").write_text("#!/bin/sh\n" + "\n".join(body) + "\n", encoding="utf-8")
    (root / f"{name}.lines").write_text("\n".join(body) + "\n", encoding="utf-8")


def build_prysk(root: Path, cases: list[Case]) -> None:
    folder = root / "prysk"
    folder.mkdir()
    for c in cases:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in child_env(c.env).items())
        cmd = " ".join(shlex.quote(a) for a in (PY, str(root / "calc.py"), *c.argv))
        command = f"env -i {env} {cmd} 2>&1 </dev/null"
        proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True)
        code = proc.returncode
        lines = [f"  $ {command}"]
        lines += [f"  {line}" for line in proc.stdout.splitlines()]
        if code:
            lines.append(f"  [{code}]")
        (folder / f"{c.id}.t").write_text("\n".join(lines) + "\n", encoding="utf-8")


def build_texttest(root: Path, cases: list[Case]) -> None:
    app = root / "texttest" / "calc"
    app.mkdir(parents=True)
    (app / "config.calc").write_text(f"executable:{root / 'calc.py'}\ninterpreter:{PY}\n")
    (app / "testsuite.calc").write_text("\n".join(c.id for c in cases) + "\n")
    for c in cases:
        t = app / c.id
        t.mkdir()
        (t / "options.calc").write_text(" ".join(c.argv) + "\n")
        if c.env:
            (t / "environment.calc").write_text("".join(f"{k}:{v}\n" for k, v in c.env.items()))
        shutil.copyfile(root / "expected" / f"{c.id}.out", t / "output.calc")
        shutil.copyfile(root / "expected" / f"{c.id}.err", t / "errors.calc")
        code = (root / "expected" / f"{c.id}.code").read_text()
        if code.strip() != "0":
            (t / "exitcode.calc").write_text(code)


@dataclass(frozen=True)
class Timed:
    label: str
    seconds: float
    note: str = ""
    cpu: float = 0.0
    """CPU seconds of the command and every process it waited for (0: not measured)."""


def timed(
    argv: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
    label: str,
) -> float:
    full = dict(os.environ)
    full.pop("LOCKSTEP_CONFIG", None)
    full["NO_COLOR"] = "1"
    if env:
        full.update(env)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=full, capture_output=True)
    seconds = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    if proc.returncode not in ok or b"FAIL " in proc.stdout:
        sys.exit(f"{label}: exit {proc.returncode}\n{out[-3000:].decode(errors='replace')}")
    return seconds


def best(repeat: int, argv: list[str], cwd: Path, **kw: object) -> float:
    return min(timed(argv, cwd, **kw) for _ in range(repeat))  # type: ignore[arg-type]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_with_cpu(repeat: int, argv: list[str], cwd: Path, label: str) -> tuple[float, float]:
    """Fastest wall time of ``repeat`` runs, and the least CPU time (the figure that a loaded
    machine disturbs least)."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = children_cpu()
        walls.append(timed(argv, cwd, label=label))
        cpus.append(children_cpu() - before)
    return min(walls), min(cpus)


def versions() -> str:
    names = ("lockstep", "prysk", "texttest", "msgspec")
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def machine() -> str:
    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores; {platform.system()} {platform.release()}; Python {platform.python_version()}"


def table(rows: list[Timed], base: float, base_label: str) -> list[str]:
    width = max(len(r.label) for r in rows)
    if any(r.cpu for r in rows):
        cpu_base = rows[0].cpu
        out = [
            f"| {'run':<{width}} | seconds | × {base_label} | CPU s | × (CPU) |",
            f"|{'-' * (width + 2)}|--------:|------:|------:|------:|",
        ]
        for r in rows:
            out.append(
                f"| {r.label:<{width}} | {r.seconds:7.2f} | {r.seconds / base:5.2f} |"
                f" {r.cpu:5.2f} | {r.cpu / cpu_base:5.2f} |"
            )
        return out
    out = [
        f"| {'run':<{width}} | seconds | × {base_label} |",
        f"|{'-' * (width + 2)}|--------:|------:|",
    ]
    for r in rows:
        note = f" {r.note}" if r.note else ""
        out.append(f"| {r.label:<{width}} | {r.seconds:7.2f} | {r.seconds / base:5.2f} |{note}")
    return out


def warm_rows(
    work: Path, cases: list[Case], repeat: int, *, heavy: bool, inferred: bool = False
) -> list[Timed]:
    """The shell loop, cold replay and warm replay of one program, 1 job, side by side.

    ``inferred``: only ``warm = true``, record infers what to preload."""
    name = ("heavy" if heavy else "light") + ("-inferred" if inferred else "")
    root = work / f"warm-{name}"
    if root.exists():
        shutil.rmtree(root)
    imports = ", ".join(f'"{m}"' for m in HEAVY_IMPORTS) if heavy else ""
    build_project(
        root,
        cases,
        cli=HEAVY_CLI if heavy else CLI,
        extra="warm = true\n" if inferred else f"warm = true\nwarm_imports = [{imports}]\n",
    )
    expected_outputs(root, cases)
    build_shell(root, cases)
    timed([*LOCKSTEP, "record", "calc"], root, label=f"record warm {name}")
    refused = (root / "lockstep" / "calc.pins.jsonl").read_text().count('"warm":false')
    if refused:
        sys.exit(f"warm {name}: {refused} cases refused warm")
    cold_root = work / f"cold-{name}"
    if cold_root.exists():
        shutil.rmtree(cold_root)
    shutil.copytree(root, cold_root)
    config = cold_root / "lockstep.toml"
    config.write_text(config.read_text().split("warm = true")[0])
    what = "imports " + ", ".join(HEAVY_IMPORTS) if heavy else "no imports beyond os, sys"
    how = "only `warm = true`" if inferred else "`warm_imports` listed"
    replay = [*LOCKSTEP, "replay", "calc", "--jobs", "1", "--quiet"]
    loop = best_with_cpu(repeat, ["sh", "loop.sh"], root, "shell loop")
    cold = best_with_cpu(repeat, replay, cold_root, "cold")
    warm = best_with_cpu(repeat, replay, root, "warm")
    return [
        Timed(f"{name} CLI ({what}): shell loop", loop[0], cpu=loop[1]),
        Timed(f"{name} CLI: lockstep replay, cold", cold[0], cpu=cold[1]),
        Timed(f"{name} CLI: lockstep replay, warm ({how})", warm[0], cpu=warm[1]),
    ]


def warm_main(args: argparse.Namespace) -> None:
    """``--warm``: warm pins against cold pins and the shell loop (its own RESULTS section)."""
    work = args.work or Path(tempfile.mkdtemp(prefix="lockstep-bench-pins-warm-"))
    work.mkdir(parents=True, exist_ok=True)
    cases = make_cases(args.cases)
    print(f"warm pins benchmark: {args.cases} cases, fastest of {args.repeat}; {machine()}")
    lines = [f"Replay of {args.cases} pins, 1 job (seconds, fastest of {args.repeat}):", ""]
    summary = []
    start_load = os.getloadavg()[0]
    for heavy, inferred in ((False, False), (True, False), (True, True)):
        rows = warm_rows(work, cases, args.repeat, heavy=heavy, inferred=inferred)
        floor = rows[0].seconds
        lines += [*table(rows, floor, "shell loop"), ""]
        name = ("heavy" if heavy else "light") + (", only warm = true" if inferred else "")
        summary.append(
            f"{name}: warm is {floor / rows[2].seconds:.1f}× faster than "
            f"the shell loop and {rows[1].seconds / rows[2].seconds:.1f}× faster than cold replay"
            f" (CPU time: {rows[0].cpu / rows[2].cpu:.1f}× and {rows[1].cpu / rows[2].cpu:.1f}×)"
        )
    load = os.getloadavg()
    lines += [
        *summary,
        "(goal: warm ≥ 4× faster than the shell loop)",
        f"load average while it ran: {load[0]:.1f} (start {start_load:.1f})",
    ]
    for line in lines:
        print(line)
    if args.write_results:
        section = "\n".join(
            [
                "## Pins, warm",
                "",
                f"`python bench/bench_pins.py --warm --cases {args.cases} --repeat {args.repeat}`"
                f" — {machine()}; {versions()}.",
                "",
                "The same invoice CLI as in *Pins*, and a heavy variant that first imports a"
                " stdlib-heavy set: once with `warm_imports` listing those modules, once with only"
                " `warm = true` (record infers the preload from the modules the cases imported)."
                "  The shell loop starts a fresh interpreter per case (the floor of any cold"
                " runner); cold replay is `lockstep replay` without `warm`; warm replay forks each"
                " case from a preloaded server.  Record proved every case identical warm and cold"
                " (no case refused).  CPU s is the user + system time of the command and every"
                " process it waited for: on a machine shared with other jobs it is the figure to"
                " compare.",
                "",
                *lines,
                "",
            ]
        )
        write_section("## Pins, warm", section)
        print(f"\nwrote the 'Pins, warm' section of {RESULTS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--probe-cases", type=int, default=20)
    parser.add_argument("--probe-runs", type=int, default=10)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--write-results", action="store_true")
    parser.add_argument(
        "--warm", action="store_true", help="only warm pins vs cold pins and the shell loop"
    )
    args = parser.parse_args()
    if args.warm:
        warm_main(args)
        return

    work = args.work or Path(tempfile.mkdtemp(prefix="lockstep-bench-pins-"))
    root = work / "project"
    if root.exists():
        shutil.rmtree(root)
    cases = make_cases(args.cases)
    build_project(root, cases)
    expected_outputs(root, cases)
    build_shell(root, cases)
    build_prysk(root, cases)
    build_texttest(root, cases)
    probe_cases = cases[: args.probe_cases]
    build_shell(root, probe_cases, repeat_each=args.probe_runs, name="probe_loop")

    print(f"pins benchmark: {args.cases} cases, fastest of {args.repeat}; {machine()}")
    record = timed([*LOCKSTEP, "record", "calc"], root, label="record")
    print(f"  lockstep record (2 runs per case + env discovery): {record:.2f} s")

    rows: list[Timed] = []
    floor = best(args.repeat, ["sh", "loop.sh"], root, label="shell loop")
    rows.append(Timed("shell loop (sh + cmp), 1 process", floor))
    rows.append(
        Timed(
            "shell loop, xargs -P 2",
            best(
                args.repeat,
                ["sh", "-c", "xargs -P 2 -I{} -d '\\n' sh -c '{}' < loop.lines"],
                root,
                label="xargs loop",
            ),
        )
    )
    for jobs in (1, 2):
        rows.append(
            Timed(
                f"lockstep replay --jobs {jobs}",
                best(
                    args.repeat,
                    [*LOCKSTEP, "replay", "calc", "--jobs", str(jobs), "--quiet"],
                    root,
                    label=f"replay -j{jobs}",
                ),
            )
        )
    prysk = BIN / "prysk"
    if prysk.exists():
        rows.append(
            Timed(
                "prysk (200 .t files)".replace("200", str(args.cases)),
                best(args.repeat, [str(prysk), "-q", "prysk"], root, label="prysk"),
            )
        )
    texttest = BIN / "texttestc"
    if texttest.exists():
        tt_tmp = work / "texttest-tmp"
        tt_env = {"TEXTTEST_HOME": str(root / "texttest"), "TEXTTEST_TMP": str(tt_tmp)}
        rows.append(
            Timed(
                "TextTest (texttestc -b)",
                best(
                    args.repeat,
                    [str(texttest), "-a", "calc", "-b", "bench", "-c", str(root)],
                    root,
                    env=tt_env,
                    label="texttest",
                ),
            )
        )

    probe_rows: list[Timed] = []
    total = args.probe_cases * args.probe_runs
    pfloor = best(args.repeat, ["sh", "probe_loop.sh"], root, label="probe loop")
    probe_rows.append(Timed(f"shell loop, {total} runs", pfloor))
    subset = root / "probe_subset"
    for jobs in (1, 2):
        config = (root / "lockstep.toml").read_text().replace('"cases.toml"', '"probe_cases.toml"')
        (subset).mkdir(exist_ok=True)
        (subset / "lockstep.toml").write_text(config)
        shutil.copyfile(root / "calc.py", subset / "calc.py")
        text = (root / "cases.toml").read_text().split("\n\n")[: args.probe_cases]
        (subset / "probe_cases.toml").write_text("\n\n".join(text) + "\n")
        probe_rows.append(
            Timed(
                f"lockstep probe calc --runs {args.probe_runs} --jobs {jobs}",
                best(
                    args.repeat,
                    [
                        *LOCKSTEP,
                        "probe",
                        "calc",
                        "--runs",
                        str(args.probe_runs),
                        "--jobs",
                        str(jobs),
                    ],
                    subset,
                    label=f"probe -j{jobs}",
                ),
            )
        )

    lines = [f"Replay of {args.cases} pins (seconds, fastest of {args.repeat}):", ""]
    lines += table(rows, floor, "shell loop")
    by = {r.label: r.seconds for r in rows}
    j1 = by["lockstep replay --jobs 1"]
    j2 = by["lockstep replay --jobs 2"]
    lines += [
        "",
        f"Probe of {args.probe_cases} cases × {args.probe_runs} runs:",
        "",
        *table(probe_rows, pfloor, "shell loop"),
        "",
        f"replay --jobs 1 vs the plain loop: {j1 / floor:.2f}× (goal ≤ 1.10×); "
        f"--jobs 2 speed-up over --jobs 1: {j1 / j2:.2f}× on {os.cpu_count()} cores",
    ]
    for line in lines:
        print(line)
    if args.write_results:
        section = "\n".join(
            [
                "## Pins",
                "",
                f"`python bench/bench_pins.py --cases {args.cases} --repeat {args.repeat}` — "
                f"{machine()}; {versions()}.",
                "",
                "A small Python CLI (an invoice calculator; stdout, stderr, exit 0 or 3, one env key);"
                " every tool runs the same commands in the same minimal environment and compares the"
                " same outputs.  The shell loop is the floor: lockstep's own cost is what it adds.",
                "",
                *lines,
                "",
            ]
        )
        write_section("## Pins", section)
        print(f"\nwrote the Pins section of {RESULTS}")


if __name__ == "__main__":
    main()
