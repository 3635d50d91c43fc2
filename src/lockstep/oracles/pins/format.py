"""The pins file: ``<dir>/<name>.pins.jsonl``.

Line 1 is a header; every further line is one pin, sorted by id::

    {"env_base": {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "TZ": "UTC"},
     "env_inherit": ["PATH"], "format": "lockstep-pins",
     "rules": [{"builtin": true, "name": "uuid", "pattern": "...", "replace": "<UUID>", ...}],
     "version": 1}
    {"argv": ["python", "export.py", "--empty"], "cwd_rel": ".", "env": {"CURRENCY": "EUR"},
     "exit_code": 0, "id": "empty", "stderr": "", "stdin": "", "stdout": "id,total\\n"}

* The header records the *environment base* (fixed keys, and the keys whose
  value is inherited, only ``PATH``) and the *rules*, each in full, so a replay
  runs in exactly the environment and normalizes with exactly the rules the
  freeze used, and a change of either is a visible line in review.
* A pin has exactly the fields ``id, argv, env, stdin, exit_code, stdout,
  stderr, cwd_rel`` (and ``warm``, below); a missing or unknown field is an
  error naming ``FILE:LINE``.
  ``argv`` is the whole command as run (the oracle's ``command`` then the
  case's arguments); ``env`` holds only the case's keys (the base is in the
  header).
* ``stdout`` and ``stderr`` are stored *after* the rules.  Text that is valid
  UTF-8 is a JSON string; anything else is kept losslessly as the tagged form
  ``{"$bytes": "<base64>"}`` (the same tag the canonical codec uses for bytes).
  ``stdin`` uses the same form.
* In an oracle with ``warm = true``, each pin also has ``warm``: ``true`` where
  record found the case's warm run identical to its cold runs, ``false`` where
  it differed or the case must run cold.  Replay runs warm only the ``true`` ones.
  The header then has ``warm``: the modules the warm server preloaded
  (``imports``: ``warm_imports``, or what record inferred from the cases — the
  reviewable list), ``inferred``, and the ``digest`` of the Python and of every
  file that preload loaded.  Replay forks warm only from a preload with the same
  digest; otherwise every case runs cold (see :mod:`lockstep.oracles.pins.warm`).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import msgspec

from lockstep.errors import DataError, UsageError
from lockstep.pyentry import MODULE_NAME
from lockstep.rules import RuleRecord, RuleSet, rules_from_records
from lockstep.store import display_path, iter_lines
from lockstep.store.reading import open_file

FORMAT: Final = "lockstep-pins"
VERSION: Final = 1


class TaggedBytes(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Bytes that are not UTF-8 text, as ``{"$bytes": "<base64>"}``."""

    data: str = msgspec.field(name="$bytes")


Stream = str | TaggedBytes


def to_stream(data: bytes) -> Stream:
    """Text stays readable text; anything else is tagged, losslessly."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return TaggedBytes(base64.b64encode(data).decode("ascii"))


def from_stream(value: Stream) -> bytes:
    if isinstance(value, TaggedBytes):
        return base64.b64decode(value.data, validate=True)
    return value.encode("utf-8")


class WarmRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What the warm servers of a ``warm = true`` oracle preloaded when record proved its pins."""

    imports: list[str]
    """The modules imported before forking: ``warm_imports``, or inferred from the cases."""
    inferred: bool
    """True when record inferred ``imports`` from the modules the cases imported."""
    digest: str
    """sha256 of the server's Python version and of every file the preload loaded; replay
    runs the warm pins cold when the preload it would fork from has another digest."""


class Header(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True
):
    """Line 1 of a pins file: the environment base and the rules of the freeze."""

    format: Literal["lockstep-pins"]
    version: int
    env_base: dict[str, str]
    env_inherit: list[str]
    rules: list[RuleRecord]
    warm: WarmRecord | None = None
    """Only in a ``warm = true`` oracle: what the per-pin ``warm`` verdicts were proven with."""


class Pin(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True
):
    """One frozen run; exactly the documented fields."""

    id: str
    argv: list[str]
    env: dict[str, str]
    stdin: Stream
    exit_code: int
    stdout: Stream
    stderr: Stream
    cwd_rel: str
    warm: bool | None = None
    """Only in a ``warm = true`` oracle: whether record found this case's warm run identical
    to its cold runs (``true``: replay may run it warm; ``false``: replay runs it cold)."""


_encoder = msgspec.json.Encoder(order="sorted")
_header_decoder = msgspec.json.Decoder(Header)
_pin_decoder = msgspec.json.Decoder(Pin)


def _reason(err: msgspec.MsgspecError) -> str:
    text = str(err)
    if isinstance(err, msgspec.ValidationError):
        return text.replace("Object contains unknown field", "unknown field").replace(
            "Object missing required field", "missing field"
        )
    return f"not valid JSON ({text})"


def _identity(fd: int) -> tuple[int, int, int, int]:
    info = os.fstat(fd)
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@dataclass(frozen=True)
class PinIndex:
    """Where each pin of one pins file is, and which file that was."""

    places: dict[str, tuple[int, int]]
    """Each pin id's ``(line number, byte offset)``."""
    identity: tuple[int, int, int, int]
    """The indexed file's device, inode, size and modification time (ns)."""

    def __contains__(self, pin_id: object) -> bool:
        return pin_id in self.places


@dataclass(frozen=True)
class PinsFile:
    """A validated header and the path its pins stream from."""

    path: Path
    header: Header
    shown: str

    def rules(self) -> RuleSet:
        return rules_from_records(self.header.rules, where=f"{self.shown}:1")

    def index(self) -> PinIndex:
        """Each pin's ``(line number, byte offset)``, after validating the whole file once,
        with the identity of the file that was read (see :meth:`pin_at`)."""
        found: dict[str, tuple[int, int]] = {}
        with open_file(self.path) as fh:
            offset = 0
            for lineno, raw in enumerate(fh, start=1):
                line = raw.strip()
                if lineno > 1 and line:
                    pin_id = self._decode(lineno, line).id
                    if pin_id in found:
                        raise DataError(f"{self.shown}:{lineno}: duplicate pin id {pin_id!r}")
                    found[pin_id] = (lineno, offset)
                offset += len(raw)
            identity = _identity(fh.fileno())
        return PinIndex(found, identity)

    def pin_at(self, index: PinIndex, pin_id: str) -> Pin:
        """The pin ``pin_id`` read at its indexed offset.

        Refused (:class:`~lockstep.errors.DataError`) when the file is no longer the one
        indexed (another device, inode, size or modification time: a record or accept
        replaced it meanwhile) or the line there is another pin's: an offset into another
        file must never hand one case another's verdict.
        """
        lineno, offset = index.places[pin_id]
        with open_file(self.path) as fh:
            if _identity(fh.fileno()) == index.identity:
                fh.seek(offset)
                pin = self._decode(lineno, fh.readline().strip())
                if pin.id == pin_id:
                    return pin
        raise DataError(
            f"{self.shown}: changed while this run was reading it (pin {pin_id!r} is not "
            "where it was indexed); run again"
        )

    def _decode(self, lineno: int, line: bytes) -> Pin:
        try:
            pin = _pin_decoder.decode(line)
        except msgspec.MsgspecError as e:
            raise DataError(f"{self.shown}:{lineno}: {_reason(e)}") from None
        for name in ("stdin", "stdout", "stderr"):
            value = getattr(pin, name)
            if isinstance(value, TaggedBytes):
                try:
                    base64.b64decode(value.data, validate=True)
                except (binascii.Error, ValueError):
                    raise DataError(
                        f"{self.shown}:{lineno}: {name}: $bytes is not valid base64"
                    ) from None
        return pin

    def pins(self) -> Iterator[Pin]:
        """Stream the pins (line 2 on), validating each; memory stays flat."""
        seen: set[str] = set()
        for lineno, line in iter_lines(self.path):
            if lineno == 1:
                continue
            pin = self._decode(lineno, line)
            if pin.id in seen:
                raise DataError(f"{self.shown}:{lineno}: duplicate pin id {pin.id!r}")
            seen.add(pin.id)
            yield pin


def open_pins(path: Path, root: Path | None = None, *, name: str = "") -> PinsFile:
    """Read and check the header of a pins file (the pins themselves stream later)."""
    shown = display_path(path, root)
    if name and not path.exists():
        raise UsageError(f"{shown}: not recorded yet; run 'lockstep record {name}' first")
    for lineno, line in iter_lines(path):
        try:
            header = _header_decoder.decode(line)
        except msgspec.MsgspecError as e:
            raise DataError(
                f"{shown}:{lineno}: not a pins header ({_reason(e)}); the first line of a "
                f"pins file must be its header"
            ) from None
        if header.warm is not None:
            bad = [m for m in header.warm.imports if not MODULE_NAME.match(m)]
            if bad:
                raise DataError(f"{shown}:{lineno}: warm.imports: {bad[0]!r} is not a module name")
        if header.version != VERSION:
            raise DataError(
                f"{shown}:{lineno}: pins file version {header.version} is not supported "
                f"(this lockstep reads version {VERSION})"
            )
        return PinsFile(path, header, shown)
    raise DataError(f"{shown}: empty pins file (no header line)")


def encode(obj: Header | Pin) -> bytes:
    """One line of a pins file: sorted keys, compact."""
    return _encoder.encode(obj)
