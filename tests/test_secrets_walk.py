"""The secret scan's walk over a case's values: every string, in written order, at any depth.

:func:`lockstep.secrets.policy.strings` walks with a stack of its own (a parsed document
nests dozens of objects deep); it must hand out exactly what the plain recursive walk
below does, and a case's findings must not depend on how often a string repeats in it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.model import DictKey
from lockstep.secrets.policy import SecretPolicy, strings
from lockstep.secrets.scrub import NamedSecret, Scrubber


def reference(value: Any, path: tuple[Any, ...], key: str = "") -> Iterator[Any]:
    """The walk as the definition reads: recursive, depth first."""
    if not key and len(path) == 1 and isinstance(path[0], str):
        key = path[0]
    if isinstance(value, str):
        yield path, value, False, key
    elif isinstance(value, bytes | bytearray):
        yield path, bytes(value).decode("utf-8", "replace"), False, key
    elif isinstance(value, Mapping):
        if len(value) == 1:
            ((tag, payload),) = value.items()
            if isinstance(tag, str) and tag.startswith("$"):
                if tag in ("$bytes", "$bytearray") and isinstance(payload, str):
                    try:
                        raw = base64.b64decode(payload, validate=True)
                    except ValueError:
                        pass
                    else:
                        yield path, raw.decode("utf-8", "replace"), False, key
                        return
                yield from reference(payload, path, key)
                return
        for name, item in value.items():
            where = (*path, DictKey(name) if isinstance(name, str) else str(name))
            if isinstance(name, str):
                yield where, name, True, ""
            yield from reference(item, where, name if isinstance(name, str) else key)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from reference(item, (*path, i), key)


words = st.sampled_from(["$tuple", "$bytes", "$obj", "password", "name", "", "x"]) | st.text(
    max_size=6
)
leaves = (
    st.none()
    | st.integers()
    | st.booleans()
    | words
    | st.binary(max_size=8)
    | st.binary(max_size=12).map(lambda b: {"$bytes": base64.b64encode(b).decode()})
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(words | st.integers(-3, 3), inner, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=300)
@given(value=values, top=st.sampled_from(["args", "result", 0]), key=st.sampled_from(["", "k"]))
def test_the_walk_is_the_recursive_walk(value: Any, top: Any, key: str) -> None:
    assert list(strings(value, (top,), key)) == list(reference(value, (top,), key))


def test_a_deep_document_is_walked_without_recursion() -> None:
    value: Any = "password: hunter2hunter2"
    for depth in range(5000):  # deeper than the interpreter's recursion limit
        value = {f"level{depth % 3}": [value]}
    found = list(strings(value, ("result",)))
    assert found[-1][1] == "password: hunter2hunter2"
    assert len(found) == 5001


SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@given(times=st.integers(1, 30), filler=st.lists(st.sampled_from(["indent", "", " "]), max_size=8))
def test_findings_do_not_depend_on_repeats(times: int, filler: list[str]) -> None:
    policy = SecretPolicy(enabled=True, scrubber=Scrubber(()), allowed=frozenset())
    once = policy.findings({"result": {"token": SECRET, "pad": filler}})
    many = policy.findings(
        {"result": {"token": SECRET, "pad": filler, "more": [{"token": SECRET}] * times}}
    )
    assert once
    assert {f.detector for f in many} == {f.detector for f in once}
    assert len([f for f in many if f.path[-1] == DictKey("token")]) >= times + 1


def test_a_scrubbed_secret_leaking_is_found_wherever_it_repeats() -> None:
    scrubber = Scrubber((NamedSecret("DB", "DB"),), environ={"DB": "s3cr3t-value-9"})
    policy = SecretPolicy(enabled=True, scrubber=scrubber, allowed=frozenset())
    found = policy.findings({"args": ["s3cr3t-value-9", {"a": "s3cr3t-value-9"}]})
    assert [f.detector for f in found] == ["value of <DB>", "value of <DB>"]
