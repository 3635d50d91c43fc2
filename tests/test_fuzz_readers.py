"""Every reader of a file lockstep reads, fuzzed: only a one-line LockstepError ever escapes.

For each reader -- ``lockstep.toml``, a pins cases file, a pins file, a ledger (its
header and body, and the replay path: each row parsed and its values thawed),
a corpus lock, a tape document, and the canonical codec -- hypothesis feeds

* arbitrary bytes, and
* mutations of a valid file: byte flips, truncations (anywhere and at line
  boundaries), duplicated, dropped and swapped lines, deep nesting (``[`` x 3000
  and more), huge numbers, invalid UTF-8, and codec tags that name callables,

at least 1,000 of each per reader.  Whatever the input, the reader either
accepts it or raises a :class:`~lockstep.errors.LockstepError` whose message is
one line that starts with the file's name (and the line, for the line-based
formats); any other exception fails the test.  Deterministic tests add every
line-boundary truncation, drop and duplication of each seed file, and the
inputs the issue reported.

Files are written to a RAM-backed folder when the machine has one (writing to
disk dominates the run time otherwise), each example to a new name.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon import _core, decoding
from lockstep.config import Project, load_project
from lockstep.errors import CanonError, ConfigError, DataError, LockstepError
from lockstep.oracles.corpus import lock as corpus_lock
from lockstep.oracles.ledger import file as ledger_file
from lockstep.oracles.ledger.format import (
    ENCODER,
    FORMAT_VERSION,
    LedgerHeader,
    LedgerRow,
    Param,
    input_key,
    row_id,
)
from lockstep.oracles.pins import cases as pins_cases
from lockstep.oracles.pins import format as pins_format
from lockstep.oracles.tape import document as tape_document
from lockstep.oracles.tape.recorder import Event
from lockstep.store import display_path, pretty_json

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


EXAMPLES = 1000
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- valid seed files

CONFIG = b"""\
[lockstep]
dir = "lockstep"
stem_length = 48
jobs = 0

[[corpus]]
name = "transform"
fixtures = "fixtures/*.json"
render = "harness:render"
rules = ["uuid"]

[[ledger]]
name = "norm"
target = "refs.messy:normalize_ref"
float_tolerance = 0.0

[[pins]]
name = "export"
command = ["python", "export.py"]
cases = "cases/export.toml"
env_keys = ["TAX_RATE", "CURRENCY"]
rules = ["uuid", "iso-timestamp"]
timeout = 30
runs = 2

[[tape]]
name = "total"
driver = "drive:drive"
mode = "ordered"

[[rule]]
name = "run-id"
pattern = 'run-[0-9]+'
replace = "<RUN>"
"""

CASES = b"""\
[[case]]
id = "empty"
argv = ["--empty"]
env = { TAX_RATE = "0.2" }
stdin = "a,b\\n"
cwd_rel = "."

[[case]]
id = "two"
argv = ["--format", "csv"]
env = { CURRENCY = "EUR" }
"""

FN = "refs.messy:normalize_ref"


def _ledger() -> bytes:
    rows = []
    calls: list[tuple[list[Any], dict[str, Any], Any]] = [
        ([1, "a"], {}, {"$tuple": [1, 2]}),
        (["x", {"$bytes": "AP8="}], {"k": {"$decimal": "1.10"}}, [1.5, None]),
        ([{"$set": [1, 2]}], {}, {"$dict": [[1, "a"]]}),
        ([{"$datetime": ["2024-01-02T03:04:05+00:00", None, 0]}], {}, {"$timedelta": [1, 2, 3]}),
    ]
    for args, kwargs, result in calls:
        rid = row_id(input_key(args, kwargs))
        rows.append(LedgerRow(id=rid, fn=FN, args=args, kwargs=kwargs, ok=True, result=result))
    rid = row_id(input_key([None], {}))
    rows.append(
        LedgerRow(id=rid, fn=FN, args=[None], kwargs={}, ok=False, exc_type="E", exc_stem="bad")
    )
    rows.sort(key=lambda r: r.id)
    lines = [ENCODER.encode(r) for r in rows]
    count, digest = ledger_file.body_digest(lines)
    header = LedgerHeader(
        lockstep_ledger=FORMAT_VERSION,
        fn=FN,
        signature=[Param(name="ref", kind="positional_or_keyword")],
        stem_length=48,
        rows=count,
        digest=digest,
    )
    return b"\n".join([ENCODER.encode(header), *lines]) + b"\n"


LEDGER = _ledger()

PINS = (
    b"\n".join(
        [
            pins_format.encode(
                pins_format.Header(
                    format="lockstep-pins",
                    version=pins_format.VERSION,
                    env_base={"LANG": "C.UTF-8", "TZ": "UTC"},
                    env_inherit=["PATH"],
                    rules=[],
                )
            ),
            pins_format.encode(
                pins_format.Pin(
                    id="empty",
                    argv=["python", "export.py", "--empty"],
                    env={"TAX_RATE": "0.2"},
                    stdin="a,b\n",
                    exit_code=0,
                    stdout="id,total\n",
                    stderr=pins_format.TaggedBytes("AP8="),
                    cwd_rel=".",
                )
            ),
            pins_format.encode(
                pins_format.Pin(
                    id="two",
                    argv=["python", "export.py", "--format", "csv"],
                    env={},
                    stdin="",
                    exit_code=2,
                    stdout="",
                    stderr="error: bad\n",
                    cwd_rel=".",
                )
            ),
        ]
    )
    + b"\n"
)

LOCK = pretty_json(
    corpus_lock.Lock(
        version=corpus_lock.LOCK_VERSION,
        oracle="transform",
        render="harness:render",
        entries=[
            corpus_lock.Entry(id="a.json", sha256="0" * 64, nbytes=10),
            corpus_lock.Entry(
                id="b.json",
                sha256="f" * 64,
                nbytes=0,
                raised=canon.FrozenException("ValueError", "bad"),
            ),
        ],
    )
)

TAPE = pretty_json(
    tape_document.TapeDocument(
        version=tape_document.VERSION,
        name="total",
        mode="ordered",
        rules=[],
        events=[
            Event(collaborator="rates.rate", args=["EUR"], returned=1.0),
            Event(
                collaborator="rates.rate",
                args=[{"$tuple": [1, {"$bytes": "AP8="}]}],
                raised=canon.FrozenException("KeyError", "'USD'"),
            ),
        ],
        output=tape_document.Output(returned=14.0),
    )
)

VALUE = canon.dumps(
    [1, (2, b"x"), {1: {"a"}}, {"k": [1.5, None, True]}, canon.decode({"$decimal": "1.10"})]
)

# --------------------------------------------------------------------------- the readers


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where examples are written: RAM-backed when the machine has /dev/shm."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="lockstep-fuzz-", dir=shm))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("fuzz")


_names = itertools.count()


def _fresh(folder: Path, suffix: str, data: bytes) -> Path:
    path = folder / f"{next(_names)}{suffix}"
    path.write_bytes(data)
    return path


class Reader(NamedTuple):
    """A reader under fuzz: ``read`` writes ``data`` where it reads it from and reads it,
    returning how the file is named in messages; ``lines``: the format names lines."""

    name: str
    seed: bytes
    read: Callable[[Path, bytes], str]
    lines: bool


def read_config(folder: Path, data: bytes) -> str:
    path = _fresh(folder, ".lockstep.toml", data)
    try:
        load_project(config_path=path)
    finally:
        path.unlink()
    return path.name


_PROJECTS: dict[Path, Project] = {}


def read_cases(folder: Path, data: bytes) -> str:
    project = _PROJECTS.get(folder)
    if project is None:
        config = folder / "lockstep.toml"
        config.write_bytes(CONFIG)
        (folder / "cases").mkdir(exist_ok=True)
        project = _PROJECTS[folder] = load_project(config_path=config)
    name = f"cases/{next(_names)}.toml"
    spec = msgspec.structs.replace(project.oracle("export"), cases=name)  # type: ignore[type-var]
    path = folder / name
    path.write_bytes(data)
    try:
        pins_cases.read_cases(project, spec)
    finally:
        path.unlink()
    return name


def read_pins(folder: Path, data: bytes) -> str:
    path = _fresh(folder, ".pins.jsonl", data)
    try:
        pins = pins_format.open_pins(path)
        for _ in pins.pins():
            pass
        pins.index()
    finally:
        path.unlink()
    return display_path(path)


def read_ledger(folder: Path, data: bytes) -> str:
    """The header and body as ``read_header``/``iter_rows`` read them; then, whatever the
    header says, every row line as replay reads it: ``parse_row`` and each value thawed."""
    path = _fresh(folder, ".ledger.jsonl", data)
    shown = display_path(path)
    try:
        try:
            header = ledger_file.read_header(path)
            for _ in ledger_file.iter_rows(path, header):
                pass
        except LockstepError as e:
            _check_message(str(e), shown, lines=True)
        for lineno, line in enumerate(data.split(b"\n")[1:], start=2):
            if not line.strip():
                continue
            try:
                row = ledger_file.parse_row(line.rstrip(b"\r"), lineno, shown, FN)
            except LockstepError as e:
                _check_message(str(e), shown, lines=True)
                continue
            _thaw_row(row)
    finally:
        path.unlink()
    return shown


def _thaw_row(row: LedgerRow) -> None:
    """What replay does with a parsed row's values: only CanonError may come of it."""
    for value, where in (
        (row.args, "args"),
        (row.kwargs, "kwargs"),
        (row.result, "result"),
        (row.mutated, "mutated"),
    ):
        if value is msgspec.UNSET:
            continue
        try:
            canon.decode(value, path=where)
        except CanonError as e:
            _check_message(str(e), where, lines=False)


def read_lock(folder: Path, data: bytes) -> str:
    path = _fresh(folder, ".lock.json", data)
    try:
        corpus_lock.read_lock(path)
    finally:
        path.unlink()
    return display_path(path)


def read_tape(folder: Path, data: bytes) -> str:
    path = _fresh(folder, ".tape.json", data)
    try:
        tape_document.read_document(path, owner="total", owner_kind="oracle")
    finally:
        path.unlink()
    return display_path(path)


def read_canon(folder: Path, data: bytes) -> str:
    canon.loads(data)
    return "value"


READERS = [
    Reader("config", CONFIG, read_config, lines=False),
    Reader("cases", CASES, read_cases, lines=False),
    Reader("pins", PINS, read_pins, lines=True),
    Reader("ledger", LEDGER, read_ledger, lines=True),
    Reader("lock", LOCK, read_lock, lines=False),
    Reader("tape", TAPE, read_tape, lines=False),
    Reader("canon", VALUE, read_canon, lines=False),
]
BY_NAME = {r.name: r for r in READERS}

_SHOWN = re.compile(r"(?P<name>.*?)(?::(?P<line>\d+))?: ")


def _check_message(message: str, shown: str, *, lines: bool) -> None:
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(shown), f"{message!r} does not name {shown!r}"
    if lines and not message.startswith(f"{shown}: empty"):
        assert re.match(rf"{re.escape(shown)}:\d+: ", message), f"no line in {message!r}"


def check(reader: Reader, folder: Path, data: bytes) -> None:
    """Read ``data``: accepted, or one LockstepError line naming the file; nothing else."""
    shown: str | None = None
    try:
        shown = reader.read(folder, data)
    except LockstepError as e:
        message = str(e)
        found = _SHOWN.match(message)
        assert found is not None, message
        _check_message(message, found.group("name"), lines=reader.lines)
        assert reader.name in ("canon", "config", "cases") or found.group("name").endswith(
            reader.name + (".jsonl" if reader.lines else ".json")
        ), message
    else:
        assert shown is not None


# --------------------------------------------------------------------------- mutations

HUGE_NUMBERS = [
    b"9" * 5000,
    b"-" + b"9" * 4300,
    b"9" * 4300,
    b"100000000000",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1e400",
    b"1e99999999999999999999",
    b"-0",
    b"nan",
    b"inf",
    b"0x7fffffffffffffff",
]
NASTY = [
    b"[" * 3000,
    b"[" * 100_000,
    b'{"a":' * 3000,
    b"a = " + b"[" * 3000,
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",  # a UTF-8-encoded surrogate
    b"\x00",
    b"\r",
    b"\\udcff",
    b'"\\ud800"',
    b"\n\n",
    b"\n[[case]]\n",
    b"\n[lockstep]\n",
    *HUGE_NUMBERS,
]
TAGS = [
    b'{"$namedtuple":["os:system",["touch /tmp/lockstep-fuzz-pwned"]]}',
    b'{"$enum":["this:s","x"]}',
    b'{"$dataclass":["builtins:eval",{}]}',
    b'{"$timedelta":[999999999999,0,0]}',
    b'{"$decimal":"1e99999999999999999999"}',
    b'{"$tuple":{"x":1}}',
    b'{"$set":"ab"}',
    b'{"$set":[[1]]}',
    b'{"$datetime":["2024-13-01T00:00:00",null,0]}',
    b'{"$datetime":["2024-01-01T00:00:00","../../etc/passwd",0]}',
    b'{"$float":"x"}',
    b'{"$complex":[1]}',
    b'{"$path":["WindowsPath","C:\\\\x"]}',
    b'{"$bytes":"!!"}',
    b'{"$ext":["nope",1]}',
    b'{"$dict":[[[1],2]]}',
    b'{"$nope":1}',
    b"[" * 300 + b"]" * 300,
    b"[" * 5000 + b"]" * 5000,
    b"9" * 4300,
]
_VALUE_AT = re.compile(
    rb'(?<=[:\[,=])\s*("(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?|null|true|false|\[\])'
)
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")


def _index(data: bytes | list[Any], at: int) -> int:
    return at % (len(data) + 1)


def mutate(data: bytes, op: tuple[Any, ...]) -> bytes:
    kind = op[0]
    lines = data.split(b"\n")
    if kind == "flip" and data:
        i = op[1] % len(data)
        return data[:i] + bytes([data[i] ^ op[2]]) + data[i + 1 :]
    if kind == "truncate":
        return data[: _index(data, op[1])]
    if kind == "cut_lines":
        return b"\n".join(lines[: _index(lines, op[1])])
    if kind == "dup_line" and lines:
        i = op[1] % len(lines)
        return b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
    if kind == "drop_line" and lines:
        i = op[1] % len(lines)
        return b"\n".join(lines[:i] + lines[i + 1 :])
    if kind == "swap_lines" and lines:
        i, j = op[1] % len(lines), op[2] % len(lines)
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if kind == "insert":
        i = _index(data, op[1])
        return data[:i] + op[2] + data[i:]
    if kind == "number":
        found = list(_NUMBER.finditer(data))
        if found:
            m = found[op[1] % len(found)]
            return data[: m.start()] + op[2] + data[m.end() :]
    if kind == "value":
        found = list(_VALUE_AT.finditer(data))
        if found:
            m = found[op[1] % len(found)]
            return data[: m.start(1)] + op[2] + data[m.end(1) :]
    return data


positions = st.integers(min_value=0, max_value=2**20)
mutations = st.one_of(
    st.tuples(st.just("flip"), positions, st.integers(1, 255)),
    st.tuples(st.just("truncate"), positions),
    st.tuples(st.just("cut_lines"), positions),
    st.tuples(st.just("dup_line"), positions),
    st.tuples(st.just("drop_line"), positions),
    st.tuples(st.just("swap_lines"), positions, positions),
    st.tuples(st.just("insert"), positions, st.sampled_from(NASTY)),
    st.tuples(st.just("number"), positions, st.sampled_from(HUGE_NUMBERS)),
    st.tuples(st.just("value"), positions, st.sampled_from(TAGS + HUGE_NUMBERS)),
)


# --------------------------------------------------------------------------- the properties

reader_ids = [r.name for r in READERS]


@pytest.mark.parametrize("reader", READERS, ids=reader_ids)
def test_every_seed_file_is_read(reader: Reader, folder: Path) -> None:
    reader.read(folder, reader.seed)  # raises nothing: the mutations start from a valid file


@pytest.mark.parametrize("reader", READERS, ids=reader_ids)
@FUZZ
@given(data=st.binary(max_size=1024))
def test_arbitrary_bytes(reader: Reader, data: bytes, folder: Path) -> None:
    check(reader, folder, data)


@pytest.mark.parametrize("reader", READERS, ids=reader_ids)
@FUZZ
@given(ops=st.lists(mutations, min_size=1, max_size=4))
def test_mutations_of_a_valid_file(
    reader: Reader, ops: list[tuple[Any, ...]], folder: Path
) -> None:
    data = reader.seed
    for op in ops:
        data = mutate(data, op)
    check(reader, folder, data)


@pytest.mark.parametrize("reader", READERS, ids=reader_ids)
def test_every_line_boundary(reader: Reader, folder: Path) -> None:
    """Truncated after each line, each line dropped, each line duplicated, lines reversed."""
    lines = reader.seed.split(b"\n")
    for i in range(len(lines) + 1):
        check(reader, folder, b"\n".join(lines[:i]))
        check(reader, folder, b"\n".join(lines[:i]) + b"\n")
    for i in range(len(lines)):
        check(reader, folder, b"\n".join(lines[:i] + lines[i + 1 :]))
        check(reader, folder, b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]))
    check(reader, folder, b"\n".join(reversed(lines)))


# JSON trees with tags, well- and ill-formed, for the codec's decoder itself.
tag_names = st.sampled_from([*sorted(canon.KNOWN_TAGS), "$nope", "$"])
type_names = st.sampled_from(
    [
        "os:system",
        "subprocess:call",
        "builtins:eval",
        "this:s",
        "decimal:Decimal",
        "enum:Enum",
        "test_fuzz_readers:Reader",
        "collections:OrderedDict",
        "x",
        "",
    ]
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    type_names,
)
json_trees = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.builds(lambda tag, payload: {tag: payload}, tag_names, inner),
        st.builds(lambda tag, name, rest: {tag: [name, rest]}, tag_names, type_names, inner),
    ),
    max_leaves=16,
)


@FUZZ
@given(tree=json_trees)
def test_decoding_generated_tag_trees(tree: Any) -> None:
    try:
        value = canon.decode(tree, path="args")
    except CanonError as e:
        _check_message(str(e), "args", lines=False)
        with pytest.raises((CanonError, _core._TooDeep)):  # the path-naming decoder too
            decoding.decode_at(tree, "args", 1)
        return
    # the fast decoder and the path-naming one agree; what decodes freezes and thaws alike
    frozen = canon.dumps(value)
    assert canon.dumps(decoding.decode_at(tree, "args", 1)) == frozen
    assert canon.dumps(canon.loads(frozen)) == frozen


# --------------------------------------------------------------------------- the issue's inputs


def _with(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data
    return data.replace(old, new, 1)


ISSUE_INPUTS = [
    ("config", _with(CONFIG, b'dir = "lockstep"', b'dir = "lock\xffstep"'), ":2: not UTF-8"),
    ("config", _with(CONFIG, b"timeout = 30", b"timeout = 100000000000"), "pins[0].timeout"),
    ("config", _with(CONFIG, b"timeout = 30", b"timeout = nan"), "pins[0].timeout"),
    ("config", _with(CONFIG, b"timeout = 30", b"timeout = inf"), "pins[0].timeout"),
    ("config", _with(CONFIG, b"stem_length = 48", b"stem_length = " + b"9" * 5000), "TOML"),
    ("config", _with(CONFIG, b"jobs = 0", b"jobs = " + b"[" * 3000), "nested too deeply"),
    ("config", _with(CONFIG, b"'run-[0-9]+'", b"'" + b"(" * 5000 + b"'"), "rule[0].pattern"),
    ("config", _with(CONFIG, b"'run-[0-9]+'", b"'a{99999999999}'"), "rule[0].pattern"),
    ("cases", _with(CASES, b'"--empty"', b'"--em\xc3"'), ":3: not UTF-8"),
    ("cases", _with(CASES, b'stdin = "a,b\\n"', b"stdin = " + b"[" * 3000), "nested too deeply"),
    ("cases", _with(CASES, b'id = "two"', b"id = " + b"1" * 5000), "TOML"),
    ("ledger", _with(LEDGER, b'"args":[1,"a"]', b'"args":' + b"[" * 10000), "nested too deeply"),
    ("ledger", b"[" * 3000 + b"\n", ":1: "),
    ("lock", b'{"version":' + b"[" * 3000, "nested too deeply"),
    ("lock", _with(LOCK, b'"nbytes": 10', b'"nbytes": 1' + b"0" * 190), "nbytes"),
    ("tape", _with(TAPE, b'"EUR"', b"[" * 3000), "nested too deeply"),
    ("pins", _with(PINS, b'"exit_code":0', b'"exit_code":' + b"9" * 5000), ":2: "),
    ("canon", b'{"$timedelta":[999999999999,0,0]}', "value: malformed $timedelta"),
    ("canon", b'{"$decimal":"1e99999999999999999999"}', "value: malformed $decimal"),
    ("canon", b"[" * 3000 + b"]" * 3000, "value: nested more than 200"),
    ("canon", b'{"$namedtuple":["os:system",["echo"]]}', "which is not a NamedTuple class"),
]


@pytest.mark.parametrize(
    ("name", "data", "said"),
    ISSUE_INPUTS,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(ISSUE_INPUTS)],
)
def test_the_issue_s_inputs_are_one_line_errors(
    name: str, data: bytes, said: str, folder: Path
) -> None:
    reader = BY_NAME[name]
    with pytest.raises(LockstepError) as info:
        if name == "ledger":  # read_ledger keeps going past errors; the header read alone stops
            ledger_file.read_header(_fresh(folder, ".ledger.jsonl", data))
        else:
            reader.read(folder, data)
    assert isinstance(info.value, ConfigError | DataError | CanonError)
    message = str(info.value)
    # An unclosed 3,000-deep nest: the JSON parser stops at its depth limit, or (Python 3.13,
    # whose C recursion limit is higher) reads to the end and finds the text cut short; both
    # are the file's one-line error.
    deep = said == "nested too deeply" and "not valid JSON" in message
    assert said in message or deep, message
    check(reader, folder, data)


def test_a_row_nested_too_deeply_is_a_data_error_with_its_line(folder: Path) -> None:
    row = json.loads(LEDGER.split(b"\n")[1])
    line = json.dumps(row).encode().replace(b'"args": [', b'"args": [' + b"[" * 10000, 1)
    with pytest.raises(DataError, match=r"^x\.ledger\.jsonl:7: .*nested too deeply"):
        ledger_file.parse_row(line, 7, "x.ledger.jsonl", FN)
