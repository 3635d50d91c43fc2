"""``lockstep demo``: run the bundled story in a fresh folder and narrate it."""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

import click
from rich.rule import Rule
from rich.text import Text

from lockstep.cli.app import EXIT_FAIL, console, main
from lockstep.demo.runner import prepare, run_story
from lockstep.demo.steps import Commit, CopyIn, Run, Say
from lockstep.errors import UsageError


@main.command()
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where to create the demo project (must be empty or absent; default: a new temp folder).",
)
def demo(folder: Path | None) -> None:
    """Freeze a bundled messy project, refactor it safely (green), then unsafely (red)."""
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="lockstep-demo-"))
    try:
        story = prepare(folder)
    except FileExistsError:
        raise UsageError(f"--dir {folder}: folder is not empty; name a new or empty one") from None
    out = console()
    out.print(Text(f"lockstep demo in {folder}", style="bold"))
    current = ""
    for event in run_story(folder, story):
        if event.chapter != current:
            current = event.chapter
            out.print(Rule(current))
        step = event.step
        if isinstance(step, Say):
            out.print(Text(step.text, style="italic"))
        elif isinstance(step, CopyIn):
            out.print(Text(f"$ cp <{step.variant}> {step.dest}", style="cyan"))
        elif isinstance(step, Commit):
            out.print(Text(f"$ git commit -am {step.message!r}", style="cyan"))
        elif isinstance(step, Run):
            out.print(Text("$ " + shlex.join(step.argv), style="cyan"))
            out.print(event.output, end="", markup=False, highlight=False)
            if event.unexpected:
                out.print(
                    Text(
                        f"demo stopped: expected exit {step.expect}, got {event.exit_code}",
                        style="bold red",
                    )
                )
                sys.exit(EXIT_FAIL)
            verdict = "green" if event.exit_code == 0 else f"red (exit {event.exit_code})"
            out.print(Text(f"  → {verdict}, as expected", style="dim"))
    out.print(Rule("what next"))
    out.print(f"The demo project is in {folder}")
    out.print(f"  cd {folder}")
    out.print("  lockstep status                 # the oracles and their cases")
    out.print("  lockstep replay                 # the gate: exit 0 while behaviour holds")
    out.print(
        "  pytest --lockstep               # the same cases as pytest items (pip install pytest)"
    )
    out.print("  git log --oneline               # the freeze, then one seam per commit")
