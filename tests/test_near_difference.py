"""What a brief verdict keeps of two texts holds their first difference, wherever it is.

Record's verifying interpreter sends back, for a case that did not reproduce, a bounded
excerpt of each side (:func:`lockstep.oracles._near_difference`).  A difference within
the margin of the start (characters 240-255 of croniter's half-built ``self``) sliced
from a negative index: the excerpt was the text's tail, or empty, and the refusal read
``recorded , fresh interpreter ``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lockstep.oracles import BRIEF_MARGIN, _near_difference

KEEP = 2 * BRIEF_MARGIN - 16


def test_a_difference_just_past_the_kept_head_is_kept() -> None:
    expected = "a" * 250 + "X" + "b" * 300
    actual = "a" * 250 + "Y" + "b" * 300
    shown = _near_difference(expected, actual, KEEP)
    assert shown[0].startswith("a") and "X" in shown[0]
    assert shown[1].startswith("a") and "Y" in shown[1]


@given(
    st.text(alphabet="ab", max_size=900),
    st.text(alphabet="xy", min_size=1, max_size=40),
    st.text(alphabet="xy", min_size=1, max_size=40),
    st.text(alphabet="cd", max_size=900),
)
def test_the_first_difference_is_always_in_both_excerpts(
    head: str, left: str, right: str, tail: str
) -> None:
    if left[0] == right[0]:
        right = ("y" if left[0] == "x" else "x") + right[1:]
    expected, actual = head + left + tail, head + right + tail
    kept_expected, kept_actual = _near_difference(expected, actual, KEEP)
    assert kept_expected != kept_actual
    assert len(kept_expected) <= KEEP and len(kept_actual) <= KEEP
    assert kept_expected in expected and kept_actual in actual
