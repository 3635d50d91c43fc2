"""How many lines a change touches: a block moved within the change counts once.

A textbook extract-method removes fourteen lines from a function and adds
them back, unchanged, in a new helper.  Counted hunk by hunk, that is fourteen
lines out and fourteen in, twice the work that was done.  So the lines the
change removes and the lines it adds are first matched against each other,
across every file of the change: a run of at least :data:`MIN_MOVED` non-blank
lines that was removed in one place and added in another with the same text
(indentation aside, so a block that moved into a helper one level shallower is
still a move) is a *moved block* and counts once, one per line.  What is left
is counted as before: a hunk that replaces ``r`` lines by ``a`` lines counts
``max(r, a)`` *edited* lines.  Blank lines never count.

Why difflib and not ``git diff --color-moved``: the match is made here on the
hunks' text, so it also sees a block moved into a new file git does not track
yet (``lockstep step`` judges the working tree, where an extracted module is
untracked), it ignores indentation without git's per-block whitespace rules,
and it needs no parsing of colour escape codes.  ``SequenceMatcher`` finds
the longest common run of lines; matched lines are then taken out of play and
the search repeats, so blocks that swapped places are found too.  An edit
inside a moved block leaves the block moved around it: between two hunks
that share a moved block, shorter runs of unchanged lines count as moved too.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Final

from lockstep.gates.git import Hunk

MIN_MOVED: Final = 3
"""The fewest non-blank lines a removed-and-added run needs to count as a moved block: two
lines such as ``else:`` / ``return None`` recur by chance; three lines of the same text
removed in one place and added in another are a move."""


@dataclass(frozen=True)
class LineCount:
    """The lines a change touches, per file: moved (counted once) and edited."""

    edited: dict[str, int] = field(default_factory=dict)
    moved: dict[str, int] = field(default_factory=dict)
    """Lines of moved blocks, counted in the file they moved *to*."""

    def per_file(self) -> dict[str, int]:
        """Edited plus moved lines of every file that has any."""
        files = set(self.edited) | set(self.moved)
        totals = {p: self.edited.get(p, 0) + self.moved.get(p, 0) for p in sorted(files)}
        return {p: n for p, n in totals.items() if n}


@dataclass(frozen=True)
class _Line:
    path: str
    hunk: int
    text: str


def _side(
    hunks: Mapping[str, Sequence[Hunk]], removed: bool
) -> tuple[list[_Line | None], list[Hashable]]:
    """One side's non-blank lines in order, and what the matcher compares: the text without
    indentation, with a unique marker between hunks so that no block spans two of them."""
    lines: list[_Line | None] = []
    keys: list[Hashable] = []
    for path, file_hunks in hunks.items():
        for i, hunk in enumerate(file_hunks):
            for text in hunk.removed if removed else hunk.added:
                if text.strip():
                    lines.append(_Line(path, i, text))
                    keys.append(text.strip())
            lines.append(None)
            keys.append(("hunk boundary", removed, len(keys)))
    return lines, keys


def count_lines(hunks: Mapping[str, Sequence[Hunk]]) -> LineCount:
    """Count the change's lines: moved blocks once, the rest as edits (``max(r, a)`` per hunk)."""
    removed, r_keys = _side(hunks, removed=True)
    added, a_keys = _side(hunks, removed=False)
    r_text, a_text = list(r_keys), list(a_keys)
    moved_r: set[int] = set()
    moved_a: set[int] = set()
    pairs: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    matcher = SequenceMatcher(None, r_keys, a_keys, autojunk=False)
    while True:
        match = matcher.find_longest_match(0, len(r_keys), 0, len(a_keys))
        if match.size < MIN_MOVED:
            break
        first_r, first_a = removed[match.a], added[match.b]
        assert first_r is not None and first_a is not None
        pairs.add(((first_r.path, first_r.hunk), (first_a.path, first_a.hunk)))
        for k in range(match.size):
            i, j = match.a + k, match.b + k
            moved_r.add(i)
            moved_a.add(j)
            r_keys[i] = ("moved", "removed", i)  # out of play: equal to nothing
            a_keys[j] = ("moved", "added", j)
        matcher.set_seqs(r_keys, a_keys)
    _rest_of_the_blocks(pairs, (removed, r_text, moved_r), (added, a_text, moved_a))
    return LineCount(edited=_edited(removed, added, moved_r, moved_a), moved=_moved(added, moved_a))


_Side = tuple[list[_Line | None], list[Hashable], set[int]]


def _rest_of_the_blocks(
    pairs: set[tuple[tuple[str, int], tuple[str, int]]], r_side: _Side, a_side: _Side
) -> None:
    """A moved block with an edit inside is moved around the edit.

    The edit splits the block into runs that may be shorter than
    :data:`MIN_MOVED`; so between two hunks that already share a moved block,
    every further line removed from the one and added, unchanged, to the
    other is part of that move too.
    """

    def by_hunk(side: _Side) -> dict[tuple[str, int], list[int]]:
        lines, _, moved = side
        out: dict[tuple[str, int], list[int]] = {}
        for index, line in enumerate(lines):
            if line is not None and index not in moved:
                out.setdefault((line.path, line.hunk), []).append(index)
        return out

    r_free, a_free = by_hunk(r_side), by_hunk(a_side)
    for r_hunk, a_hunk in sorted(pairs):
        r_idx = [i for i in r_free.get(r_hunk, []) if i not in r_side[2]]
        a_idx = [j for j in a_free.get(a_hunk, []) if j not in a_side[2]]
        matcher = SequenceMatcher(
            None, [r_side[1][i] for i in r_idx], [a_side[1][j] for j in a_idx], autojunk=False
        )
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                r_side[2].add(r_idx[block.a + k])
                a_side[2].add(a_idx[block.b + k])


def _moved(added: list[_Line | None], moved_a: set[int]) -> dict[str, int]:
    moved: dict[str, int] = {}
    for j in moved_a:
        line = added[j]
        assert line is not None
        moved[line.path] = moved.get(line.path, 0) + 1
    return moved


def _edited(
    removed: list[_Line | None], added: list[_Line | None], moved_r: set[int], moved_a: set[int]
) -> dict[str, int]:
    """Per file, the lines left once moves are taken out: ``max(r, a)`` per hunk."""
    left_r: dict[tuple[str, int], int] = {}
    left_a: dict[tuple[str, int], int] = {}
    for side, moved_side, left in ((removed, moved_r, left_r), (added, moved_a, left_a)):
        for index, line in enumerate(side):
            if line is not None and index not in moved_side:
                key = (line.path, line.hunk)
                left[key] = left.get(key, 0) + 1
    edited: dict[str, int] = {}
    for path, hunk in set(left_r) | set(left_a):
        edited[path] = edited.get(path, 0) + max(
            left_r.get((path, hunk), 0), left_a.get((path, hunk), 0)
        )
    return edited
