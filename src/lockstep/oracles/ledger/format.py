"""The ledger file: one header line, then one canonical row per distinct call.

A ledger is what a function's callers actually passed and got back, frozen so
that a body rewrite is accepted only while every row reproduces.  It is JSONL
(streamed, diff-friendly, one call per line) with sorted keys and rows sorted
by id, so a re-record that changes nothing changes no byte.

Line 1, the header (a closed :class:`LedgerHeader`)::

    {"digest":"9c1e…","fn":"refs.messy:parse_amount","lockstep_ledger":2,"rows":2,
     "signature":[{"kind":"positional_or_keyword","name":"raw"},
                  {"default":false,"kind":"keyword_only","name":"strict"}],
     "stem_length":48}

``rows`` and ``digest`` (sha256 of the row lines, each ending in a newline)
state what the body holds, so a truncated, reordered, duplicated or
hand-edited file is reported as corrupt, never replayed green; each row's
``id`` is checked against its input, and ids must be strictly increasing.

``signature`` is the target's parameter list when it was recorded: names,
kinds and frozen defaults (``"default"`` is absent for a parameter without
one; a default that cannot be frozen is kept as ``"default_unfrozen": true``).
Replay compares it with the current target and refuses a changed signature,
naming the parameters, because a *body* rewrite must keep it.  ``fn`` names
the target, so a ledger copied to another ``[[ledger]]`` is refused too.

Every other line is a closed :class:`LedgerRow`::

    {"args":[{"$bytes":"OS45OQ=="}],"fn":"refs.messy:parse_amount","id":"3fa2b1c9d0e1f2a3",
     "kwargs":{"strict":true},"ok":true,"result":{"$tuple":["9.99","USD"]}}
    {"args":["x"],"fn":"refs.messy:parse_amount","exc_stem":"bad amount: 'x'",
     "exc_type":"ValueError","id":"0c1d...","kwargs":{},"ok":false}

* ``args`` / ``kwargs`` / ``result`` are :mod:`lockstep.canon` tagged values.
* ``ok`` is true with ``result`` (which may be ``null``), or false with
  ``exc_type`` (qualified type name) and ``exc_stem`` (whitespace-folded
  message cut to ``stem_length`` characters) -- never both.
* ``mutated`` is present only when the call changed an argument in place:
  it maps the argument (``"0"`` for the first positional one, the keyword's
  name for a keyword) to its frozen value *after* the call.  Mutating an input
  is behaviour, so replay checks it like the result.
* ``clock`` is present only when the call ran under a frozen clock (freezegun's
  ``freeze_time``, time-machine's ``travel(..., tick=False)``): the instant, in UTC,
  and the local time's offset from UTC in seconds (freezegun's ``tz_offset``),
  ``{"at":"2020-02-02T00:00:00Z","tz_offset":0}``
  (:mod:`lockstep.oracles.ledger.clock`).  Replay runs the call with the clock travelled
  there.  A ledger holding such a row is format version 3; one without any stays version 2,
  byte for byte what it was.
* ``id`` is the first 16 hex digits of the sha256 of the canonical input
  (``[args, kwargs]``, or ``[args, kwargs, clock]`` for a row with a clock): the same
  input always gets the same id, on every machine and in every worker, which is what
  makes merging and ``--shard`` deterministic.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.callables import callables_only_from
from lockstep.canon.text import SHOWN_VALUE as SHOWN_VALUE
from lockstep.canon.text import call_text as _call_text
from lockstep.canon.text import outcome_text as outcome_text  # a row's outcome reads as canon's
from lockstep.canon.text import short_name, value_text
from lockstep.errors import CanonError
from lockstep.oracles.ledger.clock import Clock, as_json
from lockstep.oracles.ledger.printed import PRINTED

SUFFIX: Final = ".ledger.jsonl"
"""A ledger file's suffix: ``<dir>/<name>.ledger.jsonl``."""

SELF_FROZEN: Final = frozenset({str, int, bool, type(None)})
"""Types whose frozen form is the value itself (a row of them is compared without thawing)."""

FORMAT_VERSION: Final = 2
"""Version 2 added ``rows`` and ``digest`` to the header (integrity of the body)."""

CLOCK_VERSION: Final = 3
"""Version 3 adds the rows' ``clock``; a ledger is written as version 3 only when a row has
one, so every other ledger keeps its bytes and older lockstep versions still read it."""

RECEIVER_VERSION: Final = 4
"""Version 4 adds the rows' ``on``: the subclass a classmethod was called on.  Written only
when a row has one, as version 3 is only with a clock."""

ROOT_VERSION: Final = 5
"""Version 5 adds the header's ``root``: the project folder the rows name paths inside
(:mod:`.relocation`).  Written only when a row holds that folder."""

SHARED_VERSION: Final = 6
"""Version 6 lets a row's values hold ``{"$same": n}``: an object of the project held
twice inside one object, written once (:mod:`lockstep.canon.shared`).  Written only when
a row has one."""

STATE_VERSION: Final = 7
"""Version 7 adds the rows' ``exc_state``: the attributes of an exception of the target's
own package (:mod:`.exc_state`).  Written only when a row has one."""

PRINTED_VERSION: Final = 8
"""Version 8 lets a row's ``mutated`` hold ``"(stdout)"``: the text the call printed
(:mod:`.printed`), compared on replay.  Written only when a row has one."""

READ_VERSIONS: Final = frozenset(
    {
        *(FORMAT_VERSION, CLOCK_VERSION, RECEIVER_VERSION, ROOT_VERSION, SHARED_VERSION),
        *(STATE_VERSION, PRINTED_VERSION),
    }
)

ParamKind = Literal[
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"
]
_KIND_NAMES: Final[dict[Any, ParamKind]] = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


class Param(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One parameter of the recorded signature."""

    name: str
    kind: ParamKind
    default: Any | msgspec.UnsetType = msgspec.UNSET
    """The frozen default value; absent when the parameter has none."""
    default_unfrozen: bool | msgspec.UnsetType = msgspec.UNSET
    """True when the parameter has a default that cannot be frozen (compared by presence only)."""

    def describe(self) -> str:
        """The parameter as Python would print it (``*, strict=False``), for error messages."""
        prefix = {"var_positional": "*", "var_keyword": "**"}.get(self.kind, "")
        text = prefix + self.name
        if self.default is not msgspec.UNSET:
            text += "=" + value_text(self.default)
        elif self.default_unfrozen is True:
            text += "=<default>"
        return text


class LedgerHeader(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Line 1 of a ledger: what was recorded, against which signature."""

    lockstep_ledger: int
    fn: str
    signature: list[Param]
    stem_length: Annotated[int, msgspec.Meta(ge=1)] = canon.DEFAULT_STEM
    """Characters of an exception's message a row keeps (a header that says fewer than one
    was not written by lockstep: the file is refused, not every row called stale)."""
    rows: int
    """How many row lines follow."""
    digest: str
    """sha256 (hex) of the row lines as written, each ending in a newline: a truncated,
    reordered, duplicated or hand-edited body no longer matches its header."""
    root: str | msgspec.UnsetType = msgspec.UNSET
    """The project folder the ledger was recorded in, when some row names a path inside
    it: replay from another folder puts its own in place (:mod:`.relocation`)."""

    def __post_init__(self) -> None:
        if self.lockstep_ledger not in READ_VERSIONS:
            raise ValueError(
                f"ledger format version {self.lockstep_ledger} is not supported "
                f"(this lockstep reads versions {FORMAT_VERSION} to {PRINTED_VERSION}; "
                "re-record it with --force)"
            )


class LedgerRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One distinct call and its outcome.

    The fields are declared in alphabetical order: :data:`ROW_ENCODER` writes them in
    declaration order, which is then the order the ledger has always written them in.
    """

    args: list[Any]
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The frozen instant the call ran under (absent: the real clock)."""
    exc_state: Any | msgspec.UnsetType = msgspec.UNSET
    """The public attributes of an exception of the target's own package, frozen (absent:
    none kept; :mod:`.exc_state`)."""
    exc_stem: str | msgspec.UnsetType = msgspec.UNSET
    exc_type: str | msgspec.UnsetType = msgspec.UNSET
    fn: str
    id: str
    kwargs: dict[str, Any]
    mutated: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    ok: bool
    on: Any | msgspec.UnsetType = msgspec.UNSET
    """A classmethod's row called on a subclass of the class that defines it
    (``ColorAll.blackbody(...)`` reaching ``Color.blackbody``): that subclass, frozen by
    name, which the call is replayed on (absent: the defining class)."""
    result: Any | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        if isinstance(self.mutated, dict) and not isinstance(self.mutated.get(PRINTED, ""), str):
            raise ValueError(f"`mutated` holds {PRINTED!r}, what the call printed, as no text")
        has_exc = self.exc_type is not msgspec.UNSET or self.exc_stem is not msgspec.UNSET
        if self.ok:
            if self.result is msgspec.UNSET:
                raise ValueError("a row with ok=true needs `result`")
            if has_exc or self.exc_state is not msgspec.UNSET:
                raise ValueError(
                    "a row with ok=true cannot have `exc_type`, `exc_stem` or `exc_state`"
                )
        else:
            if self.exc_type is msgspec.UNSET or self.exc_stem is msgspec.UNSET:
                raise ValueError("a row with ok=false needs `exc_type` and `exc_stem`")
            if self.result is not msgspec.UNSET:
                raise ValueError("a row with ok=false cannot have `result`")


ENCODER: Final = msgspec.json.Encoder(order="sorted")
ROW_ENCODER: Final = msgspec.json.Encoder()
"""Writes a row line: every dict in insertion order, so a dict argument is replayed in the
order it was passed (``",".join(row)`` depends on it), while the row's id, a digest of the
canonical (sorted) input, and every comparison ignore key order as Python's ``==`` does."""
HEADER_DECODER: Final = msgspec.json.Decoder(LedgerHeader)
ROW_DECODER: Final = msgspec.json.Decoder(LedgerRow)


def row_id(input_key: bytes) -> str:
    """The stable id of an input: 16 hex digits of the sha256 of its canonical bytes."""
    return hashlib.sha256(input_key).hexdigest()[:16]


def input_key(
    args: JSON,
    kwargs: JSON,
    clock: Clock | msgspec.UnsetType = msgspec.UNSET,
    on: JSON | msgspec.UnsetType = msgspec.UNSET,
) -> bytes:
    """Canonical bytes of a frozen input: what rows are deduplicated by (the clock it ran
    under is part of it: the same call on another day is another row; and so is the
    subclass a classmethod was called on, after a null for no clock)."""
    if on is not msgspec.UNSET:
        frozen_clock = None if clock is msgspec.UNSET else as_json(clock)
        return canon.canonical_json([args, kwargs, frozen_clock, on])
    if clock is msgspec.UNSET:
        return canon.canonical_json([args, kwargs])
    return canon.canonical_json([args, kwargs, as_json(clock)])


def row_key(row: LedgerRow) -> bytes:
    """:func:`input_key` of a row's input."""
    return input_key(row.args, row.kwargs, row.clock, row.on)


def signature_of(func: Callable[..., Any], *, drop_first: bool = False) -> list[Param]:
    """The parameter list of ``func`` as the header freezes it.

    ``drop_first`` removes the implicit ``cls`` of a classmethod's underlying function.
    """
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    params = list(sig.parameters.values())
    if drop_first and params:
        params = params[1:]
    out: list[Param] = []
    # A default naming the function's own class or function (``klass=Interval``) freezes by
    # name, and one naming another package's does not, however far the caller has set the
    # codec up: record, verification and replay agree.
    with callables_only_from(getattr(func, "__module__", None) or ""):
        for p in params:
            kind = _KIND_NAMES[p.kind]
            if p.default is inspect.Parameter.empty:
                out.append(Param(name=p.name, kind=kind))
                continue
            try:
                out.append(Param(name=p.name, kind=kind, default=canon.encode(p.default)))
            except CanonError:
                out.append(Param(name=p.name, kind=kind, default_unfrozen=True))
    return out


def describe_signature(params: list[Param]) -> str:
    """``(raw, *, strict=False)``: a signature as the user wrote it."""
    parts: list[str] = []
    star_done = False
    slash_pending = False
    for p in params:
        if p.kind == "positional_only":
            slash_pending = True
        elif slash_pending:
            parts.append("/")
            slash_pending = False
        if p.kind == "var_positional":
            star_done = True
        if p.kind == "keyword_only" and not star_done:
            parts.append("*")
            star_done = True
        parts.append(p.describe())
    if slash_pending:
        parts.append("/")
    return "(" + ", ".join(parts) + ")"


def signature_changes(recorded: list[Param], current: list[Param]) -> list[str]:
    """What changed between two signatures, one phrase per parameter; empty when equal."""
    if recorded == current:
        return []
    before = {p.name: p for p in recorded}
    after = {p.name: p for p in current}
    changes: list[str] = []
    for p in recorded:
        now = after.get(p.name)
        if now is None:
            changes.append(f"{p.name!r} was removed")
            continue
        if now.kind != p.kind:
            changes.append(
                f"{p.name!r} changed from {p.kind.replace('_', '-')} "
                f"to {now.kind.replace('_', '-')}"
            )
        if (now.default, now.default_unfrozen) != (p.default, p.default_unfrozen):
            changes.append(f"{p.name!r} changed its default ({p.describe()} -> {now.describe()})")
    for p in current:
        if p.name not in before:
            changes.append(f"{p.name!r} was added")
    if not changes:
        changes.append("the parameters were reordered")
    return changes


def call_text(
    fn: str, args: list[JSON], kwargs: dict[str, JSON], *, limit: int | None = None
) -> str:
    """A row's call written as Python: ``parse_amount(b'9.99', strict=True)``.

    The target is named by its short name; the values are rendered from their
    frozen form by :mod:`lockstep.canon.text` (display only: what is compared is
    always the canonical form), each cut to ``limit`` characters.
    """
    return _call_text(short_name(fn), args, kwargs, limit=limit)


def receiver_name(fn: str, on: JSON | msgspec.UnsetType) -> str:
    """The target as a row calls it: ``ColorAll.blackbody`` for a classmethod's row called
    on that subclass (``on``), else the target itself."""
    name = on.get("$fn") if isinstance(on, dict) else None
    if not isinstance(name, str):
        return fn
    return f"{name}.{fn.rpartition('.')[2]}"


def row_text(row: LedgerRow) -> str:
    """A row's call as :func:`call_text` writes it (each value cut to
    :data:`SHOWN_VALUE` characters), with the frozen clock it ran under."""
    text = call_text(receiver_name(row.fn, row.on), row.args, row.kwargs, limit=SHOWN_VALUE)
    if row.clock is msgspec.UNSET:
        return text
    return f"{text} at {row.clock.describe()}"
