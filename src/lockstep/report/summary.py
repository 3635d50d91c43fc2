"""Counting outcomes per oracle: the numbers every reporter shows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lockstep.model import Outcome, Status


@dataclass
class Tally:
    """Outcomes counted by oracle and status, in the order oracles were replayed."""

    counts: dict[str, Counter[Status]] = field(default_factory=dict)
    rules_fired: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per oracle, spans each rule replaced over the whole replay (rules in their order)."""

    def add(self, outcome: Outcome) -> None:
        counts = self.counts.get(outcome.oracle)
        if counts is None:  # not setdefault(oracle, Counter()): a Counter per case adds up
            counts = self.counts[outcome.oracle] = Counter()
        counts[outcome.status] += 1
        if outcome.rules_fired:
            fired = self.rules_fired.setdefault(outcome.oracle, {})
            for name, count in outcome.rules_fired:
                fired[name] = fired.get(name, 0) + count

    def start(self, oracle: str) -> None:
        """Make an oracle with no selected cases still show in the summary."""
        self.counts.setdefault(oracle, Counter())

    @property
    def total(self) -> Counter[Status]:
        out: Counter[Status] = Counter()
        for c in self.counts.values():
            out.update(c)
        return out

    @property
    def green(self) -> bool:
        return all(
            status is Status.PASS for c in self.counts.values() for status, n in c.items() if n
        )

    @property
    def drifted(self) -> bool:
        """Some case behaved differently from its oracle (a drift or a stale record).

        Not green for other reasons -- new cases nobody froze yet, an unrecorded oracle,
        a case that could not run -- is red too, but it is not called a drift.
        """
        total = self.total
        return bool(total[Status.DRIFT] or total[Status.STALE])

    def next_steps(self) -> list[str]:
        """How to freeze what is new and drop what is gone, per oracle that has any.

        A new case is behaviour nobody has frozen yet, so the run is not green
        until it is recorded (or its input removed); recording it is a reviewed
        act of its own, never implicit.
        """
        lines: list[str] = []
        for oracle, counts in self.counts.items():
            if counts[Status.NEW]:
                lines.append(
                    f"{counts[Status.NEW]} new case(s) of {oracle} not frozen yet: add them with "
                    f"'lockstep record {oracle} --new-only' (and commit the oracle on its own)"
                )
            if counts[Status.MISSING]:
                lines.append(
                    f"{counts[Status.MISSING]} case(s) of {oracle} whose input is gone: restore "
                    f"the input, or drop them with 'lockstep record {oracle} --trim'"
                )
        return lines

    def rules_lines(self) -> list[str]:
        """``rules fired in export: iso-timestamp×5, run×5`` for each oracle that has rules."""
        return [
            f"rules fired in {oracle}: " + ", ".join(f"{n}×{c}" for n, c in fired.items())
            for oracle, fired in self.rules_fired.items()
        ]

    def verdict(self) -> str:
        """``green``; ``DRIFT`` when some case behaved differently from its oracle (or its
        record is stale); ``NOT GREEN`` when nothing drifted but the run still proves less
        than it should (new cases nobody froze, an unrecorded oracle, a case that could not
        run)."""
        if self.green:
            return "green"
        return "DRIFT" if self.drifted else "NOT GREEN"

    def summary(self) -> str:
        """The verdict line, then what to run for new or vanished cases (plain text)."""
        return "\n".join([f"{self.verdict()}: {self.line()}", *self.next_steps()])

    def line(self) -> str:
        """``12 cases: 11 passed, 1 drifted``."""
        total = self.total
        n = sum(total.values())
        parts = [f"{total[Status.PASS]} passed"]
        labels = {
            Status.DRIFT: "drifted",
            Status.NEW: "new",
            Status.MISSING: "missing",
            Status.ERROR: "errors",
            Status.STALE: "stale",
        }
        parts += [f"{total[s]} {label}" for s, label in labels.items() if total[s]]
        noun = "case" if n == 1 else "cases"
        return f"{n} {noun}: " + ", ".join(parts)
