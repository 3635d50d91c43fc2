"""Every frozen case is proven to reproduce before it is written.

A case recorded inside a test suite, a driver or a long-lived process can owe
its outcome to that context: a registry a test filled and emptied again, a
patched collaborator, a frozen clock, a switched locale, the iteration order of
a set under one hash seed.  Written as is, such a case makes the very next
``lockstep replay`` red with no code changed, and a user who sees that stops
trusting the gate.

So record writes the cases it froze now into a candidate oracle in a private
folder, replays that candidate once in a **fresh interpreter with another hash
seed** -- exactly what ``lockstep replay`` will do later -- and keeps only the
cases that reproduce.  The others are refused (not written) with what differed.

The child is ``python -m lockstep.cli.verify_child``; it loads the same
configuration with the oracle folder pointed at the candidate, replays it
through :func:`lockstep.oracles.replay`, and prints one JSON line per case that
did not reproduce, then a last line saying it finished.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import (
    Callable,
    Collection,
    Container,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from lockstep.addresses import HEX_ADDRESS_TEXT
from lockstep.canon.text import SHOWN_VALUE, around_difference, clip
from lockstep.config import OracleSpec, Project, Settings, config_of
from lockstep.errors import LockstepError
from lockstep.model import Outcome, ReplayOptions, Status
from lockstep.oracles import (
    CHILD_MODULE,
    CHILD_TIMEOUT,
    NOT_REPLAYED,
    stopped,
    verify_clock,
    verify_zone,
)
from lockstep.oracles.verify_config import project_at
from lockstep.oracles.verify_session import (
    Sent,
    SessionError,
    VerifySession,
    current,
    verifying_environ,
    verifying_seed,
)
from lockstep.store import temp_folder

if TYPE_CHECKING:  # not at import: replay never loads the probe machinery, and @record_io
    # verifies at exit, when no executor may start; subprocess loads when a child starts
    import subprocess


class Verdict(msgspec.Struct, frozen=True):
    """How one freshly frozen case replayed in the fresh interpreter."""

    case_id: str
    reproduced: bool
    reason: str = ""
    seed_dependent: bool = False
    """It did not reproduce under one hash seed and replayed otherwise under another."""
    zone_dependent: bool = False
    """It did not reproduce in the verifying zone and did in the recording's
    (:mod:`.verify_zone`)."""
    date_dependent: bool = False
    """It did not reproduce on the verifying clock, years ahead, and did on the real one
    (:mod:`.verify_clock`)."""
    varies: bool = False
    """Replayed twice in the fresh interpreter, it differed otherwise each time."""

    @property
    def cause(self) -> str:
        """The likely cause the verification itself can tell ("" when it cannot)."""
        if only_addresses_differ(self.reason):
            return ADDRESS_CAUSE
        if self.zone_dependent:
            return ZONE_CAUSE
        if self.date_dependent:
            return DATE_CAUSE
        if self.varies:
            return VARIES_CAUSE
        return HASH_SEED_CAUSE if self.seed_dependent else ""

    def because(self) -> str:
        """The reason, with the likely cause when one is known."""
        return f"{self.reason}; cause: {self.cause}" if self.cause else self.reason


ADDRESS_CAUSE: Final = (
    "an object's address in the value (a repr with 'at 0x...', an id()): it differs in "
    "every process, so no replay can reproduce it"
)
_SIDES: Final = re.compile(
    r"^\w+: recorded (?P<recorded>.*), fresh interpreter (?P<fresh>.*)$", re.S
)


def only_addresses_differ(reason: str) -> bool:
    """Whether a reason's two sides (:func:`reason_of`) differ only in hex addresses:
    sqlparse's ``Token.__repr__`` (``<Single 'x' at 0x7FE7B7B3CB20>``) was refused with an
    unrelated global's change as its cause."""
    found = _SIDES.match(reason)
    if found is None:
        return False
    recorded, fresh = found["recorded"], found["fresh"]
    if recorded == fresh or HEX_ADDRESS_TEXT.search(recorded) is None:
        return False
    return HEX_ADDRESS_TEXT.sub("0x…", recorded) == HEX_ADDRESS_TEXT.sub("0x…", fresh)


VERIFY_ROUNDS: Final = 16
"""Verifications of one ledger's rows at most: the first, then once more after each round
that refused some (each round only ever refuses more).  jmespath's parser cache took eight:
each refused call that had cached an expression left the next call of it to cache it."""

UNSETTLED_CAUSE: Final = (
    "it reproduced only beside calls that were refused (state an earlier call left for it: "
    "a cache, a registry)"
)


HASH_SEED_CAUSE: Final = (
    "hash-seed dependence (set or dict order differs between interpreters), or a value each "
    "interpreter makes anew (an id(), hash(None) before Python 3.12)"
)
"""Said when a second hash seed's replay differs otherwise: a pinned ``PYTHONHASHSEED`` does
not make the second kind reproduce (semantic_version's ``Version.__hash__`` of a tuple
holding None differed in every process, and was named the seed's alone)."""
VARIES_CAUSE: Final = (
    "it varies from one call to the next in one interpreter (the clock, randomness, or "
    "state a call changes)"
)
DATE_CAUSE: Final = (
    "today's date (it reproduces on today's clock, not on one some years later: it would "
    "replay red on a later day)"
)
ZONE_CAUSE: Final = (
    "the machine's local time zone (it reproduces only in the zone it was recorded in; "
    "the next replay may run in another)"
)


class Verification(msgspec.Struct, frozen=True):
    """The verdicts of one verification run and the hash seed it used."""

    seed: int
    verdicts: dict[str, Verdict]
    """The cases that did not reproduce, by id; every other case of the candidate did."""

    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts.values() if not v.reproduced]

    def refused(self) -> list[Verdict]:
        """The cases a recording that verifies in rounds refuses: those that did not
        reproduce, less a ledger's cases not called after one that ran past its timeout
        (:data:`~lockstep.oracles.NOT_REPLAYED`), verified again in the next round without
        it; every one that did not reproduce when none else is left to refuse.  A
        marshmallow schema whose thawed copy looped refused every row after it."""
        failed = self.failed()
        return [v for v in failed if not v.reason.startswith(NOT_REPLAYED)] or failed

    def note(self, total: int) -> str:
        failed = len(self.refused())
        return (
            f"verified {total - failed} of {total} new case(s) in a fresh interpreter "
            f"(PYTHONHASHSEED={self.seed}); {failed} did not reproduce and were not written"
            if failed
            else f"verified {total} new case(s) in a fresh interpreter "
            f"(PYTHONHASHSEED={self.seed}): all reproduce"
        )


def only_argument(only: Collection[str]) -> list[str]:
    """The verifying child's argument naming the cases it replays alone (none: every case):
    one JSON list, not an option per case.  argparse takes time quadratic in the options
    it is given: croniter's ``expand`` ledger of 10,156 rows spent 3 s on each parse of
    its command line, and the server and the sub-server parse it several times."""
    return [f"--only={json.dumps(sorted(only))}"] if only else []


def child_argv(source: Sequence[str], rel: str, name: str) -> list[str]:
    """The verifying child's arguments for oracle ``name``'s candidate in folder ``rel``
    (``-``: read from stdin), its settings from ``source``."""
    return [*source, "--dir", rel, name]


def warming_argvs(project: Project, specs: Iterable[OracleSpec]) -> list[list[str]]:
    """The arguments a recording session warms its server with
    (:meth:`~lockstep.oracles.verify_session.VerifySession.warm`): one candidate's
    arguments, but its folder, per package of the ledgers ``specs`` name (the top-level
    module of each target), so each package is imported once, ahead."""
    from lockstep.targets import split_target

    argvs: dict[str, list[str]] = {}
    for spec in specs:
        target = str(getattr(spec, "target", ""))
        top = split_target(target, where=spec.name)[0].partition(".")[0]
        argvs.setdefault(top, child_argv(("--config", str(project.config_path)), "-", spec.name))
    return list(argvs.values())


@contextmanager
def candidate_folder(project: Project) -> Iterator[Path]:
    """A private folder inside the oracle folder for a candidate oracle; always removed.

    Named like a temp file of the store, so a record killed while verifying leaves
    nothing that the next write in the oracle folder does not sweep away.
    """
    with temp_folder(project.oracle_dir, "verify") as folder:
        yield folder


class Prestarted:
    """A verifying interpreter started before the recording, so its start and imports overlap
    the recording; it waits for the candidate's folder on stdin (see :func:`prestarted`)."""

    def __init__(self, proc: subprocess.Popen[bytes], seed: int, source: Sequence[str]) -> None:
        self.proc = proc
        self.seed = seed
        self.source = tuple(source)


@contextmanager
def prestarted(project: Project, spec: OracleSpec) -> Iterator[Prestarted | None]:
    """Start the verifying interpreter now; :func:`verify` hands it the candidate later.

    A recording that fails, or has nothing to verify, ends it unused.  Under a recording
    session (:mod:`.verify_session`) there is nothing to start: its interpreter is running.
    """
    if current(project.root) is not None:
        yield None
        return
    source = ("--config", str(project.config_path))
    seed = verifying_seed()
    proc = _spawn(project, spec, "-", seed, source, None)
    try:
        yield Prestarted(proc, seed, source)
    finally:
        if proc.poll() is None:  # not handed a candidate
            proc.kill()
            proc.communicate()


def verify(
    project: Project,
    spec: OracleSpec,
    write_candidate: Callable[[Path], Collection[str]],
    *,
    source: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    started: Prestarted | None = None,
    explained: Container[str] = (),
    zone_suspects: Collection[str] = (),
    seed_suspects: Collection[str] | Callable[[], Collection[str]] = (),
) -> Verification:
    """Replay a candidate oracle of ``spec`` in a fresh interpreter with another hash seed.

    ``write_candidate(folder)`` writes the oracle file (as its kind names it) into
    ``folder`` and returns the ids of the cases it holds.  An id the child reports gets a
    verdict; every other id reproduced.  When some case does not
    reproduce, the candidate is replayed once more under a second hash seed: a case
    that reproduces there, or differs otherwise, owes its outcome to the hash seed (set
    or dict order), which its verdict says.  Not when every such case is in ``explained``
    (the recording already names a cause for it: a patched collaborator, a frozen clock):
    the refusal names that cause, and a second interpreter started only to name another
    costs as much as the first.

    ``zone_suspects`` are cases recorded while a test had set another local time zone
    (``TZ``): one that reproduced in the verifying zone may only share that zone's answer
    (daylight saving time on the same dates), so such cases are replayed once more in the
    second verifying zone (:func:`.verify_zone.verifying_zone`), and one that differs
    there is refused (its recording's hint names the zone the test set).

    ``seed_suspects`` are cases whose input holds a set: iterating it, the target may
    return its items in the order of this interpreter's hash seed, which the verifying
    seed shares for a few items often enough (two items: one time in two).  Such cases
    are replayed under the second hash seed and then under :data:`MORE_SEEDS` while they
    keep reproducing, and one that differs under any is refused as the seed's.  Given as
    a function, they are found while the first replay runs.

    ``source`` tells the child where the oracle's settings come from (default: the
    project's configuration file; ``@record_io`` names the target instead), and ``env``
    adds to the child's environment.  ``started`` is an interpreter :func:`prestarted`
    for this very oracle: the first replay runs there.  Under a recording session
    (:func:`.verify_session.shared_verification`) a candidate of the project read from its
    configuration replays in a fork of the session's interpreter instead.
    """
    session = None if started is not None or env or source else current(project.root)
    source = started.source if started is not None else source
    source = source or ("--config", str(project.config_path))
    seed = started.seed if started is not None else verifying_seed()
    with candidate_folder(project) as folder:
        ids = write_candidate(folder)
        if not ids:
            return Verification(seed, {})
        rel = folder.relative_to(project.root.resolve()).as_posix()

        def replay_under(
            under: int, second_zone: bool = False, only: Collection[str] = ()
        ) -> dict[str, Verdict]:
            """The candidate replayed once more, under hash seed ``under`` (its cases in
            ``only`` alone, when given)."""
            chosen = (*source, *only_argument(only))
            if session is not None:
                return _in_session(session, spec, rel, under, chosen, second_zone)
            again = _spawn(project, spec, rel, under, chosen, env, second_zone)
            return _collect(again, spec, None)

        # The first replay starts before the suspects are found (reading the target's
        # package for sets takes as long as a replay): it runs meanwhile.
        if session is not None:
            first = _sent(session, spec, rel, [seed], source)
            suspects = _found(seed_suspects)
            _start_other_seeds(session, suspects, child_argv(source, rel, spec.name))
            reported = _answered(spec, first)[0]
        else:
            proc = started.proc if started is not None else None
            if proc is None:
                proc = _spawn(project, spec, rel, seed, source, env)
            suspects = _found(seed_suspects)
            reported = _collect(proc, spec, f"{rel}\n".encode() if started is not None else None)
        seed_suspects = suspects
        second: dict[str, Verdict] | None
        if session is not None and _rechecked(seed_suspects, reported):
            # every seed's replay is asked for at once: each has an interpreter of its own,
            # and each replays only the cases whose verdict it can change
            cases = _cases_per_seed(ids, reported, seed_suspects)
            seeds = (SECOND_SEED, *MORE_SEEDS)
            answers = _answered(spec, _sent(session, spec, rel, seeds, source, cases=cases))
            second = answers[0]
            by_seed = _merged_seeds(reported, second, seed_suspects, answers[1:])
        else:
            explained = _or_stopped(explained, reported)  # their cause is said: no second seed
            second = _second_seed(reported, explained, seed_suspects, len(ids), seed, replay_under)
            by_seed = _under_more_seeds(reported, second, seed_suspects, replay_under)
        zoned: dict[str, Verdict] = {}
        if _rechecked(zone_suspects, reported):
            zoned = replay_under(seed, second_zone=True)
    # The child reports only the cases that did not reproduce; the others did (and get no
    # verdict object: at a million cases those would cost more than the rest of a record).
    verdicts: dict[str, Verdict] = {}
    # In the candidate's order; a candidate too large to list (a ledger on disk) is
    # asked about the reported ids only.
    shown = {*reported, *zoned, *by_seed}
    order = ids if isinstance(ids, list) else sorted(c for c in shown if c in ids)
    for case_id in order:
        verdict = reported.get(case_id)
        if verdict is not None:
            verdicts[case_id] = _first_verdict(verdict, second)
        elif case_id in by_seed and case_id in seed_suspects:
            reason = f"under another hash seed: {by_seed[case_id].reason}"
            verdicts[case_id] = Verdict(case_id, False, reason, seed_dependent=True)
        elif case_id in zoned and case_id in zone_suspects:
            where = f"in a second zone ({verify_zone.verifying_zone(second=True)})"
            verdicts[case_id] = Verdict(case_id, False, f"{where}: {zoned[case_id].reason}")
    return Verification(seed, verdicts)


def _found(
    suspects: Collection[str] | Callable[[], Collection[str]],
) -> Collection[str]:
    return suspects() if callable(suspects) else suspects


def _start_other_seeds(
    session: VerifySession, seed_suspects: Collection[str], argv: Sequence[str]
) -> None:
    """Start the interpreters of the other hash seeds now, when the candidate holds cases
    with a set in their input: they replay there while they reproduce (most do), and each
    interpreter's start, and its import of the target's package (``argv``: the
    candidate's arguments), then overlaps the first seed's replay instead of following it."""
    if seed_suspects:
        for other in (SECOND_SEED, *MORE_SEEDS):
            session.warm(other, [argv])


def _second_seed(
    reported: Mapping[str, Verdict],
    explained: Container[str],
    seed_suspects: Collection[str],
    held: int,
    seed: int,
    replay_under: Callable[..., dict[str, Verdict]],
) -> dict[str, Verdict] | None:
    """The second hash seed's replay (see :func:`verify`): the whole candidate where a
    suspect's verdict depends on it, only the cases that did not reproduce where it just
    names their cause (:func:`_second_opinion`), None where neither is asked."""
    if _rechecked(seed_suspects, reported):
        return replay_under(SECOND_SEED)
    if _unexplained(reported, explained):
        return _second_opinion(reported, held, seed, replay_under)
    return None


NARROW_FROM: Final = 64
"""Cases a candidate holds at least before the second opinion replays only the cases that
did not reproduce (:func:`_second_opinion`); a smaller one is replayed whole."""
NARROW_MOST: Final = 1000
"""Cases that did not reproduce at most for that (each is named on a command line)."""


def _second_opinion(
    reported: Mapping[str, Verdict],
    held: int,
    seed: int,
    replay_under: Callable[..., dict[str, Verdict]],
) -> dict[str, Verdict]:
    """What the second hash seed says of the cases that did not reproduce, as
    :func:`_first_verdict` reads it: a case it leaves out owes its outcome to the seed.

    Only those cases need an answer, and the answer only names their cause (each is
    refused either way), so where they are a few of a large candidate only they are
    replayed, alone, under the first seed and under the second.  Both alone: a case that
    depends on the calls before it (a cache they filled) behaves the same under both
    seeds there and is not blamed on the seed, as it is not when the whole candidate is
    replayed under the second.  On tomlkit, the second seed's whole replays were half of
    the verification's time, for four refused rows of three ledgers."""
    if held < NARROW_FROM or len(reported) > NARROW_MOST or 4 * len(reported) > held:
        return replay_under(SECOND_SEED)
    first = replay_under(seed, only=reported)
    other = replay_under(SECOND_SEED, only=reported)
    opinion: dict[str, Verdict] = {}
    for case_id, verdict in reported.items():
        mine, theirs = first.get(case_id), other.get(case_id)
        if (mine is None) == (theirs is None) and (
            mine is None or theirs is None or mine.reason == theirs.reason
        ):
            opinion[case_id] = verdict  # the seeds agree: not the seed's doing
    return opinion


def _under_more_seeds(
    reported: Mapping[str, Verdict],
    second: Mapping[str, Verdict] | None,
    seed_suspects: Collection[str],
    replay_under: Callable[[int], dict[str, Verdict]],
) -> dict[str, Verdict]:
    """The cases that reproduced under the first hash seed and not under another: the
    second's, then :data:`MORE_SEEDS`' while a suspect still reproduces (a set of two
    items orders alike under two seeds one time in four)."""
    return _merged_seeds(reported, second, seed_suspects, (replay_under(m) for m in MORE_SEEDS))


def _merged_seeds(
    reported: Mapping[str, Verdict],
    second: Mapping[str, Verdict] | None,
    seed_suspects: Collection[str],
    more: Iterable[Mapping[str, Verdict]],
) -> dict[str, Verdict]:
    """:func:`_under_more_seeds` from the further seeds' replays, in :data:`MORE_SEEDS`'
    order, each taken only while a suspect still reproduces: replayed one after another
    (a lazy ``more``) or all at once, the verdicts are the same."""
    by_seed = {c: v for c, v in (second or {}).items() if c not in reported}
    replays = iter(more)
    while _rechecked(seed_suspects, {**reported, **by_seed}):  # asked before the next one
        replayed = next(replays, None)
        if replayed is None:
            break
        for case_id, found in replayed.items():
            if case_id not in reported:
                by_seed.setdefault(case_id, found)
    return by_seed


def _first_verdict(verdict: Verdict, second: Mapping[str, Verdict] | None) -> Verdict:
    """A case that did not reproduce in the first replay, seed-dependent when the second
    hash seed's replay said otherwise of it."""
    again = second.get(verdict.case_id) if second is not None else None
    seeded = (
        second is not None
        and not stopped(verdict.reason)  # not replayed again: the timeout is its cause
        and (again is None or again.reason != verdict.reason)
    )
    return Verdict(
        verdict.case_id,
        False,
        verdict.reason,
        seed_dependent=seeded,
        zone_dependent=verdict.zone_dependent,
        date_dependent=verdict.date_dependent,
        varies=verdict.varies,
    )


class _Either:
    """Ids in either container (:func:`_or_stopped`)."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self.first, self.second = first, second

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second


def _or_stopped(explained: Container[str], reported: Mapping[str, Verdict]) -> Container[str]:
    """``explained``, with the cases stopped at the timeout or not called after one: their
    verdict says why, and a second seed's replay of them takes the timeout again."""
    stopped_now = {c for c, v in reported.items() if stopped(v.reason)}
    return _Either(explained, stopped_now) if stopped_now else explained


def _rechecked(suspects: Collection[str], reported: Mapping[str, Verdict]) -> bool:
    """Whether a suspect case (recorded under a test's own zone, or with a set in its
    input) reproduced, and so is replayed once more (see :func:`verify`)."""
    return any(case_id not in reported for case_id in suspects)


def _unexplained(reported: Mapping[str, Verdict], explained: Container[str]) -> bool:
    """Whether a case that did not reproduce has no cause named yet (see :func:`verify`)."""
    return any(case_id not in explained for case_id in reported)


SECOND_SEED: Final = 3
MORE_SEEDS: Final = (4, 5, 6)
"""Hash seeds a case whose input holds a set is replayed under too, while it keeps
reproducing (``seed_suspects`` in :func:`verify`): with the first two, a set of two items
is missed one time in 32 instead of one in four."""
"""The hash seed of the second opinion on cases that did not reproduce (see :func:`verify`)."""


def _spawn(
    project: Project,
    spec: OracleSpec,
    rel: str,
    seed: int,
    source: Sequence[str],
    extra_env: Mapping[str, str] | None,
    second_zone: bool = False,
) -> subprocess.Popen[bytes]:
    """Start the fresh interpreter on the candidate in ``rel`` (``-``: read it from stdin)."""
    import subprocess

    env = verifying_environ({**os.environ, **(extra_env or {})}, seed, second_zone)
    argv = [sys.executable, "-m", CHILD_MODULE, *child_argv(source, rel, spec.name)]
    return subprocess.Popen(
        argv,
        cwd=project.root,
        env=env,
        stdin=subprocess.PIPE if rel == "-" else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _in_session(
    session: VerifySession,
    spec: OracleSpec,
    rel: str,
    seed: int,
    source: Sequence[str],
    second_zone: bool = False,
) -> dict[str, Verdict]:
    """The cases that did not reproduce, replayed in a fork of the session's interpreter."""
    return _answered(spec, _sent(session, spec, rel, [seed], source, second_zone))[0]


def _cases_per_seed(
    ids: Collection[str], reported: Mapping[str, Verdict], seed_suspects: Collection[str]
) -> list[Collection[str]]:
    """What each further seed replays (:data:`SECOND_SEED`, then :data:`MORE_SEEDS`; empty:
    every case): the second, the cases that did not reproduce (whether the seed explains
    them) and the suspects; the others, the suspects that reproduced, the only cases whose
    verdict they can change (see :func:`_merged_seeds` and :func:`_first_verdict`).  A list
    that would name every case names none."""
    asked = (c for c, verdict in reported.items() if not stopped(verdict.reason))
    second = {*asked, *(c for c in seed_suspects if c in ids)}  # a stopped one: its timeout
    more = {c for c in seed_suspects if c in ids and c not in reported}
    every = len(ids)
    return [
        () if len(second) >= every else second,
        *(() if len(more) >= every else more for _ in MORE_SEEDS),
    ]


def _sent(
    session: VerifySession,
    spec: OracleSpec,
    rel: str,
    seeds: Sequence[int],
    source: Sequence[str],
    second_zone: bool = False,
    cases: Sequence[Collection[str]] = (),
) -> Sent:
    """The candidate in ``rel`` sent to be replayed under each of ``seeds`` at once
    (``cases``: per seed, the cases it replays alone; empty: every case); its answers,
    in ``seeds``' order, come from :func:`_answered`."""
    argv = child_argv(source, rel, spec.name)
    argvs = [
        child_argv((*source, *only_argument(only)), rel, spec.name) if only else argv
        for only in (cases or [()] * len(seeds))
    ]
    try:
        return session.sent(seeds, argvs, CHILD_TIMEOUT, second_zone)
    except SessionError as e:
        raise _session_error(spec, e) from None


def _session_error(spec: OracleSpec, error: SessionError) -> LockstepError:
    return _timed_out(spec) if error.timed_out else _unreplayable(spec, error.tail)


def _answered(spec: OracleSpec, sent: Sent) -> list[dict[str, Verdict]]:
    """The cases that did not reproduce, per seed :func:`_sent` sent, once all answered."""
    try:
        done = sent.answers()
    except SessionError as e:
        raise _session_error(spec, e) from None
    answers: list[dict[str, Verdict]] = []
    for replayed in done:
        reported = _parse(replayed.stdout)
        finished = reported.pop("", None) is not None
        if replayed.code != 0 or not finished:
            raise _unreplayable(spec, replayed.tail or "no output")
        answers.append(reported)
    return answers


def _timed_out(spec: OracleSpec) -> LockstepError:
    return LockstepError(
        f"{spec.name}: verifying the new cases in a fresh interpreter took more than "
        f"{CHILD_TIMEOUT:g} s; nothing was written"
    )


def _unreplayable(spec: OracleSpec, tail: str) -> LockstepError:
    return LockstepError(
        f"{spec.name}: the fresh interpreter could not replay the new cases "
        f"({tail}); nothing was written"
    )


def _collect(
    proc: subprocess.Popen[bytes], spec: OracleSpec, given: bytes | None
) -> dict[str, Verdict]:
    """The cases that did not reproduce, once the child has replayed the candidate."""
    import subprocess

    try:
        stdout, stderr = proc.communicate(given, timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise _timed_out(spec) from None
    reported = _parse(stdout)
    finished = reported.pop("", None) is not None  # the child's last line: every case replayed
    if proc.returncode != 0 or not finished:
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise _unreplayable(spec, tail[0])
    return reported


class _Line(msgspec.Struct, frozen=True):
    id: str
    ok: bool
    reason: str = ""
    replayed: int = 0
    zone: bool = False
    date: bool = False
    varies: bool = False


def _parse(stdout: bytes) -> dict[str, Verdict]:
    verdicts: dict[str, Verdict] = {}
    for raw in stdout.splitlines():
        try:
            line = msgspec.json.decode(raw, type=_Line)
        except msgspec.MsgspecError:
            continue  # a target printing to stdout is not a verdict
        verdicts[line.id] = Verdict(
            line.id,
            line.ok,
            line.reason,
            zone_dependent=line.zone,
            date_dependent=line.date,
            varies=line.varies,
        )
    return verdicts


def reason_of(outcome: Outcome) -> str:
    """One line on why a case did not reproduce: the first differing aspect."""
    if outcome.drifts:
        first = outcome.drifts[0]
        # each side cut as a report shows a value: a whole document is no better a reason
        expected, actual = around_difference(first.expected, first.actual, SHOWN_VALUE)
        return f"{first.aspect}: recorded {expected}, fresh interpreter {actual}"
    return clip(outcome.note, SHOWN_VALUE) or outcome.status.value


# --------------------------------------------------------------------------- the child


def verdict_lines(
    config_path: Path | None,
    folder: str,
    name: str,
    table: str = "",
    stem_length: int = 0,
    only: frozenset[str] | None = None,
) -> Iterator[str]:
    """Replay oracle ``name`` with the oracle folder at ``folder`` (relative to the root).

    The settings come from the configuration at ``config_path``, or, for ``@record_io``
    (no configuration), from ``table`` (the oracle's table as JSON, its ``kind`` in it)
    and ``stem_length``, with the working directory as the root.  Yields one JSON line
    per case that did not reproduce, then one that says how many cases were replayed:
    the fresh interpreter's whole report.  ``only``: replay just those cases.
    """
    from lockstep.oracles import replay

    if config_path is None:
        root = Path.cwd()
        config = config_of(Settings(dir=folder, stem_length=stem_length), _table(table))
        project = Project(root=root, config_path=root / "@record_io", config=config)
    else:
        project = project_at(config_path)  # the server's reading of the same bytes
        settings = msgspec.structs.replace(project.config.lockstep, dir=folder)
        config = msgspec.structs.replace(project.config, lockstep=settings)
        project = Project(root=project.root, config_path=project.config_path, config=config)
    spec = project.oracle(name)
    replayed = 0
    failed: dict[str, dict[str, object]] = {}
    for outcome in replay(project, spec, ReplayOptions(candidate=True, only=only)):
        replayed += 1
        if outcome.status is not Status.PASS:
            failed[outcome.case_id] = {
                "id": outcome.case_id,
                "ok": False,
                "reason": reason_of(outcome),
            }
    if failed and (verify_zone.switched() or verify_clock.shifted()):
        _look_again(project, spec, failed)
    for line in failed.values():
        yield json.dumps(line) + "\n"
    yield json.dumps({"id": "", "ok": True, "replayed": replayed}) + "\n"


def _look_again(project: Project, spec: OracleSpec, failed: dict[str, dict[str, object]]) -> None:
    """Name what the cases that did not reproduce depend on, in their verdict lines.

    Each is replayed once more here first: one that now differs otherwise varies from one
    call to the next (a clock, randomness, state a call changes: ``"varies"``, never the
    hash seed's), and one that now reproduces only needed what the first replay left
    behind (a filled cache).  The rest are replayed in the recording's zone: one that
    reproduces there depends on the machine's local time zone (``"zone"``); the rest on
    the real clock: one that reproduces there depends on today's date (``"date"``)."""
    from lockstep.oracles import replay

    def again(ids: frozenset[str]) -> dict[str, Outcome]:
        options = ReplayOptions(candidate=True, only=ids)
        return {o.case_id: o for o in replay(project, spec, options)}

    rest: set[str] = set()
    # a call stopped at the timeout (or one not made after it) would only take it again
    asked = frozenset(c for c, line in failed.items() if not stopped(str(line["reason"])))
    for case_id, outcome in (again(asked) if asked else {}).items():
        if outcome.status is Status.PASS or case_id not in failed:
            continue
        if reason_of(outcome) != failed[case_id]["reason"]:
            failed[case_id]["varies"] = True
        else:
            rest.add(case_id)
    if not rest:
        return
    if verify_zone.switched():
        with verify_zone.recording_zone():
            for case_id, outcome in again(frozenset(rest)).items():
                if outcome.status is Status.PASS and case_id in rest:
                    failed[case_id]["zone"] = True
                    rest.discard(case_id)
    if rest and verify_clock.shifted():
        with verify_clock.real_clock():
            for case_id, outcome in again(frozenset(rest)).items():
                if outcome.status is Status.PASS and case_id in rest:
                    failed[case_id]["date"] = True


def _table(text: str) -> OracleSpec:
    """An oracle's table sent as JSON (``msgspec.json.encode(spec)``), decoded into its
    kind's spec (:data:`lockstep.kinds.KIND_SPECS`): an oracle with no configuration."""
    from lockstep.kinds import KIND_SPECS

    try:
        raw = msgspec.json.decode(text)
        spec_type = KIND_SPECS[raw["kind"]]
        return msgspec.convert(raw, spec_type)
    except (msgspec.MsgspecError, KeyError, TypeError) as e:
        raise LockstepError(f"not an oracle's table: {text!r} ({e})") from None
