"""The one check every oracle kind makes before it writes a case: scrub, then scan.

:func:`policy_for` reads the project's ``[[secret]]`` tables and ``[lockstep] secrets``
once.  A kind hands :meth:`SecretPolicy.refusal` the fields of one case as they are
about to be written (already scrubbed); any string in them that detect-secrets flags,
or in which a scrubbed value still shows encoded, makes the case refused: the message
names the case, the field, the line and the detector, never the value (only its sha256,
which is what an allow entry takes -- detect-secrets' own baselines keep a hash too).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lockstep.config import Project, load_project
from lockstep.errors import LockstepError
from lockstep.model import DictKey, PathSegment, Refusal, RefusalReason, SecretFinding
from lockstep.secrets.detect import may_hold_secret, scan_text
from lockstep.secrets.scrub import NamedSecret, Scrubber

_MEMBER_START: Final = re.compile(r'(?<=[,{\[])(?=")')
"""Where a member of a one-line JSON document starts."""
INLINE_ALLOW: Final = "pragma: allowlist secret"
"""detect-secrets' own inline marker: a line carrying it is not reported."""


Finding = SecretFinding
"""One secret found in one field of one case (:class:`lockstep.model.SecretFinding`)."""


FieldPath = tuple[PathSegment, ...]


def strings(value: Any, path: FieldPath) -> Iterator[tuple[FieldPath, str, bool]]:
    """Every string of a JSON-like value, keys too: where it sits (``("args", 0, "name")``,
    a dict key as a :class:`~lockstep.model.DictKey`), the string, and whether it is a key."""
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, bytes | bytearray):
        yield path, bytes(value).decode("utf-8", "replace"), False
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = (*path, DictKey(key) if isinstance(key, str) else str(key))
            if isinstance(key, str):
                yield where, key, True
            yield from strings(item, where)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from strings(item, (*path, i))


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


@dataclass(frozen=True)
class SecretPolicy:
    """What the project says about secrets: on or off, what to scrub, what to allow."""

    enabled: bool
    scrubber: Scrubber
    allowed: frozenset[str]

    def findings(self, fields: Mapping[str, Any]) -> list[Finding]:
        """The secrets in a case's fields (``{"stdout": b"...", "args": [...]}``)."""
        if not self.enabled:
            return []
        found: set[Finding] = set()
        items = [item for name, value in fields.items() for item in strings(value, (name,))]
        if not self.scrubber and not may_hold_secret("\n".join(t for _, t, _ in items)):
            return []  # the usual case, decided in one pass over all the case's strings
        for where, text, on_key in items:
            found.update(self._text_findings(where, text, on_key))
            found.update(
                Finding(where, 0, f"value of {leaked}", on_key=on_key)
                for leaked in self.scrubber.leaks(text)
            )
        return sorted(found)

    def _text_findings(self, where: FieldPath, text: str, on_key: bool) -> Iterator[Finding]:
        """What the detector finds in one string, line by line.

        A document of JSON on one line (a rendered corpus output) is read as its members,
        one per line (split before each ``"`` that follows ``,``, ``{`` or ``[``): as a
        single line, every gate would open on it; its members are short lines that mostly
        repeat from case to case (cached), with the ``"key": "value"`` context the
        keyword plugin reads (JSON's escaped quotes and newlines are undone first).
        """
        json_like = text.lstrip()[:1] in ("{", "[")
        one_line_json = json_like and "\n" not in text
        body = text
        if one_line_json:  # members on lines of their own
            body = "\n".join(_MEMBER_START.split(text)).replace("\\n", "\n")
        if json_like:  # the escapes that hide a token's quotes, undone
            body = body.replace('\\"', '"').replace("\\/", "/")
        lines = body.split("\n")
        for lineno, hit in scan_text(body):
            if hit.secret_digest in self.allowed or INLINE_ALLOW in lines[lineno - 1]:
                continue
            line = 1 if one_line_json else lineno
            yield Finding(where, line, hit.detector, hit.secret_digest, on_key)

    def refusal(
        self, oracle: str, case_id: str, fields: Mapping[str, Any], *, label: str = ""
    ) -> Refusal | None:
        """The refusal of the case if its fields hold a secret, else None."""
        found = self.findings(fields)
        if not found:
            return None
        return Refusal(oracle, case_id, RefusalReason.SECRET, label=label, findings=tuple(found))

    def scrub_value(self, value: Any, *, patterns: bool = True) -> Any:
        """A JSON-like value with every configured secret replaced by its placeholder
        (``patterns=False``: only the ``env`` values, which a replay can put back)."""
        if not self.scrubber:
            return value
        scrub = self.scrubber.scrub if patterns else self.scrubber.scrub_values
        return _map_strings(value, scrub)


def policy_for(project: Project) -> SecretPolicy:
    """The project's policy (values of ``env`` secrets are read from the environment now)."""
    config = project.config
    return SecretPolicy(
        enabled=config.lockstep.secrets == "on",
        scrubber=scrubber_for(project),
        allowed=frozenset(s.allow for s in config.secret if s.allow),
    )


def scrubber_for(project: Project) -> Scrubber:
    """The ``[[secret]]`` tables that scrub (env and pattern), in file order."""
    return Scrubber(
        tuple(
            NamedSecret(s.name or s.env, s.env, s.pattern)
            for s in project.config.secret
            if not s.allow
        )
    )


def policy_near(path: Path) -> SecretPolicy:
    """The policy of the project ``path`` is in, for a writer without a project in hand
    (``@record_io`` inside the user's program); without one: scan on, nothing scrubbed."""
    try:
        project = load_project(path.parent)
    except LockstepError:
        return SecretPolicy(enabled=True, scrubber=Scrubber(), allowed=frozenset())
    return policy_for(project)
