"""A sure "nothing to find here" for many cases at once, before the per-field scan.

:meth:`SecretPolicy.findings <lockstep.secrets.policy.SecretPolicy.findings>` walks every
string of a case in Python (with its path, its key, its decoded bytes) before it can tell
that no detector gate opens: about 13 µs a ledger row, more than recording the row.  Most
rows hold nothing a gate opens for (``"item-83797: 64 units"``), so :class:`Screen` first
looks at all of a batch's rows together, as text made by C code: each row's field values
encoded as one JSON line (msgspec), the text of its ``$bytes`` values beside it, searched
once for every scrubbed value's spellings and every gate's literals.  A batch in which
nothing is found is kept as it is; otherwise it is halved until each row that may hold
something is alone, and only those rows take the full scan.

Why a quiet row has no finding.  Every finding comes from a line in which some gate of
:func:`~lockstep.secrets.detect._open_gates` opens, or from a scrubbed value's spelling
in a string (:meth:`~lockstep.secrets.scrub.Scrubber.leaks`).  The lines the scan reads
are the lines of each string (of a JSON-like one after ``\\"`` and ``\\/`` are undone),
and each one-line string as written under its key (``"password": "..."``, JSON-escaped).
Each gate needs a literal, a run of token characters, or (basic auth) ``://`` and ``@``
anywhere in its line; none of these holds a backslash or a control character.  The
screened text is the JSON encoding with every backslash taken out: a string's characters
appear in it unchanged, except a backslash (gone) and a control character (letters, as
its escape): so every stretch of a read line that holds no backslash or control
character appears in it, and with it every literal and run a gate could open on.  The
keys a string is written under are in it too (a dict key), or are the field names,
checked once when the screen is built.  A value's spelling appears in a string only if
its JSON encoding appears in the string's, and then without backslashes in the screened
text as well.  Outside ASCII the screened text is decoded and searched by
:func:`~lockstep.secrets.detect.may_hold_secret` itself (case folding included).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from lockstep.secrets.detect import may_hold_secret, may_hold_secret_ascii

if TYPE_CHECKING:
    from lockstep.secrets.policy import SecretPolicy

_ENCODE: Final = msgspec.json.Encoder().encode
_BYTES_VALUE: Final = re.compile(rb'(\{"\$(?:bytes|bytearray)":")([A-Za-z0-9+/=]*)"\}')
"""A ``$bytes`` or ``$bytearray`` value as msgspec writes it: a dict of that one tag (with
another key, or a payload that is not base64, the scan reads the payload as a string)."""


class Screen:
    """The quick pass of a :class:`~lockstep.secrets.policy.SecretPolicy` over cases made
    of JSON-like values (``$bytes`` tagged, as a ledger row holds them; a raw ``bytes``
    would be seen as its base64 only), whose fields are written under ``fields``.

    Off (every case goes to the full scan) when a secret is a ``pattern`` (a regex cannot
    be searched for in the encoding) or a field name itself opens a gate."""

    def __init__(self, policy: SecretPolicy, fields: Sequence[str]) -> None:
        scrubber = policy.scrubber
        self._detect = policy.enabled
        usable = not scrubber.has_patterns and not any(may_hold_secret(f) for f in fields)
        spellings: list[bytes] = []
        for form in scrubber.spellings:
            try:
                spellings.append(_ENCODE(form)[1:-1].replace(b"\\", b""))
            except (TypeError, ValueError, msgspec.EncodeError):
                usable = False  # a value no JSON line can hold: the full scan decides
        self._spellings = tuple(spellings)
        self._usable = usable

    def quiet(self, cases: Sequence[Sequence[Any]]) -> list[bool]:
        """For each case (its field values, in the order of ``fields``; an absent one left
        out), whether it surely holds nothing to scrub and nothing the scan would find."""
        if not self._usable or not cases:
            return [False] * len(cases)
        whole = _screened(cases)  # every case in one text: the usual answer in one look
        if whole is not None and self._quiet_text(whole):
            return [True] * len(cases)
        verdicts = [False] * len(cases)
        if len(cases) > 1:
            texts = [_screened(case) for case in cases]
            middle = len(cases) // 2
            self._settle(texts, 0, middle, verdicts)
            self._settle(texts, middle, len(cases), verdicts)
        return verdicts

    def quiet_json(self, lines: Sequence[bytes]) -> bool:
        """Whether all of ``lines`` surely hold nothing to scrub or find: JSON encodings
        of cases, one a line (other members beside the fields, and text between the
        documents, are read too: they may only make the answer no)."""
        return self._usable and self._quiet_text(_prepared(b"\n".join(lines)))

    def _settle(self, texts: list[bytes | None], lo: int, hi: int, verdicts: list[bool]) -> None:
        """Mark ``texts[lo:hi]`` quiet if their text together is, else each half alike."""
        part = texts[lo:hi]
        if None not in part and self._quiet_text(b"\n".join(cast("list[bytes]", part))):
            verdicts[lo:hi] = [True] * (hi - lo)
        elif hi - lo > 1:
            middle = (lo + hi) // 2
            self._settle(texts, lo, middle, verdicts)
            self._settle(texts, middle, hi, verdicts)

    def _quiet_text(self, text: bytes) -> bool:
        if any(spelling in text for spelling in self._spellings):
            return False
        if not self._detect:
            return True
        if text.isascii():
            return not may_hold_secret_ascii(text)
        return not may_hold_secret(text.decode("utf-8", "replace"))


def _screened(values: Sequence[Any]) -> bytes | None:
    """The text the screen searches for ``values`` (:func:`_prepared` of their JSON line);
    None when they do not encode (the full scan decides)."""
    try:
        return _prepared(_ENCODE(values))
    except (TypeError, ValueError, msgspec.EncodeError):
        return None


def _prepared(text: bytes) -> bytes:
    """JSON text as the screen searches it: each ``$bytes`` value that decodes replaced by
    the text it decodes to (JSON-encoded too, after the rest: the scan reads that text,
    not its base64), every backslash taken out."""
    if b'"$byte' in text:
        text = _with_bytes_decoded(text)
    return text.replace(b"\\", b"") if b"\\" in text else text


def _with_bytes_decoded(text: bytes) -> bytes:
    """``text`` without its ``$bytes`` values, the text they decode to after it; where a
    payload is not strict base64, each value is looked at alone (:func:`_decoded`)."""
    parts = _BYTES_VALUE.split(text)  # text, tag, payload, text, tag, payload, ..., text
    decoded: list[str] = []
    try:  # strict base64 is base64 to the scan too, with the same bytes
        for payload in parts[2::3]:
            decoded.append(
                binascii.a2b_base64(payload, strict_mode=True).decode("utf-8", "replace")
            )
    except binascii.Error:
        decoded.clear()
        text = _BYTES_VALUE.sub(lambda match: _decoded(match, decoded), text)
    else:  # the usual case: every value dropped (no gate spans the JSON punctuation around)
        text = b"".join(parts[::3])
    return text + b"\n" + _ENCODE(decoded)


def _decoded(match: re.Match[bytes], decoded: list[str]) -> bytes:
    """The value without its payload, the payload's text added to ``decoded``; the value as
    it is when the payload is not base64 to the scan (:func:`base64.b64decode`, validated)."""
    try:
        raw = base64.b64decode(match.group(2), validate=True)
    except ValueError:
        return match.group(0)
    decoded.append(raw.decode("utf-8", "replace"))
    return match.group(1) + b'"}'
