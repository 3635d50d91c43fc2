"""The one check every oracle kind makes before it writes a case: scrub, then scan.

:func:`policy_for` reads the project's ``[[secret]]`` tables and ``[lockstep] secrets``
once.  A kind hands :meth:`SecretPolicy.refusal` the fields of one case as they are
about to be written (already scrubbed); any string in them that detect-secrets flags,
or in which a scrubbed value still shows encoded, makes the case refused: the message
names the case, the field, the line and the detector, never the value (only its sha256,
which is what an allow entry takes -- detect-secrets' own baselines keep a hash too).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.config import Project, load_project
from lockstep.environ_table import raw_environ
from lockstep.errors import LockstepError
from lockstep.model import (
    DictKey,
    Drift,
    Outcome,
    PathSegment,
    Refusal,
    RefusalReason,
    SecretFinding,
    Status,
)
from lockstep.secrets.detect import candidate_lines, detector, may_hold_secret, scan_text
from lockstep.secrets.scrub import NamedSecret, Scrubber

_MEMBER_START: Final = re.compile(r'(?<=[,{\[])(?=")')
"""Where a member of a one-line JSON document starts."""
_TOKEN_BEFORE: Final = r"[A-Za-z0-9+/_\-]*"
_TOKEN_AFTER: Final = r"[A-Za-z0-9+/=_\-.]*"
"""Token characters around a found secret, masked with it: a plugin may report a part of
a token (a JWT's lazy match stops before its signature)."""
INLINE_ALLOW: Final = "pragma: allowlist secret"
"""detect-secrets' own inline marker: a line carrying it is not reported."""


Finding = SecretFinding
"""One secret found in one field of one case (:class:`lockstep.model.SecretFinding`)."""


FieldPath = tuple[PathSegment, ...]


_BYTES_TAGS: Final = ("$bytes", "$bytearray")
"""The canonical tags of a bytes value (base64 payload): scanned as the text they decode to."""

Item = tuple[FieldPath, str, bool, str]
"""Where a string sits, the string, whether it is a dict key, and the key it is written
under ("" for none; see :func:`_as_written`)."""


def _scanned_body(text: str) -> str:
    """A string as the detector reads it: a document of JSON on one line split into its
    members, one a line, and its escaped quotes and slashes undone (see
    :meth:`SecretPolicy._text_hits`)."""
    json_like = text.lstrip()[:1] in ("{", "[")
    body = text
    if json_like and "\n" not in text:  # members on lines of their own
        body = "\n".join(_MEMBER_START.split(text)).replace("\\n", "\n")
    if json_like:  # the escapes that hide a token's quotes, undone
        body = body.replace('\\"', '"').replace("\\/", "/")
    return body


def _as_written(key: str, text: str) -> str:
    """The string as a JSON line writes it, with the key it sits under (``"password":
    "hunter2"``): the context detect-secrets' keyword and entropy plugins read."""
    quoted = json.dumps(text, ensure_ascii=False)
    return f"{json.dumps(key, ensure_ascii=False)}: {quoted}" if key else quoted


def _decoded_bytes(payload: Any) -> str | None:
    """The text a ``$bytes`` payload holds (undecodable bytes replaced), None if no base64."""
    if not isinstance(payload, str):
        return None
    try:
        raw = base64.b64decode(payload, validate=True)
    except ValueError:
        return None
    return raw.decode("utf-8", "replace")


def strings(value: Any, path: FieldPath, key: str = "") -> Iterator[Item]:
    """Every string of a JSON-like value, keys too: where it sits (``("args", 0, "name")``,
    a dict key as a :class:`~lockstep.model.DictKey`), the string, whether it is a key, and
    the key it is written under (``key``: the nearest dict key or field name).

    A canonical tag (``{"$tuple": [...]}``) is transparent: its payload sits at the
    tagged value's path; ``$bytes``/``$bytearray`` are scanned as the text they decode to,
    since that, not its base64, is what a token or password in them reads as.

    Walked with a stack of its own, depth first, in the order the value is written: a
    parsed document's objects nest dozens deep, and nested generators would hand each
    string up through every level (a row of thousands of strings cost seconds)."""
    return _walk(value, path, key, None)


def _walk(value: Any, path: FieldPath, key: str, keep: int | None) -> Iterator[Item]:
    """:func:`strings`, each path cut to its first ``keep`` steps (all with None): what
    names a string's field and argument, without building the rest for every string."""
    if not key and len(path) == 1 and isinstance(path[0], str):
        key = path[0]  # a top-level field: ``"stdout": "..."`` as written
    stack: list[Iterator[_Step]] = [iter(((value, path, key, False),))]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        value, path, key, on_key = step
        if on_key or isinstance(value, str):
            yield path, value, on_key, key
        elif isinstance(value, bytes | bytearray):
            yield path, bytes(value).decode("utf-8", "replace"), False, key
        elif isinstance(value, Mapping):
            if len(value) == 1:
                ((tag, payload),) = value.items()
                if isinstance(tag, str) and tag.startswith("$"):
                    if tag in _BYTES_TAGS and (decoded := _decoded_bytes(payload)) is not None:
                        yield path, decoded, False, key
                    else:
                        stack.append(iter(((payload, path, key, False),)))
                    continue
            stack.append(_members(value, path, key, keep))
        elif isinstance(value, list | tuple):
            stack.append(_elements(value, path, key, keep))


_Step = tuple[Any, FieldPath, str, bool]
"""One step of :func:`strings`' walk: a value, its path, the key it is written under, and
whether it is itself a dict key (yielded as is, with no key of its own)."""


def _elements(
    value: list[Any] | tuple[Any, ...], path: FieldPath, key: str, keep: int | None
) -> Iterator[_Step]:
    """A list's steps: each item, at its index."""
    if keep is not None and len(path) >= keep:
        for item in value:
            yield item, path, key, False
        return
    for i, item in enumerate(value):
        yield item, (*path, i), key, False


def _members(
    value: Mapping[Any, Any], path: FieldPath, key: str, keep: int | None
) -> Iterator[_Step]:
    """A mapping's steps: each string key, then its value (under that key)."""
    cut = keep is not None and len(path) >= keep
    for name, item in value.items():
        where = path if cut else (*path, DictKey(name) if isinstance(name, str) else str(name))
        if isinstance(name, str):
            yield name, where, "", True
        yield item, where, name if isinstance(name, str) else key, False


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def _items(
    fields: Mapping[str, Any], names: Mapping[FieldPath, str] | None, *, keep: int | None
) -> Iterator[Item]:
    """Every string of a case's fields (:func:`_walk`, paths cut to ``keep`` steps), a
    string not under a dict key of its own written under the name ``names`` gives its
    argument (``("args", 1)`` → ``password``)."""
    for field_name, value in fields.items():
        for where, text, on_key, key in _walk(value, (field_name,), "", keep):
            if names and key == where[0]:
                key = names.get(where[:2], key)
            yield where, text, on_key, key


@dataclass(frozen=True)
class SecretPolicy:
    """What the project says about secrets: on or off, what to scrub, what to allow."""

    enabled: bool
    scrubber: Scrubber
    allowed: frozenset[str]

    def findings(
        self, fields: Mapping[str, Any], names: Mapping[FieldPath, str] | None = None
    ) -> list[Finding]:
        """The secrets in a case's fields (``{"stdout": b"...", "args": [...]}``).

        ``names``: the name a value is known by where its field gives none, by its path
        (``("args", 1)`` → ``password``, from the target's signature): a string in it (not
        under a dict key of its own) is scanned as written under that name."""
        if not self.enabled:
            return []
        # First the case's distinct strings, without where they sit: a parsed document
        # repeats its field names and whitespace thousands of times, and what the
        # detector finds in a string depends on the string (and the key it is written
        # under) alone.  Only when something is found are the paths walked for.
        distinct = dict.fromkeys(
            (text, on_key, key) for _, text, on_key, key in _items(fields, names, keep=2)
        )
        head = "\n".join(names.values()) if names else ""
        if not self.scrubber and not may_hold_secret(
            "\n".join([head, *dict.fromkeys(text for text, _, _ in distinct)])
        ):
            return []  # the usual case, decided in one pass over all the case's strings
        in_text: dict[str, list[tuple[int, str, str]]] = {}
        as_written: dict[tuple[str, str], list[tuple[str, str]]] = {}
        leaked: dict[str, list[str]] = {}
        for text, _, key in distinct:
            if text not in in_text:
                in_text[text] = list(self._text_hits(text))
                leaked[text] = self.scrubber.leaks(text)
            if "\n" not in text and "\r" not in text and (key, text) not in as_written:
                as_written[key, text] = list(self._written_hits(_as_written(key, text)))
        if not any(in_text.values()) and not any(leaked.values()) and not any(as_written.values()):
            return []
        found: set[Finding] = set()
        for where, text, on_key, key in _items(fields, names, keep=None):
            for line, det, digest in in_text[text]:
                found.add(Finding(where, line, det, digest, on_key))
            for det, digest in as_written.get((key, text), ()):
                found.add(Finding(where, 1, det, digest, on_key))
            for name in leaked[text]:
                found.add(Finding(where, 0, f"value of {name}", on_key=on_key))
        return sorted(found)

    def secret_values(
        self, fields: Mapping[str, Any], names: Mapping[FieldPath, str] | None = None
    ) -> dict[str, tuple[str, str]]:
        """The secrets themselves the detector finds in a case's fields, each with its
        detector and digest, as :meth:`findings` reads them: held in memory, never
        written, so that a row holding one of them in another form (``"user:pass"`` where
        the detector saw ``https://user:pass@host``) is refused too
        (:func:`lockstep.oracles.ledger.secret_rows.without_secrets`)."""
        if not self.enabled:
            return {}
        found: dict[str, tuple[str, str]] = {}
        texts = dict.fromkeys((text, key) for _, text, _, key in _items(fields, names, keep=2))
        for text, key in texts:
            lines = _scanned_body(text).split("\n")
            if "\n" not in text and "\r" not in text:
                lines.append(_as_written(key, text))
            for line in lines:
                if INLINE_ALLOW in line or not may_hold_secret(line):
                    continue
                for kind, value in detector().secrets_in(line):
                    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
                    if value and digest not in self.allowed:
                        found.setdefault(value, (kind, digest))
        return found

    def _text_hits(self, text: str) -> Iterator[tuple[int, str, str]]:
        """What the detector finds in one string, line by line: the line (1 for a
        document of JSON on one line), the detector and the secret's digest.

        A document of JSON on one line (a rendered corpus output) is read as its members,
        one per line (split before each ``"`` that follows ``,``, ``{`` or ``[``): as a
        single line, every gate would open on it; its members are short lines that mostly
        repeat from case to case (cached), with the ``"key": "value"`` context the
        keyword plugin reads (JSON's escaped quotes and newlines are undone first).
        """
        one_line_json = text.lstrip()[:1] in ("{", "[") and "\n" not in text
        body = _scanned_body(text)
        lines = body.split("\n")
        for lineno, hit in scan_text(body):
            if hit.secret_digest in self.allowed or INLINE_ALLOW in lines[lineno - 1]:
                continue
            yield 1 if one_line_json else lineno, hit.detector, hit.secret_digest

    def _written_hits(self, written: str) -> Iterator[tuple[str, str]]:
        """What the detector finds in a one-line string as its line is written, with its
        key and quotes (``"password": "hunter2"`` is a keyword secret, ``hunter2`` alone
        is not; a quoted base64 run is what the entropy plugin measures): the detector
        and the secret's digest."""
        if INLINE_ALLOW in written:
            return
        for hit in detector().scan_line(written) if may_hold_secret(written) else ():
            if hit.secret_digest not in self.allowed:
                yield hit.detector, hit.secret_digest

    def refusal(
        self,
        oracle: str,
        case_id: str,
        fields: Mapping[str, Any],
        *,
        label: str = "",
        names: Mapping[FieldPath, str] | None = None,
    ) -> Refusal | None:
        """The refusal of the case if its fields hold a secret, else None (``names``: see
        :meth:`findings`)."""
        found = self.findings(fields, names)
        if not found:
            return None
        hidden = any(f.path[:1] == ("id",) for f in found) or any(
            self.holds_secret(name) for name in {case_id, label} if name
        )
        return Refusal(
            oracle,
            case_id,
            RefusalReason.SECRET,
            label=label,
            findings=tuple(found),
            case_hidden=hidden,
        )

    def holds_secret(self, text: str) -> bool:
        """Whether a name (a case id, a fixture file name) holds a known value in any
        spelling or something the detector flags, as itself or written quoted."""
        if self.scrubber and (self.scrubber.mask(text) != text or self.scrubber.leaks(text)):
            return True
        return any(
            detector().scan_line(line) for line in (text, json.dumps(text)) if may_hold_secret(line)
        )

    def mask(self, text: str) -> str:
        """``text`` as a person may see it (terminal, pending file, report): every known
        secret value in every spelling replaced by its placeholder, and every secret the
        detector finds by ``<secret: DETECTOR>``.  Off (``secrets = "off"``): only the
        known values."""
        text = self.scrubber.mask(text) if self.scrubber else text
        if not self.enabled or not text or not may_hold_secret(text):
            return text
        lines = text.split("\n")
        for index in candidate_lines(text, lines):
            line = lines[index]
            spans = detector().spans_in(line)
            for kind, value, shown in sorted(spans, key=lambda span: -len(span[2])):
                digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
                if value and digest not in self.allowed:
                    around = _TOKEN_BEFORE + re.escape(shown) + _TOKEN_AFTER
                    line = re.sub(around, f"<secret: {kind}>", line)
            lines[index] = line
        return "\n".join(lines)

    def masked(self, outcome: Outcome) -> Outcome:
        """An outcome whose drifts and note are :meth:`mask` ed, and whose case id is shown
        by digest when it holds a secret: what replay hands to every reporter and to the
        pending file."""
        if outcome.status is Status.DRIFT:
            recorded = (
                text
                for d in outcome.drifts
                for text in (d.expected, d.diff, d.texts[0] if d.texts else "")
            )
            missing = next((m for text in recorded if (m := self.scrubber.missing(text))), None)
            if missing is not None:
                # the record holds a placeholder whose value this run could not see: the
                # drift compares the placeholder against whatever came instead (the raw
                # value read from elsewhere, or nothing) -- say why, show neither
                return msgspec.structs.replace(
                    outcome, status=Status.ERROR, drifts=(), note=str(missing)
                )
        if outcome.status is not Status.PASS and self.holds_secret(outcome.case_id):
            # a new fixture or case named after a secret (a passing case's id went
            # through record's scan): named by digest, like a refusal does
            digest = hashlib.sha256(outcome.case_id.encode("utf-8", "surrogatepass")).hexdigest()
            outcome = msgspec.structs.replace(outcome, case_id=f"<case {digest[:8]}>")
        if not outcome.drifts and not outcome.note:
            return outcome
        drifts = tuple(
            Drift(
                d.aspect,
                self.mask(d.expected),
                self.mask(d.actual),
                self.mask(d.diff),
                None if d.texts is None else (self.mask(d.texts[0]), self.mask(d.texts[1])),
            )
            for d in outcome.drifts
        )
        return msgspec.structs.replace(outcome, drifts=drifts, note=self.mask(outcome.note))

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
    """The ``[[secret]]`` tables that scrub (env and pattern), in file order, and the
    environment variables whose names look secret (:func:`ambient_secrets`).

    The same tables under the same environment give the same scrubber: it is kept
    (:data:`_SCRUBBERS`) and given again while the environment's table is unchanged, as
    every candidate a recording verifies asks for it twice, in a fork of a server that
    built it already."""
    tables, patterns = project.config.secret, project.config.lockstep.secret_env
    raw = raw_environ()
    key = (id(tables), id(patterns))
    kept = _SCRUBBERS.get(key)
    if kept is not None and kept[0] is tables and kept[1] is patterns and kept[2] == raw:
        return kept[3]
    environ = dict(os.environ)
    scrubber = Scrubber(
        tuple(NamedSecret(s.name or s.env, s.env, s.pattern) for s in tables if not s.allow),
        environ,
        ambient_secrets(patterns, environ),
        tuple(patterns),
    )
    if raw is not None:
        if len(_SCRUBBERS) >= _SCRUBBERS_KEPT:
            _SCRUBBERS.clear()
        _SCRUBBERS[key] = (tables, patterns, raw, scrubber)
    return scrubber


_SCRUBBERS: Final[dict[tuple[int, int], tuple[object, object, object, Scrubber]]] = {}
"""By the identity of a configuration's ``[[secret]]`` tables and ``secret_env``
patterns (both kept, so neither identity is reused while here): those objects, the
environment's table then, and the scrubber built."""
_SCRUBBERS_KEPT: Final = 8


def ambient_scrubber(
    patterns: Sequence[str], configured: frozenset[str] = frozenset()
) -> Scrubber | None:
    """The scrubbing of the variables of today's environment whose names match
    ``patterns`` and are not ``configured`` as ``[[secret]] env``: None when none is set
    with a value long enough to scrub (the usual case: one look at the environment)."""
    environ = dict(os.environ)
    found = tuple(s for s in ambient_secrets(patterns, environ) if s.env not in configured)
    scrubber = Scrubber((), environ, found)
    return scrubber if scrubber else None


def ambient_secrets(patterns: Sequence[str], environ: Mapping[str, str]) -> tuple[NamedSecret, ...]:
    """The variables of ``environ`` whose names match one of ``patterns`` (``fnmatch``,
    case-insensitive), each a secret named after its variable."""
    if not patterns:
        return ()
    matches = env_name_matcher(tuple(patterns))
    return tuple(
        NamedSecret(name, name)
        for name in sorted(environ)
        if environ[name] and matches(name.upper()) is not None
    )


@lru_cache(maxsize=16)
def env_name_matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """One compiled match for ``fnmatch.fnmatchcase(NAME, p.upper())`` over all
    ``patterns`` (each process reads the environment for every configuration it loads:
    one regular expression instead of a ``fnmatch`` call per variable and pattern)."""
    return re.compile("|".join(fnmatch.translate(p.upper()) for p in patterns)).match


def display_mask(project: Project | None) -> Callable[[str], str]:
    """:meth:`SecretPolicy.mask` for text shown to a person outside a replay's outcomes (a
    record's notes, a refusal's detail, an error): the project's policy, or without one
    (the configuration did not load) the detector and the default ``secret_env``."""
    if project is not None:
        return policy_for(project).mask
    from lockstep.config import SECRET_ENV_NAMES

    environ = dict(os.environ)
    scrubber = Scrubber((), environ, ambient_secrets(SECRET_ENV_NAMES, environ))
    return SecretPolicy(enabled=True, scrubber=scrubber, allowed=frozenset()).mask


def policy_near(path: Path) -> SecretPolicy:
    """The policy of the project ``path`` is in, for a writer without a project in hand
    (``@record_io`` inside the user's program); without one: scan on, nothing scrubbed."""
    try:
        project = load_project(path.parent)
    except LockstepError:
        return SecretPolicy(enabled=True, scrubber=Scrubber(), allowed=frozenset())
    return policy_for(project)
