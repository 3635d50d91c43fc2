"""Scrubbing by value: a configured secret becomes ``<NAME>`` in everything recorded.

A ``[[secret]] env = "API_TOKEN"`` names a value by where it comes from.  Recording
replaces that value with the placeholder ``<API_TOKEN>`` wherever it appears; replay
puts the real value back where the program or function is handed it (:meth:`Scrubber.reveal`)
and scrubs what comes out again before comparing, so the comparison is exact while the
secret itself never reaches a file.  ``[[secret]] name = "session", pattern = "..."``
scrubs every match of a regex the same way (a value that cannot be named in advance).

A value that survives scrubbing in another spelling -- base64 (at any of the three byte
alignments), URL-quoted, JSON-escaped, hex -- is reported by :meth:`Scrubber.leaks`:
the caller refuses the case rather than write it.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote, quote_plus

import msgspec

from lockstep.errors import UsageError

MIN_VALUE: Final = 4
"""Shorter values are not scrubbed (``<X>`` in place of every ``a`` would wreck the record)."""
AMBIENT_MIN: Final = 8
"""An environment secret found by its name (``[lockstep] secret_env``) shorter than this is
named in a warning instead of scrubbed: nobody chose it, and a short word is everywhere."""


_PLACEHOLDER: Final = re.compile(r"<([A-Z_][A-Z0-9_]*)>")
_PLACEHOLDER_BYTES: Final = re.compile(rb"<[A-Z_][A-Z0-9_]*>")
"""A placeholder as scrubbing by a variable's name writes it (variables named in capitals:
``<author>`` in a document is no placeholder)."""


def _named_secret(name: str, patterns: Iterable[str]) -> bool:
    """Whether a variable's name matches one of the ``secret_env`` patterns."""
    return any(fnmatch.fnmatchcase(name.upper(), p.upper()) for p in patterns)


class SecretMissing(UsageError):
    """A placeholder must be revealed but its environment variable is not set."""

    def __init__(self, name: str, env: str) -> None:
        super().__init__(
            f"the recorded value <{name}> stands for ${env}, which is not set here: "
            f"export {env} (its real value) to replay this case"
        )
        self.env = env


@dataclass(frozen=True)
class NamedSecret:
    """One ``[[secret]]`` that scrubs: by environment variable or by pattern."""

    name: str
    env: str = ""
    pattern: str = ""

    @property
    def placeholder(self) -> str:
        return f"<{self.name}>"


def encoded_forms(value: str) -> set[str]:
    """The spellings of ``value`` other than itself that a program may print it in."""
    raw = value.encode("utf-8")
    forms = {
        quote(value, safe=""),
        quote_plus(value, safe=""),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),
        raw.hex(),
        raw.hex().upper(),
    }
    for pad in range(3):  # base64 of the value inside a longer byte string, at each alignment
        encoded = base64.b64encode(b"\0" * pad + raw + b"\0\0").decode("ascii")
        start = -(-8 * pad // 6)
        end = 8 * (pad + len(raw)) // 6
        middle = encoded[start:end]
        if len(middle) >= MIN_VALUE:
            forms.add(middle)
            forms.add(middle.replace("+", "-").replace("/", "_"))
    forms.discard(value)
    return {f for f in forms if len(f) >= MIN_VALUE}


@dataclass
class Scrubber:
    """The configured secrets with today's values (read from the environment once)."""

    secrets: tuple[NamedSecret, ...] = ()
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    ambient: tuple[NamedSecret, ...] = ()
    """Environment variables whose names look secret (``[lockstep] secret_env``): scrubbed
    and revealed like ``secrets``, but not part of :meth:`encode` (an oracle does not go
    stale because a machine has another variable set)."""
    ambient_names: tuple[str, ...] = ()
    """The ``secret_env`` patterns: a placeholder ``<NAME>`` of a variable whose name
    matches one (as scrubbing writes it) cannot be revealed when the variable is not set
    (:meth:`reveal`, :meth:`missing`)."""

    def __post_init__(self) -> None:
        configured = {s.env for s in self.secrets if s.env}
        self.ambient = tuple(s for s in self.ambient if s.env not in configured)
        self._values: list[tuple[str, str]] = sorted(
            [
                (value, s.placeholder)
                for s in self.secrets
                if s.env and len(value := self.environ.get(s.env, "")) >= MIN_VALUE
            ]
            + [
                (value, s.placeholder)
                for s in self.ambient
                if len(value := self.environ.get(s.env, "")) >= AMBIENT_MIN
            ],
            key=lambda pair: -len(pair[0]),
        )
        self._patterns = [(re.compile(s.pattern), s.placeholder) for s in self.secrets if s.pattern]
        self._forms = [
            (form, ph)
            for value, ph in self._values
            for form in (value, *sorted(encoded_forms(value)))
        ]
        self._by_placeholder = {s.placeholder: s for s in self.secrets if s.env}
        self._by_placeholder.update(
            (s.placeholder, s) for s in self.ambient if s.env in self.environ
        )
        self._placeholders = [s.placeholder for s in self.secrets]
        self._placeholder_bytes = [msgspec.json.encode(p)[1:-1] for p in self._by_placeholder]

    def __bool__(self) -> bool:
        return bool(self.secrets) or bool(self._values)

    @property
    def spellings(self) -> list[str]:
        """Every spelling :meth:`leaks` looks for (each value as itself and encoded): a text
        holding none of them is left as it is by :meth:`scrub_values`, and leaks nothing
        unless a pattern matches (:attr:`has_patterns`)."""
        return [form for form, _ in self._forms]

    @property
    def has_patterns(self) -> bool:
        """Whether some secret is a ``pattern`` (found by a regex, not by its value)."""
        return bool(self._patterns)

    @property
    def short(self) -> list[str]:
        """The environment secrets found by name whose values are too short to scrub."""
        return sorted(
            s.env for s in self.ambient if 0 < len(self.environ.get(s.env, "")) < AMBIENT_MIN
        )

    def mask(self, text: str) -> str:
        """``text`` for a person to read: every known value in every spelling (raw, base64,
        hex, URL-quoted, JSON-escaped) and every pattern match replaced by its placeholder."""
        for form, placeholder in self._forms:
            if form in text:
                text = text.replace(form, placeholder)
        for pattern, placeholder in self._patterns:
            text = pattern.sub(placeholder, text)
        return text

    def scrub(self, text: str) -> str:
        """``text`` with every configured value replaced by its placeholder."""
        for value, placeholder in self._values:
            if value in text:
                text = text.replace(value, placeholder)
        for pattern, placeholder in self._patterns:
            text = pattern.sub(placeholder, text)
        return text

    def scrub_count(self, text: str) -> tuple[str, int]:
        """:meth:`scrub`, and how many values it replaced (for the rule counts)."""
        count = 0
        for value, placeholder in self._values:
            if value in text:
                count += text.count(value)
                text = text.replace(value, placeholder)
        for pattern, placeholder in self._patterns:
            text, n = pattern.subn(placeholder, text)
            count += n
        return text, count

    def scrub_values(self, text: str) -> str:
        """:meth:`scrub` of the ``env`` secrets only: what :meth:`reveal` can put back."""
        for value, placeholder in self._values:
            if value in text:
                text = text.replace(value, placeholder)
        return text

    def leaks(self, text: str) -> list[str]:
        """The placeholders of secrets that still show in ``text``: an ``env`` value as
        itself (where nothing scrubbed it) or in another spelling, a pattern's match."""
        found = {ph for form, ph in self._forms if form in text}
        if self._patterns:
            for placeholder in self._placeholders:
                text = text.replace(placeholder, "")
            found.update(ph for pattern, ph in self._patterns if pattern.search(text))
        return sorted(found)

    def reveal(self, text: str) -> str:
        """``text`` with each env secret's placeholder replaced by its value from the
        environment (what the program or function was handed at record time).

        :class:`SecretMissing` when the variable is not set: a ``[[secret]] env`` one, or
        one whose name matches ``secret_env`` (``<DB_PASSWORD>``: record scrubbed it by
        that name) -- handing on the placeholder itself would replay green against the
        scrubbed record without the function or program ever seeing the value."""
        if "<" not in text:
            return text
        for placeholder, secret in self._by_placeholder.items():
            if placeholder in text:
                value = self.environ.get(secret.env)
                if not value:  # empty is not set: "" cannot be what was scrubbed
                    raise SecretMissing(secret.name, secret.env)
                text = text.replace(placeholder, value)
        missing = self.missing(text)
        if missing is not None:
            raise missing
        return text

    def may_reveal(self, data: bytes) -> bool:
        """Whether JSON text ``data`` (msgspec's encoding of recorded values) may hold a
        placeholder that :meth:`reveal` replaces or :meth:`missing` refuses: one of this
        scrubber's, or -- when some variable is named like ``secret_env`` -- any
        ``<NAME>``.  A ``<`` alone (``"<1.0"`` in a version spec) is not one."""
        if b"<" not in data:
            return False
        if any(placeholder in data for placeholder in self._placeholder_bytes):
            return True
        return bool(self.ambient_names) and _PLACEHOLDER_BYTES.search(data) is not None

    def missing(self, text: str) -> SecretMissing | None:
        """Why ``text`` (a recorded value) cannot be replayed here: it holds the
        placeholder of an environment secret that is not set (``[[secret]] env``, or a
        variable named like ``secret_env``), else None."""
        if "<" not in text:
            return None
        for placeholder, secret in self._by_placeholder.items():
            if placeholder in text and not self.environ.get(secret.env):
                return SecretMissing(secret.name, secret.env)
        if not self.ambient_names:
            return None
        for match in _PLACEHOLDER.finditer(text):
            name = match.group(1)
            if not self.environ.get(name) and _named_secret(name, self.ambient_names):
                return SecretMissing(name, name)
        return None

    def encode(self) -> str:
        """The secrets as an oracle file's rule record keeps them: names, never values."""
        return json.dumps([[s.name, s.env, s.pattern] for s in self.secrets])

    @classmethod
    def decode(cls, text: str) -> Scrubber:
        """The scrubber an oracle file recorded (:meth:`encode`), with today's values."""
        items: Iterable[list[str]] = json.loads(text)
        return cls(tuple(NamedSecret(name, env, pattern) for name, env, pattern in items))
