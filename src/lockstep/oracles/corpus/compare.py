"""How two renderings of one fixture differ: the one comparison of replay and ``--against``.

Replay compares today's rendering with the locked hash (and the blob, when kept);
``replay --against`` compares the old code's rendering with the new code's.  Both
describe a difference the same way: a summary of each side (size and hash, or the
exception) and the readable document diff of the two renderings.
"""

from __future__ import annotations

from lockstep import canon
from lockstep.diff import document_diff, shown_texts
from lockstep.model import Drift
from lockstep.oracles.corpus.render import Rendered
from lockstep.store import sha256_hex


def summary(raised: canon.FrozenException | None, nbytes: int, sha: str) -> str:
    """One side of a difference: ``raised ValueError: stem`` or ``12 bytes, sha256 …``."""
    if raised is not None:
        return f"raised {raised.exc_type}: {raised.exc_stem}"
    return f"{nbytes} bytes, sha256 {sha[:12]}"


def rendering_drift(
    expected: bytes | None,
    expected_summary: str,
    expected_raised: canon.FrozenException | None,
    actual: Rendered,
    *,
    label_expected: str,
    label_actual: str,
) -> Drift:
    """The drift between an expected rendering (its bytes, when kept) and ``actual``."""
    actual_summary = summary(actual.raised, len(actual.data), sha256_hex(actual.data))
    if expected is None:
        diff = "(the recorded document is not in the blob store; only hashes can be compared)\n"
    else:
        diff = document_diff(
            expected, actual.data, label_expected=label_expected, label_actual=label_actual
        )
    aspect = "exception" if (expected_raised or actual.raised) else "output"
    texts = None if expected is None else shown_texts(expected, actual.data)
    return Drift(aspect, expected_summary, actual_summary, diff, texts)
