"""Named normalization rules: what a reviewer reads instead of an opaque "ignore".

A rule rewrites volatile spans of text (a run id, a timestamp, a temp path)
to a fixed placeholder before hashing and comparing.  Rules are *named* so the
oracle file can record exactly which ones were applied (a replay uses the
rules the freeze used, and a change of rules shows in review), and they count
how often they fire so an over-broad rule hiding real output is visible.

Built-ins: ``uuid`` → ``<UUID>``, ``iso-timestamp`` → ``<TS>``, ``tmp-path`` →
``<TMP>``, ``hex-address`` → ``<ADDR>``, and ``json-sort-keys`` (re-serializes a
whole JSON document with sorted keys).  Users add regex rules with
``[[rule]] name, pattern, replace`` in the config.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from lockstep.addresses import HEX_ADDRESS
from lockstep.config import Project, RuleSpec
from lockstep.errors import ConfigError


class RuleRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A rule as an oracle file records it, so the replay applies exactly the same one."""

    name: str
    pattern: str = ""
    replace: str = ""
    ignore_case: bool = False
    builtin: bool = False


@dataclass(frozen=True)
class Rule:
    """One named rewrite of text; returns the new text and how many spans it replaced."""

    name: str
    apply: Callable[[str], tuple[str, int]]
    record: RuleRecord


def check_replacement(pattern: str, replace: str, flags: int = 0) -> None:
    """Raise :class:`re.error` now if ``replace`` refers to a group ``pattern`` lacks.

    Python parses a replacement template only when a match happens, so a bad
    ``\\2`` would otherwise fail in the middle of a replay.  Matching the empty
    alternative of ``(?:pattern)|`` gives a match object with the same groups,
    which makes the template parse up front.
    """
    re.compile(f"(?:{pattern})|", flags).sub(replace, "", count=1)


def _regex_rule(record: RuleRecord) -> Rule:
    flags = re.IGNORECASE if record.ignore_case else 0
    compiled = re.compile(record.pattern, flags)
    replace = record.replace
    check_replacement(record.pattern, replace, flags)

    def apply(text: str) -> tuple[str, int]:
        return compiled.subn(replace, text)

    return Rule(record.name, apply, record)


def _json_sort_keys(text: str) -> tuple[str, int]:
    """Re-serialize a JSON document (or each JSON line) with sorted keys; other text is kept."""
    stripped = text.strip()
    if not stripped:
        return text, 0
    try:
        doc = json.loads(stripped)
    except ValueError:
        doc = None
    else:
        trailing = "\n" if text.endswith("\n") else ""
        return json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=2) + trailing, 1
    fired = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        candidate = line.strip()
        if candidate[:1] in ("{", "["):
            try:
                lines[i] = json.dumps(json.loads(candidate), sort_keys=True, ensure_ascii=False)
                fired += 1
            except ValueError:
                continue
    return "\n".join(lines), fired


_UUID: Final = r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
_ISO_TS: Final = (
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?\b"
)
_TMP_PATH: Final = (
    r"(?:/private)?/(?:tmp|var/folders|var/tmp)/[^\s'\"]*"
    r"|[A-Za-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\[^\s'\"]*"
)

BUILTIN_PATTERNS: Final[dict[str, tuple[str, str]]] = {
    "uuid": (_UUID, "<UUID>"),
    "iso-timestamp": (_ISO_TS, "<TS>"),
    "tmp-path": (_TMP_PATH, "<TMP>"),
    "hex-address": (HEX_ADDRESS, "<ADDR>"),
}
BUILTIN_NAMES: Final = (*BUILTIN_PATTERNS, "json-sort-keys")


def builtin_rule(name: str) -> Rule | None:
    """The built-in rule called ``name``, or None."""
    if name == "json-sort-keys":
        return Rule(name, _json_sort_keys, RuleRecord(name=name, builtin=True))
    if name in BUILTIN_PATTERNS:
        pattern, replace = BUILTIN_PATTERNS[name]
        return _regex_rule(RuleRecord(name=name, pattern=pattern, replace=replace, builtin=True))
    return None


def rule_from_spec(spec: RuleSpec) -> Rule:
    """A user rule from the config (already checked to compile by :mod:`lockstep.config`)."""
    return _regex_rule(
        RuleRecord(
            name=spec.name,
            pattern=spec.pattern,
            replace=spec.replace,
            ignore_case=spec.ignore_case,
        )
    )


SECRETS_RULE: Final = "secrets"


def secrets_rule(encoded: str) -> Rule:
    """The ``[[secret]]`` scrubbing as a rule, first of every oracle's rules.

    Its record keeps the secrets' names, variables and patterns (never a value), so the
    oracle file says what was scrubbed, a change of ``[[secret]]`` makes the oracle
    stale like any rule change, and a replay worker rebuilds it with today's values.
    """
    from lockstep.secrets import Scrubber

    scrubber = Scrubber.decode(encoded)
    record = RuleRecord(name=SECRETS_RULE, replace=encoded, builtin=True)
    return Rule(SECRETS_RULE, scrubber.scrub_count, record)


def rule_from_record(record: RuleRecord, *, where: str) -> Rule:
    """Rebuild a rule exactly as an oracle file recorded it."""
    if record.builtin and record.name == "json-sort-keys":
        return Rule(record.name, _json_sort_keys, record)
    if record.builtin and record.name == SECRETS_RULE:
        try:
            return secrets_rule(record.replace)
        except (ValueError, TypeError) as e:
            raise ConfigError(f"{where}: rule {record.name!r} is not readable: {e}") from None
    try:
        return _regex_rule(record)
    except (re.error, RecursionError, OverflowError) as e:
        raise ConfigError(f"{where}: rule {record.name!r} does not compile: {e}") from None


@dataclass
class RuleSet:
    """Rules applied in order; counts how many spans each one replaced."""

    rules: tuple[Rule, ...] = ()
    fired: Counter[str] = field(default_factory=Counter)
    ambient: Rule | None = None
    """The secrets of today's environment found by their variable's name (``[lockstep]
    secret_env``), scrubbed before every rule like a ``[[secret]] env`` value (counted
    under ``secrets``).  Not one of :meth:`records`: which variables a machine has set is
    not part of an oracle, so it never makes one stale; replay scrubs with its own."""

    @property
    def active(self) -> bool:
        """Whether applying the set can change a text."""
        return bool(self.rules) or self.ambient is not None

    def apply(self, text: str) -> str:
        """Normalize ``text``; adds to :attr:`fired`."""
        if self.ambient is not None:
            text, count = self.ambient.apply(text)
            if count:
                self.fired[SECRETS_RULE] += count
        for rule in self.rules:
            text, count = rule.apply(text)
            if count:
                self.fired[rule.name] += count
        return text

    def apply_bytes(self, data: bytes) -> bytes:
        """Normalize bytes that are UTF-8 text; other bytes pass through unchanged."""
        if not self.active:
            return data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return self.apply(text).encode("utf-8")

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rules]

    def records(self) -> list[RuleRecord]:
        """What an oracle file stores, so replay uses exactly these rules."""
        return [r.record for r in self.rules]

    def counts(self) -> tuple[tuple[str, int], ...]:
        """``(name, spans replaced)`` for every rule in order, zero counts included."""
        return tuple((r.name, self.fired.get(r.name, 0)) for r in self.rules)

    def fresh(self) -> RuleSet:
        """The same rules with zeroed counters (one per replay or per worker)."""
        return RuleSet(self.rules, ambient=self.ambient)


def ambient_rule(secret_env: Sequence[str], configured: Iterable[str] = ()) -> Rule | None:
    """The scrubbing of the variables of today's environment whose names match
    ``secret_env`` (those not ``configured`` as ``[[secret]] env``), or None when no such
    variable is set (see :attr:`RuleSet.ambient`)."""
    from lockstep.secrets.policy import ambient_scrubber

    scrubber = ambient_scrubber(secret_env, frozenset(configured))
    if scrubber is None:
        return None
    return Rule(SECRETS_RULE, scrubber.scrub_count, RuleRecord(name=SECRETS_RULE, builtin=True))


def secret_env_of(project: Project) -> tuple[list[str], list[str]]:
    """The project's ``secret_env`` patterns and its ``[[secret]] env`` variables: the
    arguments of :func:`ambient_rule` (what a worker process is handed)."""
    configured = [s.env for s in project.config.secret if s.env and not s.allow]
    return list(project.config.lockstep.secret_env), configured


def project_ambient_rule(project: Project) -> Rule | None:
    """:func:`ambient_rule` of the project's ``secret_env`` and ``[[secret]]`` tables."""
    return ambient_rule(*secret_env_of(project))


def resolve_rules(names: Sequence[str], project: Project, *, where: str) -> RuleSet:
    """Turn configured rule names into a :class:`RuleSet`; an unknown name is a config error."""
    user = {r.name: r for r in project.config.rule}
    rules: list[Rule] = []
    if any(not s.allow for s in project.config.secret):
        from lockstep.secrets import scrubber_for

        rules.append(secrets_rule(scrubber_for(project).encode()))
    for i, name in enumerate(names):
        if name in user:
            try:
                rules.append(rule_from_spec(user[name]))
            except re.error as e:
                index = project.config.rule.index(user[name])
                raise ConfigError(
                    f"{project.config_name}: rule[{index}] ({name!r}): pattern or replace "
                    f"does not compile: {e}"
                ) from None
            continue
        builtin = builtin_rule(name)
        if builtin is None:
            known = ", ".join([*BUILTIN_NAMES, *user]) or "none"
            raise ConfigError(
                f"{project.config_name}: {where}.rules[{i}]: unknown rule {name!r} (known: {known})"
            )
        rules.append(builtin)
    return RuleSet(tuple(rules), ambient=project_ambient_rule(project))


def rules_from_records(
    records: Iterable[RuleRecord], *, where: str, ambient: Rule | None = None
) -> RuleSet:
    """The rule set an oracle file recorded (``ambient``: :attr:`RuleSet.ambient`)."""
    return RuleSet(tuple(rule_from_record(r, where=where) for r in records), ambient=ambient)


def rule_counts_text(fired: Mapping[str, int], names: Iterable[str]) -> str:
    """``rules fired: uuid×2, iso-timestamp×0`` -- every rule listed, zero counts too.

    A rule that replaced nothing is shown as such, so a reviewer sees both a rule
    that hides real output and one that no longer matches anything.
    """
    parts = [f"{name}×{fired.get(name, 0)}" for name in names]
    return "rules fired: " + ", ".join(parts) if parts else ""
