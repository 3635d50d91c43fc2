"""The one way every command names revisions: ``REV``, ``BASE..HEAD`` or ``BASE...HEAD``.

``review``, ``guard`` and ``budget`` take a positional ``RANGE``; ``report --review``
takes the same; ``replay --against`` takes one ``REV``.  All of them check the text
with :class:`RevisionArg` here and resolve it with one parser,
:func:`lockstep.gates.review.parse_range` (``BASE`` alone means ``BASE..HEAD``;
``BASE...HEAD`` starts from the merge base of the two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import click

if TYPE_CHECKING:  # generic for mypy (click 8.5); not subscripted at run time (older clicks)
    _ParamType = click.ParamType[str]
else:
    _ParamType = click.ParamType

RANGE_HELP: Final = (
    "RANGE is BASE..HEAD, BASE...HEAD (from their merge base) or BASE (meaning BASE..HEAD); "
    "any revision git knows: a branch, a tag, a sha, HEAD~2."
)


class RevisionArg(_ParamType):
    """A revision (``allow_range=False``) or a range, checked for its shape before git sees it."""

    def __init__(self, *, allow_range: bool = True) -> None:
        self.allow_range = allow_range
        self.name = "range" if allow_range else "rev"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "RANGE" if self.allow_range else "REV"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        if not text:
            self.fail("empty revision: name one, as in HEAD~1 or main..HEAD", param, ctx)
        if ".." in text:
            if not self.allow_range:
                self.fail(f"{text!r} is a range; name one revision (REV), as in HEAD~1", param, ctx)
            left = text.partition("...")[0] if "..." in text else text.partition("..")[0]
            if not left and "..." not in text:
                self.fail(f"range {text!r}: name the base, as in BASE..HEAD", param, ctx)
        if text.startswith("-"):
            self.fail(f"{text!r} is not a revision", param, ctx)
        return text


RANGE: Final = RevisionArg()
REV: Final = RevisionArg(allow_range=False)
