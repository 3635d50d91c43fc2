"""The standard library's value classes as arguments and results.

A billing export that writes its lines to the file object it is given (``io.StringIO``
in its tests), money split in ``Fraction``s, an ``ipaddress`` host, a ``deque`` of the
last rows, a ``SimpleNamespace`` row: each made its call a skipped one ("cannot freeze a
fractions.Fraction", "cannot freeze a _io.StringIO").  Here such a module is recorded
under its suite, replays green unchanged and goes red for one-line changes seen only
through those values (what the export wrote is the file argument's change); every form
round-trips to an equal object of its exact class, and hostile forms are one-line errors.
"""

from __future__ import annotations

import argparse
import array
import codecs
import collections
import fractions
import io
import ipaddress
import logging
import threading
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

BILLING = """
import codecs
import collections
import logging
import fractions
import ipaddress
import threading
import types


def split(total, parts):
    \"\"\"``total`` shared in ``parts`` exact shares, the remainder on the first.\"\"\"
    share = fractions.Fraction(total) / parts
    return [share] * parts


def export(rows, out):
    \"\"\"Write one line per row to ``out``; the number of lines written.\"\"\"
    for row in rows:
        out.write(f"{row.customer};{row.amount}\\n")
    return len(rows)


def row(customer, amount):
    return types.SimpleNamespace(customer=customer, amount=amount)


def recent(rows, keep=2):
    return collections.deque(rows, maxlen=keep)


def gateway(host):
    return ipaddress.ip_interface(host).network


class Ledger:
    \"\"\"Keeps its logger, as most legacy classes do.\"\"\"

    def __init__(self, encoding="utf-8"):
        self.log = logging.getLogger("billing")
        self.codec = codecs.lookup(encoding)
        self._lock = threading.Lock()

    def encoded(self, text):
        self.log.debug("encoding %s", text)
        with self._lock:
            return self.codec.encode(text)[0]
"""

TESTS = """
import fractions
import io

from billing import Ledger, export, gateway, recent, row, split


def test_split():
    assert sum(split(10, 3)) == 10
    assert split(fractions.Fraction(1, 2), 2)[0] == fractions.Fraction(1, 4)


def test_export():
    out = io.StringIO()
    assert export([row("acme", 12), row("initech", 7)], out) == 2
    assert out.getvalue() == "acme;12\\ninitech;7\\n"


def test_recent_and_gateway():
    assert list(recent([1, 2, 3])) == [2, 3]
    assert str(gateway("10.1.2.3/16")) == "10.1.0.0/16"


def test_ledger():
    assert Ledger("latin-1").encoded("caf\\xe9") == b"caf\\xe9"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "billing"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/billing/__init__.py": BILLING,
    "tests/test_billing.py": TESTS,
}


def test_a_billing_export_writing_to_its_file_argument_is_recorded_and_guarded(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "cannot freeze" not in run.output, run.output
    (written,) = rows_of(root / "lockstep/billing.export.ledger.jsonl")
    assert written.args[1] == {"$stringio": ["", "\n", 0]}
    assert written.mutated == {"1": {"$stringio": ["acme;12\ninitech;7\n", "\n", 18]}}
    splits = rows_of(root / "lockstep/billing.split.ledger.jsonl")
    assert any({"$fraction": [10, 3]} in row.result for row in splits), splits
    assert run_cli("replay", cwd=root).code == 0

    source = "src/billing/__init__.py"
    red = red_after_change(root, source, '{row.amount}\\n"', '{row.amount} \\n"')
    assert "DRIFT billing.export" in red.stdout, red.stdout
    assert "StringIO('acme;12 \\ninitech;7 \\n'" in red.stdout, red.stdout
    (root / source).write_text(BILLING)
    red = red_after_change(root, source, "maxlen=keep", "maxlen=keep + 1")
    assert "DRIFT billing.recent" in red.stdout, red.stdout
    (root / source).write_text(BILLING)
    red = red_after_change(root, source, ".network", ".ip")
    assert "DRIFT billing.gateway" in red.stdout, red.stdout
    (root / source).write_text(BILLING)
    (encoded,) = rows_of(root / "lockstep/billing.Ledger.encoded.ledger.jsonl")
    state = encoded.args[0]["$obj"][1]["state"]
    assert state == {
        "codec": {"$codec": "iso8859-1"},
        "log": {"$logger": "billing"},
        "_lock": {"$lock": "Lock"},
    }, state
    red = red_after_change(root, source, "self.codec.encode(text)[0]", "text.encode()")
    assert "DRIFT billing.Ledger.encoded" in red.stdout, red.stdout


_scalars = st.one_of(st.integers(), st.text(max_size=8), st.none(), st.booleans())


@given(
    fraction=st.fractions(),
    items=st.lists(_scalars, max_size=5),
    maxlen=st.none() | st.integers(min_value=0, max_value=6),
    text=st.text(max_size=30),
    newline=st.sampled_from([None, "", "\n", "\r", "\r\n"]),
    data=st.binary(max_size=30),
    doubles=st.lists(st.floats(allow_nan=False), max_size=4),
)
def test_every_form_round_trips_to_an_equal_object_of_its_class(
    fraction: fractions.Fraction,
    items: list[Any],
    maxlen: int | None,
    text: str,
    newline: str | None,
    data: bytes,
    doubles: list[float],
) -> None:
    written = io.StringIO(newline=newline)
    written.write(text)
    values: list[Any] = [
        fraction,
        collections.deque(items, maxlen),
        types.SimpleNamespace(items=items, text=text),
        collections.ChainMap({"a": text}, {"b": items}),
        argparse.Namespace(items=items, verbose=bool(text)),
        array.array("d", doubles),
        written,
        io.BytesIO(data),
    ]
    for value in values:
        frozen = canon.encode(value)
        back = canon.decode(frozen)
        assert type(back) is type(value)
        assert canon.encode(back) == frozen
        if isinstance(value, io.StringIO | io.BytesIO):
            assert back.getvalue() == value.getvalue() and back.tell() == value.tell()
        else:
            assert back == value
        assert value_text(frozen)


@pytest.mark.parametrize(
    "value",
    [
        ipaddress.ip_address("192.0.2.1"),
        ipaddress.ip_address("2001:db8::1"),
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("2001:db8::/32"),
        ipaddress.ip_interface("10.1.2.3/16"),
        ipaddress.ip_interface("fe80::1%eth0/64"),
    ],
)
def test_each_ipaddress_class_round_trips_by_its_text(value: Any) -> None:
    frozen = canon.encode(value)
    assert frozen == {"$ip": [type(value).__name__, str(value)]}
    assert canon.decode(frozen) == value and type(canon.decode(frozen)) is type(value)


@pytest.mark.parametrize("name", ["utf-8", "latin-1", "cp1252", "ascii", "utf-16"])
def test_a_codec_round_trips_by_its_name(name: str) -> None:
    codec = codecs.lookup(name)
    assert canon.decode(canon.encode(codec)) == codec


@pytest.mark.parametrize("alias", ["iso-8859-2", "ISO_8859-5", "windows-1252", "koi8_r"])
def test_a_charmap_codec_looked_up_by_an_alias_freezes_by_its_name(alias: str) -> None:
    """A charmap codec binds its methods to a new ``Codec()`` for each name it is looked
    up by: webencodings looks them up by alias, and tinycss2's stylesheets in iso-8859-2
    were skipped, their decoding guarded by no row.  Bound to objects of one class in one
    state, they are the same codec; one bound to another state is not."""
    codec = codecs.lookup(alias)
    frozen = canon.encode(codec)
    thawed = canon.decode(frozen)
    assert frozen == {"$codec": codec.name} and thawed.name == codec.name
    assert thawed.decode(bytes(range(160, 200)))[0] == codec.decode(bytes(range(160, 200)))[0]

    class Stateful:
        def __init__(self, table: str) -> None:
            self.table = table

        def decode(self, data: bytes, errors: str = "strict") -> tuple[str, int]:
            return data.decode(self.table), len(data)

    other = codecs.CodecInfo(codec.encode, Stateful("latin-1").decode, name=codec.name)
    with pytest.raises(CanonError, match=r"codecs\.lookup does not give it back"):
        canon.encode([other])


def test_a_logger_thaws_to_the_one_logging_hands_out() -> None:
    for logger in (logging.getLogger("billing.export"), logging.getLogger()):
        assert canon.decode(canon.encode(logger)) is logger


def test_a_lock_thaws_to_a_new_unheld_one_and_a_held_one_is_refused() -> None:
    for lock in (threading.Lock(), threading.RLock()):
        thawed = canon.decode(canon.encode(lock))
        assert type(thawed) is type(lock) and thawed is not lock
        assert thawed.acquire(blocking=False)
        with lock, pytest.raises(CanonError, match="cannot freeze a held threading"):
            canon.encode([lock])
    assert value_text(canon.encode(threading.RLock())) == "threading.RLock()"


def test_a_closed_file_and_one_past_its_end_are_refused() -> None:
    closed = io.StringIO("x")
    closed.close()
    with pytest.raises(CanonError, match="closed StringIO"):
        canon.encode([closed])
    far = io.BytesIO(b"x")
    far.seek(1000)
    with pytest.raises(CanonError, match="positioned past its end"):
        canon.encode([far])


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"$fraction": [2, 4]}, "a fraction in lowest terms"),
        ({"$fraction": [1, 0]}, "[int, positive int]"),
        ({"$fraction": ["1", 2]}, "[int, positive int]"),
        ({"$ip": ["IPv4Address", "01.2.3.4"]}, "malformed $ip value"),
        ({"$ip": ["os:system", "1.2.3.4"]}, "an ipaddress class name"),
        ({"$ip": ["IPv4Network", "10.0.0.1/8"]}, "malformed $ip value"),
        ({"$deque": [[1, 2], 1]}, "at most 1 items"),
        ({"$deque": [[1], -1]}, "maxlen (int or null)"),
        ({"$namespace": [1]}, "an object of attributes"),
        ({"$argparse": {"$dict": [[1, 2]]}}, "an object of attributes"),
        ({"$chainmap": [1]}, "a list of dicts"),
        ({"$array": ["Z", []]}, "a typecode of array.typecodes"),
        ({"$array": ["b", [1000]]}, "malformed $array value"),
        ({"$stringio": ["", "\n", 10**9]}, "a position within its 0 characters"),
        ({"$stringio": ["x", "\t", 0]}, "[text, newline, position]"),
        ({"$bytesio": ["x", 0]}, "[bytes, position]"),
        ({"$bytesio": [{"$bytes": "eA=="}, 2]}, "a position within its 1 bytes"),
        ({"$codec": "no-such-codec"}, "which no codec here is"),
        ({"$codec": "UTF8"}, "the codec's own name ('utf-8')"),
        ({"$logger": ""}, "a logger's name, or null for the root"),
        ({"$logger": ["billing"]}, "a logger's name, or null for the root"),
        ({"$lock": "Semaphore"}, '"Lock" or "RLock"'),
    ],
)
def test_a_hostile_form_is_a_one_line_error(document: Any, says: str) -> None:
    message = refused_in_one_line(document)
    assert says in message, message
