"""The demo's step types: plain data the runner executes and the CLI narrates."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Say:
    """A line of narration."""

    text: str


@dataclass(frozen=True)
class Run:
    """Run a command in the demo folder; ``argv[0]`` is ``lockstep``, ``git`` or ``python``.

    ``expect`` is the exit code the story needs: a demo whose command exits
    otherwise stops and says so (the demo is itself a check of lockstep).
    """

    argv: tuple[str, ...]
    expect: int = 0


@dataclass(frozen=True)
class CopyIn:
    """Copy a bundled file from ``demo/variants/`` over a file of the demo folder (a refactor).

    The story itself uses :func:`copy_in`, a ``cp`` the reader can repeat by hand: the
    demo folder holds the variants (``.variants/``: ignored by git, and hidden from pytest's collection).
    """

    variant: str
    dest: str


VARIANTS_DIR = ".variants"
"""The demo folder's copy of ``demo/variants/``: every refactor of the story, to repeat by hand."""


def copy_in(variant: str, dest: str) -> Run:
    """A refactor step: ``cp variants/VARIANT DEST``, shown and run as the command it is."""
    return Run(("cp", f"{VARIANTS_DIR}/{variant}", dest))


@dataclass(frozen=True)
class Commit:
    """``git add -A && git commit -m MESSAGE`` in the demo folder."""

    message: str


Step = Say | Run | CopyIn | Commit


@dataclass(frozen=True)
class Chapter:
    """One part of the story.

    ``config`` is this chapter's TOML fragment (its ``[[corpus]]``, ``[[ledger]]``...
    tables); the runner joins every chapter's fragment into the demo's
    ``lockstep.toml`` before the first step.
    """

    title: str
    config: str
    steps: tuple[Step, ...]
    needs_git: bool = False
    """A chapter about commits (review, guard) is skipped, with a note, where git is missing."""
