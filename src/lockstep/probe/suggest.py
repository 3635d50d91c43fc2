"""Rule suggestions: from "these runs differ" to a named rule a reviewer can read.

Given the variants a probe found, :func:`suggest` aligns their outputs line by
line, then character by character inside each changed line, and looks at
every span that differs:

* a span inside a match of a built-in rule (``uuid``, ``iso-timestamp``,
  ``tmp-path``, ``hex-address``) suggests that built-in by name;
* a span inside a process id (``pid 4242``), a duration (``took 12.5 ms``) or a
  port (``localhost:53122``) suggests a ready-made user rule for that kind;
* anything else gets a *minimal* regex: the literal word just before the span
  as an anchor (``run-``), then the narrowest character class and length that
  covers every variant's value (``[0-9a-f]{8}``).

:func:`suggest_and_verify` then re-probes with the suggestions added: a
suggestion is only called working when the re-probe finds one signature.  If
the first round is not enough (a second volatile field hid behind the first),
it suggests again on what still differs, for a few rounds.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from lockstep.probe.runs import ProbeReport, ProbeTarget, probe_many
from lockstep.process import RunResult
from lockstep.rules import BUILTIN_PATTERNS, RuleRecord, RuleSet, builtin_rule, rules_from_records


@dataclass(frozen=True)
class Suggestion:
    """A proposed rule: a built-in to add by name, or a user ``[[rule]]``."""

    name: str
    builtin: bool
    pattern: str = ""
    replace: str = ""
    ignore_case: bool = False
    kind: str = ""
    """What was recognised: ``uuid``, ``pid``, ``duration``, ``port``, ``value`` ..."""
    example: str = ""
    """One differing value seen, for the reader."""
    secret: str = ""
    """The detector that calls a varying value a secret: such a suggestion is never
    proposed (a rule would file a credential under "volatile"; it must be scrubbed)."""

    def record(self) -> RuleRecord:
        if self.builtin:
            rule = builtin_rule(self.name)
            assert rule is not None
            return rule.record
        return RuleRecord(
            name=self.name, pattern=self.pattern, replace=self.replace, ignore_case=self.ignore_case
        )

    def toml(self) -> str:
        """The ``[[rule]]`` block to paste into ``lockstep.toml`` (empty for a built-in)."""
        if self.builtin:
            return ""
        lines = [
            "[[rule]]",
            f"name = {_toml_str(self.name)}",
            f"pattern = {_toml_str(self.pattern)}",
            f"replace = {_toml_str(self.replace)}",
        ]
        if self.ignore_case:
            lines.append("ignore_case = true")
        return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    """A TOML literal string when possible (regexes read best without escapes)."""
    if "'" not in text and "\n" not in text:
        return f"'{text}'"
    return json.dumps(text)


@dataclass(frozen=True)
class _Kind:
    name: str
    pattern: re.Pattern[str]
    suggestion: Suggestion


_PID: Final = r"\b(pid[=: #]*)[0-9]+"
_DURATION: Final = r"\b[0-9]+(?:\.[0-9]+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds|min|minutes)\b"
_CLOCK: Final = r"\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?\b"
_PORT: Final = (
    r"((?:localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\[[0-9a-fA-F:]*\]):|\bport[ =:]+)[0-9]{2,5}\b"
)

_KINDS: Final[tuple[_Kind, ...]] = (
    *(
        _Kind(name, re.compile(pattern), Suggestion(name, True, kind=name))
        for name, (pattern, _replace) in BUILTIN_PATTERNS.items()
    ),
    _Kind(
        "pid",
        re.compile(_PID, re.IGNORECASE),
        Suggestion("pid", False, _PID, r"\g<1><PID>", ignore_case=True, kind="pid"),
    ),
    _Kind(
        "port",
        re.compile(_PORT, re.IGNORECASE),
        Suggestion("port", False, _PORT, r"\g<1><PORT>", ignore_case=True, kind="port"),
    ),
    _Kind(
        "clock-time",
        re.compile(_CLOCK),
        Suggestion("clock-time", False, _CLOCK, "<TIME>", kind="clock time"),
    ),
    _Kind(
        "duration",
        re.compile(_DURATION),
        Suggestion("duration", False, _DURATION, "<DURATION>", kind="duration"),
    ),
)

_WORD: Final = re.compile(r"[A-Za-z0-9]")
_ANCHOR: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)([-_=:#/]|: | )$")
_META: Final = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _literal(text: str) -> str:
    """Escape only what a regex needs escaped, so the pattern stays readable."""
    return _META.sub(r"\\\1", text)


def _changed_line_pairs(a: str, b: str) -> Iterator[tuple[str, str]]:
    a_lines, b_lines = a.split("\n"), b.split("\n")
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            yield from zip(a_lines[i1:i2], b_lines[j1:j2], strict=True)


def _spans(a: str, b: str) -> Iterator[tuple[int, int, int, int]]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield i1, i2, j1, j2


def _overlaps(pattern: re.Pattern[str], text: str, start: int, end: int) -> str | None:
    for m in pattern.finditer(text):
        if m.start() <= start < m.end() or (start < m.end() and m.start() < max(end, start + 1)):
            return m.group(0)
    return None


def _token(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to the whole run of letters and digits around it."""
    while start > 0 and _WORD.match(text[start - 1]):
        start -= 1
    while end < len(text) and _WORD.match(text[end]):
        end += 1
    return start, end


def _char_class(values: Sequence[str]) -> str:
    joined = "".join(values)
    if joined.isdigit():
        cls = "[0-9]"
    elif re.fullmatch(r"[0-9a-f]+", joined):
        cls = "[0-9a-f]"
    elif re.fullmatch(r"[0-9A-F]+", joined):
        cls = "[0-9A-F]"
    elif re.fullmatch(r"[0-9a-fA-F]+", joined):
        cls = "[0-9a-fA-F]"
    elif re.fullmatch(r"[0-9a-z]+", joined):
        cls = "[0-9a-z]"
    elif re.fullmatch(r"[0-9A-Z]+", joined):
        cls = "[0-9A-Z]"
    else:
        cls = "[A-Za-z0-9]"
    lengths = {len(v) for v in values}
    if len(lengths) == 1:
        n = lengths.pop()
        return cls if n == 1 else f"{cls}{{{n}}}"
    return f"{cls}+"


@dataclass(frozen=True)
class _Anchored:
    """A differing value right after a literal anchor word (``run-``, ``batch ``)."""

    prefix: str
    word: str
    values: tuple[str, str]


def _anchored(a: str, b: str, span: tuple[int, int, int, int]) -> _Anchored | None:
    i1, i2, j1, j2 = span
    a1, a2 = _token(a, i1, i2)
    b1, b2 = _token(b, j1, j2)
    value_a, value_b = a[a1:a2], b[b1:b2]
    if not value_a or not value_b:
        return None
    anchor = _ANCHOR.search(a[:a1])
    if anchor is None or not b[:b1].endswith(anchor.group(0)):
        return None
    word = anchor.group(1).lower().replace("_", "-")
    return _Anchored(anchor.group(0), word, (value_a, value_b))


def _generic(prefix: str, word: str, values: Sequence[str]) -> Suggestion:
    """The narrowest regex after ``prefix`` that covers every variant's value."""
    pattern = _literal(prefix) + _char_class(values)
    replacement = prefix.replace("\\", "\\\\") + f"<{word.upper()}>"
    return Suggestion(word, False, pattern, replacement, kind="value", example=values[0])


def _suggest_pair(a: str, b: str) -> Iterator[Suggestion | _Anchored]:
    for line_a, line_b in _changed_line_pairs(a, b):
        for span in _spans(line_a, line_b):
            i1, i2, j1, j2 = span
            for kind in _KINDS:
                found = _overlaps(kind.pattern, line_a, i1, i2) or _overlaps(
                    kind.pattern, line_b, j1, j2
                )
                if found:
                    yield replace(kind.suggestion, example=found)
                    break
            else:
                anchored = _anchored(line_a, line_b, span)
                if anchored is not None:
                    yield anchored


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _unless_secret(suggestion: Suggestion, values: Sequence[str]) -> Suggestion:
    """``suggestion`` marked (and its example dropped) if a varying value is a secret."""
    from lockstep.secrets.detect import detector

    scan = detector()
    for value in values:
        hits = scan.scan_text(value) or scan.scan_text(json.dumps(value))
        if hits:
            return replace(suggestion, secret=hits[0][1].detector, example="")
    return suggestion


def _order(s: Suggestion) -> tuple[int, int, str, str]:
    """Built-ins first in their own order, then user rules by name: the same list whatever
    order the variants' differences were found in (a run's timing decides which pair of
    variants shows a value first)."""
    builtins = list(BUILTIN_PATTERNS)
    rank = builtins.index(s.name) if s.builtin and s.name in builtins else len(builtins)
    return (0 if s.builtin else 1, rank, s.name, s.pattern)


def suggest(variants: Sequence[RunResult], *, taken: Sequence[str] = ()) -> list[Suggestion]:
    """Rules that would make ``variants`` agree: built-ins first, then user rules as found.

    A value after the same anchor gets *one* regex covering what every variant
    printed there, not one per pair of variants.
    """
    if len(variants) < 2:
        return []
    kinds: dict[str, Suggestion] = {}
    anchored: dict[str, tuple[str, list[str]]] = {}
    base = variants[0]
    for other in variants[1:]:
        for stream in ("stdout", "stderr"):
            a, b = _text(getattr(base, stream)), _text(getattr(other, stream))
            if a is None or b is None or a == b:
                continue
            for found in _suggest_pair(a, b):
                if isinstance(found, _Anchored):
                    _word, values = anchored.setdefault(found.prefix, (found.word, []))
                    values.extend(v for v in found.values if v not in values)
                else:
                    kinds.setdefault(found.name, found)
    proposed = [_unless_secret(s, [s.example]) for s in kinds.values()] + [
        _unless_secret(_generic(prefix, word, values), values)
        for prefix, (word, values) in anchored.items()
    ]
    names = set(taken)
    chosen: list[Suggestion] = []
    for s in sorted(proposed, key=_order):
        if s.name in names:
            if s.builtin:
                continue
            n = 2
            while f"{s.name}-{n}" in names:
                n += 1
            s = replace(s, name=f"{s.name}-{n}")
        names.add(s.name)
        chosen.append(s)
    return chosen


@dataclass(frozen=True)
class Verified:
    """Suggestions and what re-probing with them found."""

    suggestions: tuple[Suggestion, ...]
    reports: tuple[ProbeReport, ...]
    rounds: int
    secrets: tuple[Suggestion, ...] = ()
    """What varies but is a secret: said so, never proposed as a rule."""

    @property
    def working(self) -> bool:
        return bool(self.suggestions) and all(r.deterministic for r in self.reports)

    def rule_names(self, existing: Sequence[str]) -> list[str]:
        return [*existing, *(s.name for s in self.suggestions if s.name not in existing)]

    def toml(self, existing: Sequence[str]) -> str:
        """What to paste: the oracle's new ``rules = [...]`` line and each ``[[rule]]`` block."""
        names = ", ".join(json.dumps(n) for n in self.rule_names(existing))
        blocks = [s.toml() for s in self.suggestions if not s.builtin]
        return "\n".join([f"rules = [{names}]\n", *blocks])


def suggest_and_verify(
    reports: Sequence[ProbeReport],
    *,
    rules: RuleSet,
    runs: int,
    jobs: int,
    max_rounds: int = 3,
) -> Verified:
    """Suggest rules from the probes' variants, then re-probe until one signature (or give up)."""
    chosen: list[Suggestion] = []
    secrets: list[Suggestion] = []
    current = list(reports)
    rounds = 0
    while rounds < max_rounds:
        taken = [*rules.names, *(s.name for s in chosen)]
        new: list[Suggestion] = []
        for report in current:
            if report.deterministic:
                continue
            examples = [v.example for v in report.normalized]
            for s in suggest(examples, taken=[*taken, *(x.name for x in new)]):
                if s.secret:
                    if all(s.name != x.name for x in secrets):
                        secrets.append(s)
                    continue
                if all((s.name, s.pattern) != (x.name, x.pattern) for x in (*chosen, *new)):
                    new.append(s)
        if not new:
            break
        chosen.extend(new)
        rounds += 1
        extended = RuleSet(
            (
                *rules.rules,
                *rules_from_records([s.record() for s in chosen], where="suggestion").rules,
            )
        )
        targets: list[ProbeTarget] = [r.target for r in reports]
        current = probe_many(targets, runs=runs, jobs=jobs, rules=extended)
        if all(r.deterministic for r in current):
            break
    # A suggestion that never fired in the re-probe changed nothing: leaving it out keeps the
    # set minimal and the verification true.
    fired = {name for r in current for name, count in r.fired.items() if count}
    chosen = sorted((s for s in chosen if s.name in fired), key=_order)
    return Verified(tuple(chosen), tuple(current), rounds, tuple(sorted(secrets, key=_order)))
