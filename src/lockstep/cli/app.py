"""The root ``lockstep`` command group and what every command shares.

Errors: a :class:`~lockstep.errors.LockstepError` raised anywhere below becomes
one line on stderr and exit 2; click's own usage errors are exit 2 as well.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from lockstep import __version__
from lockstep.config import Project, load_project
from lockstep.errors import LockstepError, Rejected
from lockstep.model import ReplayOptions, Shard

if TYPE_CHECKING:  # rich loads when a command first prints through it (see cli.output)
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


PIPE_WIDTH = 160
"""Width of tables written to a pipe or CI log, where there is no terminal to measure:
wide enough that paths and evidence are not cut to an ellipsis."""


def _width(stream: object) -> int | None:
    if "COLUMNS" in os.environ or getattr(stream, "isatty", lambda: False)():
        return None
    return PIPE_WIDTH


def console() -> Console:
    """The stdout console (colour only on a terminal; plain text in pipes and CI logs).

    Markup and emoji codes are off: every string it prints holds data (paths, case ids,
    refusals quoting ``[[secret]]``), which rich would otherwise read as tags (a path
    holding ``[/x]`` raised MarkupError) or rewrite (``[[secret]]`` became ``[]``).
    Styles come from ``rich.text.Text`` objects only."""
    return _console_class()(
        highlight=False, markup=False, emoji=False, soft_wrap=True, width=_width(sys.stdout)
    )


@functools.cache
def _console_class() -> type[Console]:
    """rich's Console, except that a closed stdout (``lockstep replay --report r.html | head``)
    does not end the command: rich would exit 1 at once, before the report is written and
    whatever the verdict; here the rest of the output goes nowhere and the command finishes."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            stdout_closed()
            self.quiet = True

    return _Console


def stdout_closed() -> None:
    """The reader of stdout went away (``| head``): send the rest of the output to
    ``/dev/null``, so the command still finishes its work (a report file, say) and exits
    with its own verdict, and Python's final flush does not fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def err_console() -> Console:
    """The stderr console; no markup nor emoji codes, as :func:`console`."""
    from rich.console import Console

    return Console(
        stderr=True,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
        width=_width(sys.stderr),
    )


def fail_usage(message: str) -> NoReturn:
    """Print one line and exit 2."""
    click.echo(f"lockstep: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


COMMAND_MODULES: dict[str, str] = {
    "record": "lockstep.cli.oracle_commands",
    "replay": "lockstep.cli.oracle_commands",
    "diff": "lockstep.cli.oracle_commands",
    "status": "lockstep.cli.oracle_commands",
    "report": "lockstep.cli.report_command",
    "scan": "lockstep.cli.oracle_commands",
    "probe": "lockstep.cli.probe_command",
    "accept": "lockstep.cli.accept_command",
    "guard": "lockstep.cli.gate_commands",
    "budget": "lockstep.cli.gate_commands",
    "review": "lockstep.cli.gate_commands",
    "step": "lockstep.cli.gate_commands",
    "brief": "lockstep.cli.gate_commands",
    "demo": "lockstep.cli.demo_command",
    "init": "lockstep.cli.init_command",
    "mine": "lockstep.cli.mine_commands",
    "strength": "lockstep.cli.strength_command",
}
"""Which module defines each command.  Modules are imported only when their command
runs (or for ``--help``), so ``lockstep replay`` never pays for the gates' imports."""


class LockstepGroup(click.Group):
    """A click group that loads commands lazily and turns user errors into one line, exit 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(COMMAND_MODULES[cmd_name])  # its decorators register it
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Rejected as e:
            click.echo(f"lockstep: refused: {e}", err=True)
            sys.exit(EXIT_FAIL)
        except LockstepError as e:
            fail_usage(str(e))
        except KeyboardInterrupt:
            click.echo("lockstep: interrupted; oracle files are unchanged", err=True)
            sys.exit(130)


@click.group(cls=LockstepGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lockstep")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Config file (default: nearest lockstep.toml or pyproject.toml with [tool.lockstep]).",
)
@click.pass_context
def main(ctx: click.Context, config_path: Path | None) -> None:
    """Freeze what legacy code does today; accept a refactor only while it replays exactly.

    \b
    The loop: probe → record → change one thing → replay → review → strength.
    Exit codes: 0 green, 1 drift or rejection, 2 usage/config/corrupt-file error.
    """
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path


def project_from(ctx: click.Context) -> Project:
    """Load the project once per invocation (cached on the click context)."""
    root_ctx = ctx.find_root()
    cached = root_ctx.obj.get("project") if root_ctx.obj else None
    if isinstance(cached, Project):
        return cached
    config_path = root_ctx.obj.get("config_path") if root_ctx.obj else None
    project = load_project(config_path=config_path)
    root_ctx.obj["project"] = project
    return project


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def replay_options(jobs: int | None, shard: str | None, *, default: int = 1) -> ReplayOptions:
    """Build :class:`ReplayOptions` from ``--jobs`` and ``--shard``; bad values are usage errors."""
    parsed: Shard | None = None
    if shard is not None:
        try:
            parsed = Shard.parse(shard)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--shard") from None
    if jobs is not None and jobs < 0:
        raise click.BadParameter("must be 0 (one per core) or more", param_hint="--jobs")
    count = default if jobs is None else (default_jobs() if jobs == 0 else jobs)
    return ReplayOptions(jobs=count, shard=parsed)


def jobs_option_showing(default: str | None) -> Callable[[F], F]:
    """``--jobs``; its help shows ``default``, what happens without it (``None``: one worker)."""

    def decorate(func: F) -> F:
        return click.option(
            "--jobs",
            "-j",
            type=int,
            default=1 if default is None else None,
            show_default=True if default is None else default,
            help="Worker processes (0 = one per core).",
        )(func)

    return decorate


jobs_option = jobs_option_showing(None)


def shard_option(func: F) -> F:
    return click.option(
        "--shard",
        default=None,
        metavar="K/N",
        help="Run only shard K of N (deterministic by case id), for CI matrices.",
    )(func)
