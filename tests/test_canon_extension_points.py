"""A tag family added from outside the codec's modules: a decoder in the tag table and a
fallback encoder, tried before a value of an unknown type is refused."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep import canon
from lockstep.canon import decoding, encoding
from lockstep.canon._core import check_level
from lockstep.canon.codec import JSON, MAX_DEPTH
from lockstep.errors import CanonError


class Point:
    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y


def freeze_point(encoder: encoding.Encoder, value: Any, depth: int) -> JSON | None:
    if type(value) is not Point:
        return None
    check_level(depth + 1)
    return {
        "$point": [
            encoder.child(value.x, ".x", depth + 2),
            encoder.child(value.y, ".y", depth + 2),
        ]
    }


def thaw_point(payload: Any, path: str, depth: int) -> Point:
    x, y = decoding.list_payload("$point", payload, path, depth, "[x, y]")
    return Point(
        decoding.decode_at(x, f"{path}.x", depth + 2), decoding.decode_at(y, f"{path}.y", depth + 2)
    )


@pytest.fixture
def point_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoding, "FALLBACK_ENCODERS", [*encoding.FALLBACK_ENCODERS, freeze_point])
    monkeypatch.setitem(decoding.TAG_DECODERS, "$point", thaw_point)


def test_a_type_no_rule_knows_is_refused_without_a_fallback() -> None:
    with pytest.raises(CanonError, match=f"cannot freeze a {__name__}.Point;"):
        canon.dumps([Point(1, 2)])


@pytest.mark.usefixtures("point_family")
def test_a_fallback_encoder_and_a_tag_decoder_round_trip_a_new_type() -> None:
    text = canon.dumps({"at": Point((1, 2), b"x")})
    assert text == b'{"at":{"$point":[{"$tuple":[1,2]},{"$bytes":"eA=="}]}}'
    back = canon.loads(text)["at"]
    assert (type(back), back.x, back.y) == (Point, (1, 2), b"x")


@pytest.mark.usefixtures("point_family")
def test_a_refusal_inside_a_fallback_names_its_place() -> None:
    with pytest.raises(CanonError, match=r'args\[0\]\["at"\]\.y') as caught:
        canon.encode([{"at": Point(1, object())}], path="args")
    assert "cannot freeze a bare object()" in str(caught.value)


def nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.usefixtures("point_family")
def test_a_new_tag_nests_as_deep_as_decoding_reads_and_no_deeper() -> None:
    deepest = nested(Point(1, 2), MAX_DEPTH - 2)  # its array sits at the last level
    back = canon.loads(canon.dumps(deepest))
    for _ in range(MAX_DEPTH - 2):
        (back,) = back
    assert (type(back), back.x, back.y) == (Point, 1, 2)
    with pytest.raises(CanonError, match="nested more than"):
        canon.dumps(nested(Point(1, 2), MAX_DEPTH - 1))
