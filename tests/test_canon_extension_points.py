"""A tag family added from outside the codec's modules: a decoder in the tag table and a
fallback encoder, tried before a value of an unknown type is refused."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep import canon
from lockstep.canon import decoding, encoding
from lockstep.canon.codec import JSON
from lockstep.errors import CanonError


class Point:
    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y


def freeze_point(encoder: Any, value: Any, depth: int) -> JSON | None:
    if type(value) is not Point:
        return None
    return {
        "$point": [
            encoder._child(value.x, ".x", depth + 2),
            encoder._child(value.y, ".y", depth + 2),
        ]
    }


def thaw_point(payload: Any, path: str, depth: int) -> Point:
    x, y = decoding._list_payload("$point", payload, path, depth, "[x, y]")
    return Point(decoding._dec(x, f"{path}.x", depth + 2), decoding._dec(y, f"{path}.y", depth + 2))


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
    assert "cannot freeze a builtins.object" in str(caught.value)
