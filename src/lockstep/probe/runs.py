"""The nondeterminism probe: run one case N times and count distinct output signatures.

A golden master captured once from a program that prints a run id or a clock
reading is a coin flip.  Before freezing, the probe *measures*: it runs the
same case N times (in parallel where asked), and reports each distinct
signature ``(exit code, sha256 of stdout, sha256 of stderr)`` with its count,
once on the raw bytes and once after the normalization rules.  One signature
after the rules means the case can be pinned; several mean a rule is missing,
and :func:`where_differs` shows the first lines where two variants part.

Recording a pin uses the same machinery (at least two runs per case), so a
case that the probe calls flaky is refused at record time too.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from lockstep.parallel import run_parallel
from lockstep.process import DEFAULT_OUTPUT_CAP, RunResult, run
from lockstep.rules import RuleSet
from lockstep.store import sha256_hex

T = TypeVar("T")


@dataclass(frozen=True, order=True)
class Signature:
    """What identifies one run's observable behaviour."""

    exit_code: int
    stdout_sha: str
    stderr_sha: str

    @classmethod
    def of(cls, result: RunResult) -> Signature:
        return cls(result.exit_code, sha256_hex(result.stdout), sha256_hex(result.stderr))

    def short(self) -> str:
        return (
            f"exit {self.exit_code}  stdout {self.stdout_sha[:12]}  stderr {self.stderr_sha[:12]}"
        )


@dataclass(frozen=True)
class ProbeTarget:
    """One case to probe: the exact argv, environment, stdin and folder of each run."""

    label: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    stdin: bytes = b""
    timeout: float = 30.0
    max_output: int = DEFAULT_OUTPUT_CAP
    """Bytes each of stdout and stderr may hold before the run is killed."""
    vary_hash_seed: bool = False
    """Give run ``n`` (after the first) ``PYTHONHASHSEED=n``: output that depends on set or
    dict-of-str order then varies here rather than on some later replay."""


@dataclass(frozen=True)
class Variant:
    """One distinct signature, how many runs produced it, and one of those runs."""

    signature: Signature
    count: int
    example: RunResult


@dataclass(frozen=True)
class Difference:
    """Where two variants part: the stream, the 1-based line, and each side's line."""

    stream: str
    line: int
    left: str
    right: str


def normalize(result: RunResult, rules: RuleSet) -> RunResult:
    """The run as the oracle sees it: stdout and stderr passed through the rules."""
    if not rules.active:
        return result
    return dataclasses.replace(
        result,
        stdout=rules.apply_bytes(result.stdout),
        stderr=rules.apply_bytes(result.stderr),
    )


def _show(line: bytes) -> str:
    """A line of output as a person reads it: any secret the detector finds (or a value
    of a variable named like one) masked before it is cut to length, control characters
    as escapes."""
    from lockstep.report.inert import inert
    from lockstep.secrets.policy import display_mask

    text = inert(display_mask(None)(line.decode("utf-8", "backslashreplace")))
    return text if len(text) <= 160 else text[:157] + "..."


def where_differs(a: RunResult, b: RunResult, *, limit: int = 3) -> tuple[Difference, ...]:
    """The first differing lines of two runs, stream by stream (exit code first)."""
    found: list[Difference] = []
    if a.exit_code != b.exit_code:
        found.append(Difference("exit_code", 0, str(a.exit_code), str(b.exit_code)))
    for stream, left, right in (("stdout", a.stdout, b.stdout), ("stderr", a.stderr, b.stderr)):
        if left == right:
            continue
        left_lines = left.split(b"\n")
        right_lines = right.split(b"\n")
        matcher = difflib.SequenceMatcher(None, left_lines, right_lines, autojunk=False)
        shown = 0
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                if shown >= limit:
                    break
                lline = left_lines[i1 + k] if i1 + k < i2 else None
                rline = right_lines[j1 + k] if j1 + k < j2 else None
                found.append(
                    Difference(
                        stream,
                        (i1 + k + 1) if lline is not None else (j1 + k + 1),
                        "(no line)" if lline is None else _show(lline),
                        "(no line)" if rline is None else _show(rline),
                    )
                )
                shown += 1
            if shown >= limit:
                break
    return tuple(found)


@dataclass(frozen=True)
class ProbeReport:
    """The verdict of N runs of one target, before and after the rules."""

    target: ProbeTarget
    runs: int
    rules: tuple[str, ...]
    raw: tuple[Variant, ...]
    normalized: tuple[Variant, ...]
    fired: Mapping[str, int]
    timed_out: int = 0
    truncated: int = 0
    """Runs killed because stdout or stderr passed the output cap."""

    @property
    def deterministic(self) -> bool:
        return len(self.normalized) == 1

    def differences(self) -> tuple[Difference, ...]:
        """Where the two most common variants differ, after the rules (raw if the rules agree)."""
        variants = self.normalized if len(self.normalized) > 1 else self.raw
        if len(variants) < 2:
            return ()
        return where_differs(variants[0].example, variants[1].example)


@dataclass
class _Tally:
    counts: Counter[Signature] = field(default_factory=Counter)
    examples: dict[Signature, RunResult] = field(default_factory=dict)
    first_seen: dict[Signature, int] = field(default_factory=dict)

    def add(self, result: RunResult, index: int) -> None:
        sig = Signature.of(result)
        self.counts[sig] += 1
        if sig not in self.examples:
            self.examples[sig] = result
            self.first_seen[sig] = index

    def variants(self) -> tuple[Variant, ...]:
        ordered = sorted(self.counts, key=lambda s: (-self.counts[s], self.first_seen[s]))
        return tuple(Variant(s, self.counts[s], self.examples[s]) for s in ordered)


def probe(
    target: ProbeTarget, *, runs: int, jobs: int = 1, rules: RuleSet | None = None
) -> ProbeReport:
    """Run ``target`` ``runs`` times and tally signatures, raw and normalized."""
    return probe_many([target], runs=runs, jobs=jobs, rules=rules)[0]


def probe_many(
    targets: Sequence[ProbeTarget],
    *,
    runs: int,
    jobs: int = 1,
    rules: RuleSet | None = None,
    on_run: Callable[[], None] | None = None,
) -> list[ProbeReport]:
    """Probe several targets, spreading all their runs over ``jobs`` workers.

    A target with :attr:`ProbeTarget.vary_hash_seed` gets ``PYTHONHASHSEED=n`` on run
    ``n`` (run 0 keeps its own).  ``on_run`` is called after each of the
    ``len(targets) * runs`` runs (a progress bar's tick).
    """
    rules = rules or RuleSet()
    tallies = [(_Tally(), _Tally(), Counter[str]()) for _ in targets]
    timeouts = [0] * len(targets)
    truncations = [0] * len(targets)

    def task(t: ProbeTarget, n: int, vary: bool) -> Callable[[], RunResult]:
        env = {**t.env, "PYTHONHASHSEED": str(n)} if vary and n else t.env
        return lambda: run(
            t.argv, env=env, stdin=t.stdin, cwd=t.cwd, timeout=t.timeout, max_output=t.max_output
        )

    order = [(i, n) for i in range(len(targets)) for n in range(runs)]
    results = run_parallel(
        (task(targets[i], n, targets[i].vary_hash_seed) for i, n in order), jobs=jobs
    )
    for (i, n), result in zip(order, results, strict=True):
        raw, norm, fired = tallies[i]
        local = rules.fresh()
        raw.add(result, n)
        norm.add(normalize(result, local), n)
        fired.update(local.fired)
        timeouts[i] += result.timed_out
        truncations[i] += result.truncated_stream is not None
        if on_run is not None:
            on_run()
    return [
        ProbeReport(
            target=t,
            runs=runs,
            rules=tuple(rules.names),
            raw=tallies[i][0].variants(),
            normalized=tallies[i][1].variants(),
            fired=dict(tallies[i][2]),
            timed_out=timeouts[i],
            truncated=truncations[i],
        )
        for i, t in enumerate(targets)
    ]
