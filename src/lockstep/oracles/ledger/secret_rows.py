"""Ledger rows without secrets: scrubbed and scanned before writing, revealed at replay.

Recording replaces each ``[[secret]] env`` value in a row's arguments, result,
mutations and exception stem by its ``<NAME>`` placeholder (the row's id, a digest of
its input, is then the digest of the scrubbed input: no digest of a secret is kept),
then refuses a row in which detect-secrets still finds something, or a ``[[secret]]
pattern`` matches (a matched value cannot be handed back to the function at replay, so
it is not scrubbed here).  Replay puts today's value back in the whole row
(:func:`revealed`) before calling the target and comparing, so the function is handed
exactly what it was handed at record, and compares against what it returned then; a
drift is shown scrubbed again (:func:`scrubbed_outcome`).
"""

from __future__ import annotations

import functools
import itertools
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.model import (
    Drift,
    Outcome,
    RecordMode,
    RecordReport,
    Refusal,
    RefusalReason,
    SecretFinding,
)
from lockstep.oracles.ledger.format import LedgerRow, Param, row_id, row_key
from lockstep.oracles.ledger.spool import RowFile
from lockstep.secrets import Scrubber, SecretPolicy
from lockstep.secrets.detect import may_hold_secret
from lockstep.secrets.policy import FieldPath
from lockstep.secrets.screen import Screen

_FIELDS = ("args", "kwargs", "result", "mutated", "exc_stem", "exc_state")
_ENCODE = msgspec.json.Encoder().encode


def _map_row(row: LedgerRow, fn: Any) -> LedgerRow:
    changes = {
        name: fn(value)
        for name in _FIELDS
        if (value := getattr(row, name)) is not msgspec.UNSET and value is not None
    }
    return msgspec.structs.replace(row, **changes)


Found = dict[str, tuple[str, str]]
"""Secret values found in refused rows -> (detector, digest): in memory only."""


class _Shared:
    """What a run that writes several ledgers shares (:func:`shared`): the secrets found
    so far, and each row the detector read already -- kept as it was scrubbed, or the
    refusal -- so that the write after :func:`found_in` does not read it again."""

    def __init__(self) -> None:
        self.found: Found = {}
        self.scanned: dict[tuple[str, str], LedgerRow | Refusal] = {}


_SHARED: Final[ContextVar[_Shared | None]] = ContextVar("lockstep_secrets_shared", default=None)

ECHO_SHORTEST: Final = 6
"""Characters a found secret has at least to refuse the other rows that hold it: a
shorter one (a keyword plugin's ``"pw": "abc"``) would refuse rows for holding a word."""


@contextmanager
def shared() -> Iterator[Found]:
    """For a run that writes several ledgers: a secret the detector found in a row of one
    refuses each row of every ledger written in the block that holds it in another form
    (hyperlink's ``URL.from_text("http://user:pass@host")`` was refused, and the same
    ``"user:pass"`` kept in the ``URL`` state of other ledgers).  The caller scans every
    ledger's rows first (:func:`found_in`), so a ledger written before the one whose row
    showed the secret is refused too."""
    run = _Shared()
    token = _SHARED.set(run)
    try:
        yield run.found
    finally:
        _SHARED.reset(token)


def found_in(
    policy: SecretPolicy, rows: Mapping[str, LedgerRow], signature: Sequence[Param] = ()
) -> None:
    """Scan ``rows`` for the block's :func:`shared` secrets, writing nothing."""
    without_secrets(policy, rows, RecordReport("", Path(), RecordMode.CREATE), signature)


def without_secrets(
    policy: SecretPolicy,
    rows: Mapping[str, LedgerRow],
    report: RecordReport,
    signature: Sequence[Param] = (),
) -> Mapping[str, LedgerRow]:
    """``rows`` scrubbed; a row that still holds a secret is refused (named in ``report``).

    Each positional argument is scanned under its parameter's name from ``signature``
    (the target's, as the ledger records it): ``connect("db", "hunter2")`` into
    ``def connect(host, password)`` is read as ``"password": "hunter2"``, like the
    keyword form.  Rows spilled to disk (:class:`~lockstep.oracles.ledger.spool.RowFile`)
    are scanned as a stream into a new row file.  A secret found in one row refuses
    every other row holding it, in any form the detector does not see (``"user:pass"``
    where it saw ``https://user:pass@host``): of this ledger, and under :func:`shared`,
    of every ledger of the run.
    """
    if not policy.enabled and not policy.scrubber:
        return rows
    run = _SHARED.get() or _Shared()
    names = _ArgNames(signature)
    # A positional argument under a name the detector reads (``password``) is scanned as
    # written under that name, which the screen cannot see: those targets' rows all take
    # the full scan.
    screen = None if names else Screen(policy, _SCREENED)
    kept: Mapping[str, LedgerRow]
    if isinstance(rows, RowFile):
        if screen is not None and _quiet_file(screen, rows):
            kept = rows  # nothing to scrub or refuse here: as they are, not rewritten
        else:
            kept = RowFile.from_rows(_kept(policy, rows.values(), report, names, screen, run))
    else:
        kept = {r.id: r for r in _kept(policy, rows.values(), report, names, screen, run)}
    echoes = {
        spelled: seen
        for value, seen in run.found.items()
        for spelled in _spellings(value)
        if len(spelled) >= ECHO_SHORTEST
    }
    if not echoes:
        return kept
    if isinstance(kept, RowFile):
        return RowFile.from_rows(r for r in kept.values() if not _echoed(r, echoes, report))
    return {rid: r for rid, r in kept.items() if not _echoed(r, echoes, report)}


def _spellings(value: str) -> set[str]:
    """A found secret as a row may hold it: as found, percent-decoded or -encoded (a URL's
    ``hunter%202xyz`` is ``hunter 2xyz`` once its object decoded it), each as a JSON
    line writes it (its quotes and backslashes escaped)."""
    forms = {value, urllib.parse.unquote(value), urllib.parse.quote(value, safe="")}
    return {form for each in forms for form in (each, _ENCODE(each).decode()[1:-1])}


@functools.lru_cache(maxsize=256)
def _standing(secret: str) -> re.Pattern[str]:
    """``secret`` where it stands as a whole: a letter, digit or ``_`` right before a
    secret that starts with one (or right after one that ends with one) makes it part of
    a longer word.  rfc3986's test password ``password`` refused every row holding a
    ``Validator``, whose state names ``allow_password``: 95 rows, one of them the only
    guard of a default."""
    before = r"(?<![A-Za-z0-9_])" if _WORD.match(secret[:1]) else ""
    after = r"(?![A-Za-z0-9_])" if _WORD.match(secret[-1:]) else ""
    return re.compile(before + re.escape(secret) + after)


_WORD: Final = re.compile(r"[A-Za-z0-9_]")


def _echoed(row: LedgerRow, echoes: Found, report: RecordReport) -> bool:
    """Whether ``row`` holds a secret found in another row (then refused in ``report``)."""
    findings = []
    for name in _FIELDS:
        value = getattr(row, name)
        if value is msgspec.UNSET or value is None:
            continue
        written = _ENCODE(value).decode("utf-8", "surrogatepass")
        for secret, (detector, digest) in echoes.items():
            if secret in written and _standing(secret).search(written):
                seen = f"{detector}, found in another row"
                findings.append(SecretFinding((name,), 1, seen, digest))
    if not findings:
        return False
    rid = row.id
    report.refused.append(
        Refusal(
            report.oracle,
            rid,
            RefusalReason.SECRET,
            label=f"{row.fn} [{rid}]",
            findings=tuple(sorted(set(findings))),
        )
    )
    return True


class _ArgNames:
    """The parameter name of each positional argument, where it can tell the scanner
    something (a name no detector reads, like ``host``, is left out: most targets then
    cost nothing more per row)."""

    def __init__(self, signature: Sequence[Param]) -> None:
        positional = [p.name for p in signature if p.kind in _POSITIONAL]
        rest = next((p.name for p in signature if p.kind == "var_positional"), "")
        self._named = [(i, n) for i, n in enumerate(positional) if may_hold_secret(n)]
        self._from = len(positional)
        self._rest = rest if rest and may_hold_secret(rest) else ""

    def __bool__(self) -> bool:
        """Whether some positional argument is read under its parameter's name."""
        return bool(self._named or self._rest)

    def __call__(self, args: Any) -> dict[FieldPath, str] | None:
        if not isinstance(args, list) or not (self._named or self._rest):
            return None
        found: dict[FieldPath, str] = {("args", i): n for i, n in self._named if i < len(args)}
        if self._rest:
            found.update((("args", i), self._rest) for i in range(self._from, len(args)))
        return found or None


_POSITIONAL = frozenset({"positional_only", "positional_or_keyword"})


_SCREENED = (*_FIELDS, "exc_type")
"""The fields the scan reads, as :func:`_screened_values` lists them."""
_BATCH = 128
"""Rows screened together (:class:`~lockstep.secrets.screen.Screen`)."""


def _screened_values(row: LedgerRow) -> list[Any]:
    values = [row.args, row.kwargs]
    for value in (row.result, row.mutated, row.exc_type, row.exc_stem, row.exc_state):
        if value is not msgspec.UNSET:
            values.append(value)
    return values


def _batches(rows: Iterable[LedgerRow]) -> Iterator[list[LedgerRow]]:
    it = iter(rows)
    while batch := list(itertools.islice(it, _BATCH)):
        yield batch


_CHUNK = 1 << 20
"""Bytes of a row file screened at once (whole lines: no gate spans a line break)."""


def _quiet_file(screen: Screen, rows: RowFile) -> bool:
    """Whether no row of ``rows`` holds anything to scrub or refuse, read from the file
    as it is (``<id>\\t<ledger line>`` a line: each line holds the id, ``fn`` and ``ok``
    besides the fields, which may only make the screen say no more often): no row is
    decoded, no line split out."""
    rest = b""
    with rows.path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            chunk = rest + chunk
            end = chunk.rfind(b"\n") + 1
            chunk, rest = chunk[:end], chunk[end:]
            if chunk and not screen.quiet_json([chunk]):
                return False
    return not rest or screen.quiet_json([rest])


def _kept(
    policy: SecretPolicy,
    rows: Iterable[LedgerRow],
    report: RecordReport,
    names: _ArgNames,
    screen: Screen | None,
    run: _Shared,
) -> Iterator[LedgerRow]:
    # Most rows hold nothing to scrub and nothing a detector's gate opens for (numbers,
    # short words): the screen tells so for a whole batch at once, and such a row is kept
    # as it is.
    for batch in _batches(rows):
        quiet = (
            screen.quiet([_screened_values(row) for row in batch])
            if screen
            else [False] * len(batch)
        )
        for row, passed in zip(batch, quiet, strict=True):
            if passed:
                yield row
            elif (kept := _scanned_once(policy, row, report, names, run)) is not None:
                yield kept


def _scanned_once(
    policy: SecretPolicy, row: LedgerRow, report: RecordReport, names: _ArgNames, run: _Shared
) -> LedgerRow | None:
    """:func:`_scanned`, or what it said of the row before in this run (:func:`found_in`)."""
    key = (row.fn, row.id)
    said = run.scanned.get(key)
    if said is None:
        before = len(report.refused)
        kept = _scanned(policy, row, report, names, run.found)
        said = kept if kept is not None else report.refused[before]
        run.scanned[key] = said
        return kept
    if isinstance(said, Refusal):
        report.refused.append(msgspec.structs.replace(said, oracle=report.oracle))
        return None
    return said


def _scanned(
    policy: SecretPolicy, row: LedgerRow, report: RecordReport, names: _ArgNames, found: Found
) -> LedgerRow | None:
    """``row`` scrubbed, or None when it still holds a secret (refused in ``report``)."""
    rid = row.id
    if policy.scrubber:
        scrubbed = _map_row(row, lambda v: policy.scrub_value(v, patterns=False))
        if (scrubbed.args, scrubbed.kwargs) != (row.args, row.kwargs):
            # The id is a digest of the input as written: the scrubbed one.
            new_id = row_id(row_key(scrubbed))
            scrubbed = msgspec.structs.replace(scrubbed, id=new_id)
        row = scrubbed
    fields = {**{n: getattr(row, n) for n in _FIELDS}, "exc_type": row.exc_type}
    refusal = policy.refusal(
        report.oracle,
        rid,
        {k: v for k, v in fields.items() if v is not msgspec.UNSET},
        label=f"{row.fn} [{rid}]",
        names=names(row.args),
    )
    if refusal is None:
        return row
    report.refused.append(refusal)
    live = {k: v for k, v in fields.items() if v is not msgspec.UNSET}
    for value, seen in policy.secret_values(live, names(row.args)).items():
        found.setdefault(value, seen)
    return None


def _may_hold_placeholder(row: LedgerRow, scrubber: Scrubber) -> bool:
    """Whether some string of the row may hold a placeholder to reveal (most rows: no,
    found in one C-speed encoding instead of a walk through every value; a ``<`` that
    starts no placeholder, as in ``"<1.0"``, is none)."""
    values = [v for name in _FIELDS if (v := getattr(row, name)) is not msgspec.UNSET]
    try:
        return scrubber.may_reveal(_ENCODE(values))
    except (TypeError, ValueError, OverflowError):
        return True


def revealed(row: LedgerRow, scrubber: Scrubber) -> LedgerRow:
    """The row with every placeholder replaced by its value from the environment
    (:class:`~lockstep.secrets.SecretMissing` when a variable is not set)."""
    if not _may_hold_placeholder(row, scrubber):
        return row

    def reveal(value: Any) -> Any:
        if isinstance(value, str):
            return scrubber.reveal(value)
        if isinstance(value, dict):
            return {
                (scrubber.reveal(k) if isinstance(k, str) else k): reveal(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [reveal(v) for v in value]
        return value

    return _map_row(row, reveal)


def scrubbed_outcome(outcome: Outcome, scrubber: Scrubber, note: str) -> Outcome:
    """A drift as the user sees it: the values in it scrubbed, the call as recorded."""
    if not outcome.drifts:
        return outcome
    scrub = scrubber.scrub
    drifts = tuple(
        Drift(
            d.aspect,
            scrub(d.expected),
            scrub(d.actual),
            scrub(d.diff),
            None if d.texts is None else (scrub(d.texts[0]), scrub(d.texts[1])),
        )
        for d in outcome.drifts
    )
    return msgspec.structs.replace(outcome, drifts=drifts, note=note)
