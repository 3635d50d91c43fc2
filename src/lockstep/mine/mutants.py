"""Mutants that guide mining: an input is worth a row when it kills one the rows miss.

A new arc finds a new branch; it cannot find a value-level difference on a branch
already taken (a whitespace before ``%`` accepted or not, ``casefold`` against
``lower`` on ``"Straße"``).  ``lockstep strength``'s mutants are exactly such small
differences, so mining reuses them (:class:`~lockstep.strength.mutants.MutableFile`)
and its in-process switch (:class:`~lockstep.strength.switch.Switchboard`):

* the mutants of the functions the recorded inputs enter, in every project file they
  run, are judged first by the recorded inputs themselves; the survivors are what the
  oracle cannot see;
* each generated input is run again with every surviving mutant on whose lines it
  runs; a different outcome (the bytes a replay compares) kills the mutant, and the
  input is kept for it.

A mutant that does not answer within :data:`MUTANT_TIMEOUT` (a loop) is dropped for
the generated inputs and counted as caught for the recorded ones (replay hangs: the
gate fails).  Only mutants inside functions are used: module-level code runs once at
import, and re-running it per input would cost more than the input.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from lockstep.mine.coverage import Arc, lines_of
from lockstep.mine.limits import TooSlow, time_limit
from lockstep.oracles.mining import Call, MiningSubject
from lockstep.strength.coverage import function_span
from lockstep.strength.mutants import MutableFile, Mutant
from lockstep.strength.switch import CannotSwitch, MutantBroke, Switchboard

MUTANT_TIMEOUT: Final = 2.0
"""Seconds one input may run with a mutant on before the mutant counts as looping."""


@dataclass(frozen=True)
class MutantTally:
    """What the mutants said about the oracle, before and after mining."""

    total: int
    """Mutants of the functions the recorded inputs enter."""
    killed_by_recorded: int
    killed_by_mined: int
    surviving: int
    dropped: int
    """Mutants that could not be switched on, or looped on a generated input."""


@dataclass
class MutantPool:
    """The surviving mutants, indexed by the lines a case must run to reach them."""

    board: Switchboard
    alive: dict[int, Mutant]
    at: dict[tuple[str, int], list[int]]
    total: int
    killed_by_recorded: int = 0
    killed_by_mined: int = 0
    dropped: int = 0
    killers: list[Call] = field(default_factory=list)

    @classmethod
    def build(cls, files: Iterable[Path], entered: set[tuple[str, int]]) -> MutantPool:
        """Every mutant inside a function of ``files`` whose body some line of ``entered``
        (``(file, line)`` the recorded inputs ran) belongs to."""
        paths = sorted({Path(os.path.realpath(f)) for f in files})
        board = Switchboard(dict.fromkeys(paths, False))
        alive: dict[int, Mutant] = {}
        at: dict[tuple[str, int], list[int]] = {}
        for path in paths:
            mf = board.files[path]
            spans = _entered_scopes(mf, entered)
            for mutant in mf.mutants():
                if mutant.module_level or mutant.scope not in spans:
                    continue
                slot = len(alive)
                alive[slot] = mutant
                for line in mutant.lines:
                    at.setdefault((str(path), line), []).append(slot)
        return cls(board, alive, at, total=len(alive))

    def reached(self, arcs: Iterable[Arc]) -> list[int]:
        """The living mutants on lines ``arcs`` ran."""
        found: dict[int, None] = {}
        for name, line in lines_of(arcs):
            for slot in self.at.get((os.path.realpath(name), line), ()):
                if slot in self.alive:
                    found[slot] = None
        return list(found)

    def differs(
        self, subject: MiningSubject, call: Call, expected: bytes, slot: int
    ) -> bool | None:
        """Whether ``call`` gives another outcome with mutant ``slot`` on (None: the mutant
        looped or cannot be switched on)."""
        mutant = self.alive[slot]
        try:
            with self.board.active(mutant, rerun=None), time_limit(MUTANT_TIMEOUT):
                ran = subject.run(copy.deepcopy(call))
        except TooSlow:
            return None
        except (CannotSwitch, MutantBroke):
            return None
        except Exception:  # the mutant's outcome cannot even be frozen: replay sees that
            return True
        return ran.result_key != expected

    def judge_recorded(
        self, subject: MiningSubject, runs: Sequence[tuple[Call, bytes, frozenset[Arc]]]
    ) -> None:
        """Remove the mutants the recorded inputs already kill (or hang on)."""
        for call, expected, arcs in runs:
            for slot in self.reached(arcs):
                verdict = self.differs(subject, call, expected, slot)
                if verdict is None or verdict:
                    del self.alive[slot]
                    self.killed_by_recorded += 1

    def kills(
        self, subject: MiningSubject, call: Call, expected: bytes, arcs: frozenset[Arc]
    ) -> int:
        """Run ``call`` against every living mutant it reaches; how many it kills."""
        killed = 0
        for slot in self.reached(arcs):
            verdict = self.differs(subject, call, expected, slot)
            if verdict is None:
                del self.alive[slot]
                self.dropped += 1
            elif verdict:
                del self.alive[slot]
                self.killed_by_mined += 1
                killed += 1
        return killed

    def tally(self) -> MutantTally:
        return MutantTally(
            self.total,
            self.killed_by_recorded,
            self.killed_by_mined,
            len(self.alive),
            self.dropped,
        )


def _entered_scopes(mf: MutableFile, entered: set[tuple[str, int]]) -> set[str]:
    """The outermost functions of ``mf`` with a body line in ``entered``."""
    name = str(mf.path)
    scopes: set[str] = set()
    for mutant in mf.mutants():
        if mutant.scope and mutant.scope not in scopes:
            span = function_span(mf.path, mutant.scope)
            body = range(span[0] + 1, span[1] + 1) if span else mutant.lines
            if any((name, line) in entered for line in body):
                scopes.add(mutant.scope)
    return scopes


def each_file(arcs: Iterable[Arc]) -> set[str]:
    """The source files ``arcs`` ran in."""
    return {name.rsplit(":", 1)[0] for name, _, _ in arcs}


def entered_lines(arcs: Iterable[Arc]) -> set[tuple[str, int]]:
    """``(resolved file, line)`` of every line ``arcs`` ran."""
    return {(os.path.realpath(name), line) for name, line in lines_of(arcs)}
