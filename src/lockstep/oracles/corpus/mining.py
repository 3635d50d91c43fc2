"""A corpus's render as a subject to call directly (:class:`lockstep.oracles.mining.MiningSubject`).

A corpus input is a fixture file.  The render is called with a path, so every
input is written to a scratch folder first -- under the name it would have in
the fixture folder -- and rendered by the very :class:`~.render.Renderer` record
and replay use (rules applied, exceptions frozen as behaviour).

* ``replay --against`` compares the recorded fixtures exactly as they are on disk
  (any format: their bytes travel to both interpreters), and generated ones;
* generating needs a format to vary: JSON.  A fixture's parsed document is the one
  argument of a :class:`~lockstep.oracles.mining.Call`, so the generic strategies
  draw documents shaped like the recorded ones (keys, value types, strings and
  numbers, the render's literals);
* ``lockstep mine`` writes each kept document as ``mined-<digest12>.json`` into the
  fixture folder -- only when the fixture glob matches that name -- and records them
  with ``--new-only`` through the kind's record path (verification in a fresh
  interpreter, secret scan), from a temp folder: only recorded ones are moved in.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.canon import JSON
from lockstep.config import Project
from lockstep.errors import CanonError, DataError, UsageError
from lockstep.model import Outcome, RecordReport, Status
from lockstep.oracles.corpus.compare import rendering_drift, summary
from lockstep.oracles.corpus.fixtures import fixtures, glob_base
from lockstep.oracles.corpus.render import Rendered, Renderer
from lockstep.oracles.corpus.spec import CorpusSpec
from lockstep.oracles.mining import INPUT_TIMEOUT, Call, Ran, shape_of
from lockstep.store import (
    atomic_write,
    display_path,
    lock_for,
    sha256_hex,
    sweep_temp_folders,
    temp_folder,
)
from lockstep.store.reading import read_file

MINED_PREFIX: Final = "mined-"
MINED_SUFFIX: Final = ".json"
MINED_TEMP: Final = "mined"
"""The purpose in the name of the temp folder mined fixtures are recorded from."""
DESCRIBED: Final = 400
"""Most characters of a fixture shown when naming a differing input."""


class Fixture(msgspec.Struct, frozen=True):
    """An encoded input: the fixture's id (its path under the glob's folder; a generated
    one's file name) and its exact bytes.  The render sees a file of the id's last name."""

    name: str
    data: bytes


class Case(msgspec.Struct, frozen=True):
    """A frozen case for ``replay --against``: the input and the old code's rendering."""

    input: Fixture
    rendered: Rendered


def fixture_bytes(document: Any) -> bytes:
    """A generated document as a fixture file: indented JSON, keys in drawn order, UTF-8."""
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise CanonError(f"the document cannot be written as JSON: {e}") from None
    return (text + "\n").encode("utf-8")


def mined_name(data: bytes) -> str:
    """``mined-<first 12 hex digits of the sha256>.json``: one name per content."""
    return f"{MINED_PREFIX}{hashlib.sha256(data).hexdigest()[:12]}{MINED_SUFFIX}"


def _parsed(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


def _key(document: Any) -> str:
    return json.dumps(document, sort_keys=True, ensure_ascii=False)


@dataclass
class CorpusSubject:
    """The corpus's render in this process, with the kind's rendering, comparison and record."""

    project: Project
    spec: CorpusSpec
    renderer: Renderer
    lock: Path
    """The oracle file (it may not exist in an old checkout: only the recorded inputs need it)."""
    record_new: Callable[[Path], RecordReport]
    """The kind's ``--new-only`` record path (verify, scan for secrets, write the lock), with
    a folder of fixtures recorded before they are moved into the fixture folder."""
    sources: tuple[Path, ...]
    """The render's module and the project modules it uses (its strength scope)."""
    typed: bool = False
    unit: str = "fixture"
    timeout: float = INPUT_TIMEOUT
    _scratch: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)
    _recorded: dict[str, Fixture] | None = field(default=None, repr=False)
    _documents: dict[str, Fixture] | None = field(default=None, repr=False)

    @property
    def target(self) -> Callable[..., Any]:
        return self.renderer.func

    # ------------------------------------------------------------ inputs

    def _fixtures(self) -> dict[str, Fixture]:
        """Fixture id -> its name and bytes, read once."""
        if self._recorded is None:
            if not self.lock.exists():
                raise UsageError(
                    f"{self.spec.name}: not recorded yet; record it first "
                    f"('lockstep record {self.spec.name}'): generating starts from the "
                    "recorded fixtures"
                )
            self._recorded = {
                fid: Fixture(fid, _fixture_bytes(path, self.project.root))
                for fid, path in fixtures(self.project, self.spec).items()
            }
        return self._recorded

    def recorded(self) -> list[JSON]:
        return [msgspec.to_builtins(f) for f in self._fixtures().values()]

    def seeds(self) -> list[Call]:
        calls = []
        for fid, fixture in self._fixtures().items():
            try:
                document = _parsed(fixture.data)
            except (UnicodeDecodeError, ValueError):
                raise UsageError(
                    f"{self.spec.name}: fixture {fid!r} is not JSON; fixture variants are "
                    "generated for JSON fixtures only"
                ) from None
            calls.append(Call((document,), {}))
        return calls

    def _by_document(self) -> dict[str, Fixture]:
        """Recorded fixtures by their parsed document (a draw may give one back)."""
        if self._documents is None:
            self._documents = {}
            for fixture in self._fixtures().values():
                try:
                    self._documents.setdefault(_key(_parsed(fixture.data)), fixture)
                except (UnicodeDecodeError, ValueError):
                    continue
        return self._documents

    def _fixture(self, call: Call) -> Fixture:
        """A generated document as a fixture; one equal to a recorded fixture is that fixture."""
        (document,) = call.args
        data = fixture_bytes(document)
        recorded = self._by_document().get(_key(document)) if self.lock.exists() else None
        return recorded or Fixture(mined_name(data), data)

    def encode_input(self, call: Call) -> JSON:
        return msgspec.to_builtins(self._fixture(call))  # type: ignore[no-any-return]

    def decode_input(self, value: JSON) -> Call:
        fixture = msgspec.convert(value, Fixture)
        try:
            return Call((_parsed(fixture.data),), {})
        except (UnicodeDecodeError, ValueError) as e:
            raise CanonError(f"fixture {fixture.name!r} is not JSON: {e}") from None

    def describe(self, value: JSON) -> str:
        fixture = msgspec.convert(value, Fixture)
        try:
            shown = json.dumps(_parsed(fixture.data), ensure_ascii=False)
        except (UnicodeDecodeError, ValueError):
            shown = fixture.data.decode("utf-8", "replace").strip()
        if len(shown) > DESCRIBED:
            shown = shown[:DESCRIBED] + " …"
        return f"fixture {fixture.name}: {shown}"

    # ------------------------------------------------------------ running

    def _render(self, fixture: Fixture) -> Rendered:
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="lockstep-fixtures-")
        path = Path(self._scratch.name) / Path(fixture.name).name
        path.write_bytes(fixture.data)
        try:
            return self.renderer(fixture.name, path)
        finally:
            path.unlink(missing_ok=True)

    def run(self, call: Call) -> Ran:
        rendered = self._render(self._fixture(call))
        if rendered.raised is not None:
            outcome_class = f"raised {rendered.raised.exc_type}"
        else:
            try:
                outcome_class = "returned " + shape_of(_parsed(rendered.data))
            except (UnicodeDecodeError, ValueError):
                outcome_class = "returned text"
        return Ran(outcome_class, msgspec.json.encode(rendered))

    def freeze(self, value: JSON) -> JSON:
        fixture = msgspec.convert(value, Fixture)
        rendered = self._render(fixture)
        return msgspec.to_builtins(Case(fixture, Rendered(rendered.data, rendered.raised)))  # type: ignore[no-any-return]

    def check(self, case: JSON) -> Outcome:
        frozen = msgspec.convert(case, Case)
        expected = frozen.rendered
        actual = self._render(frozen.input)
        name = frozen.input.name
        if (actual.data, actual.raised) == (expected.data, expected.raised):
            return Outcome(self.spec.name, name, Status.PASS)
        drift = rendering_drift(
            expected.data,
            summary(expected.raised, len(expected.data), sha256_hex(expected.data)),
            expected.raised,
            actual,
            label_expected=f"{name} (old code)",
            label_actual=f"{name} (new code)",
        )
        return Outcome(self.spec.name, name, Status.DRIFT, (drift,))

    # ------------------------------------------------------------ adding

    def _folder(self) -> Path:
        """The fixture folder mined fixtures go to; a usage error when the glob would not
        match a mined fixture's name there."""
        base_rel = glob_base(self.spec.fixtures)
        folder_rel, _, last = self.spec.fixtures.rpartition("/")
        example = mined_name(b"")
        if folder_rel != base_rel or not fnmatch.fnmatchcase(example, last):
            raise UsageError(
                f"{self.spec.name}: the fixture glob {self.spec.fixtures!r} would not match "
                f"mined fixtures such as {base_rel}/{example}; mine writes them there "
                f"(use a glob like '{base_rel}/*.json')"
            )
        return self.project.resolve(base_rel, key=self.project.key(self.spec, "fixtures"))

    def add(self, calls: Sequence[Call]) -> RecordReport:
        """Record the new documents as fixture files with ``--new-only``; only recorded ones
        land in the fixture folder.

        Under the oracle's lock, the documents are written to a private temp folder inside
        the fixture folder, recorded from there (each by the name it will have), and moved
        in only once the lock holds them.  A run killed on the way leaves a temp folder the
        next ``mine`` removes, never an unrecorded ``mined-*.json``.
        """
        folder = self._folder()
        known = {f.data for f in self._fixtures().values()}
        with lock_for(self.lock):
            sweep_temp_folders(folder, MINED_TEMP)
            with temp_folder(folder, MINED_TEMP) as pending:
                written: dict[str, Path] = {}
                for call in calls:
                    fixture = self._fixture(call)
                    path = folder / fixture.name
                    if fixture.data in known or path.exists() or fixture.name in written:
                        continue
                    atomic_write(pending / fixture.name, fixture.data)
                    written[fixture.name] = path
                report = self.record_new(pending)
                added = set(report.added)
                for name, path in written.items():
                    if name in added:
                        os.replace(pending / name, path)
        others = sorted(added - set(written))
        if others:
            report.notes.append(
                "also added fixtures that were on disk but not in the lock "
                f"(record --new-only adds every new fixture): {', '.join(others)}"
            )
        for name, path in written.items():
            if name not in added:
                report.notes.append(
                    f"{display_path(path, self.project.root)}: not written (not recorded)"
                )
        return report


def _fixture_bytes(path: Path, root: Path) -> bytes:
    """A fixture's bytes (a link is the project's own business; a pipe or a device, such
    as a link to ``/dev/zero``, is one line naming it)."""
    try:
        return read_file(path, through_links=True)
    except OSError as e:
        raise DataError(f"{display_path(path, root)}: cannot read: {e.strerror}") from None
