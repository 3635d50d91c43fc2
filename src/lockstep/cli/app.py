"""The root ``lockstep`` command group and what every command shares.

Errors: a :class:`~lockstep.errors.LockstepError` raised anywhere below becomes
one line on stderr and exit 2; click's own usage errors are exit 2 as well.

Start-up cost: ``lockstep --help`` and ``lockstep --version`` import click and
this module only.  Each command's module is imported when that command runs (or
its own ``--help`` is asked); the root help lists every command from
:data:`COMMANDS`, which holds each one's module and one-line summary, so listing
them loads none of them (``tests/test_cli_grammar.py`` checks that every summary is
the command's own).

Options every command takes (:class:`LockstepCommand` adds them): ``-q/--quiet``,
``-v/--verbose`` and ``--no-color`` (``NO_COLOR`` set to anything non-empty means
the same).
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import importlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, NamedTuple, NoReturn, TypeVar

import click

from lockstep import __version__
from lockstep.switches import RECORD_IO_OFF

if TYPE_CHECKING:  # rich loads when a command first prints through it (see cli.output)
    from rich.console import Console

    from lockstep.config import Project
    from lockstep.model import ReplayOptions

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


# --------------------------------------------------------------------------- shared settings


def _root_obj() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return {}
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    obj: dict[str, Any] = root.obj
    return obj


def verbosity(ctx: click.Context | None = None) -> int:
    """-1 with ``-q``, 0 by default, 1 with ``-v`` (``-vv`` is 2)."""
    obj = ctx.find_root().obj if ctx is not None else _root_obj()
    return int((obj or {}).get("verbosity", 0))


def no_color() -> bool:
    """``--no-color`` was given, or ``NO_COLOR`` is set (https://no-color.org)."""
    return bool(_root_obj().get("no_color")) or os.environ.get("NO_COLOR", "") != ""


def console() -> Console:
    """The stdout console (colour only on a terminal, and not with ``--no-color``/``NO_COLOR``;
    plain text in pipes and CI logs).

    Markup and emoji codes are off: every string it prints holds data (paths, case ids,
    refusals quoting ``[[secret]]``), which rich would otherwise read as tags (a path
    holding ``[/x]`` raised MarkupError) or rewrite (``[[secret]]`` became ``[]``).
    Styles come from ``rich.text.Text`` objects only."""
    return _console_class()(
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
        width=_width(sys.stdout),
        color_system=None if no_color() else "auto",
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
        color_system=None if no_color() else "auto",
    )


def fail_usage(message: str) -> NoReturn:
    """Print one line and exit 2."""
    click.echo(f"lockstep: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def deprecated(old: str, new: str) -> None:
    """One line on stderr: ``old`` still works, ``new`` is the spelling to use."""
    if verbosity() >= 0:
        click.echo(f"lockstep: note: {old} is deprecated; use {new}", err=True)


# --------------------------------------------------------------------------- options of every command


def _store(key: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        obj = ctx.find_root().ensure_object(dict)
        if key == "verbosity":
            obj[key] = obj.get(key, 0) + (-value if param.name == "quiet" else value)
        elif value:
            obj[key] = value

    return callback


def common_options() -> list[click.Option]:
    """``-q``, ``-v`` and ``--no-color``: every command takes them (after its name)."""
    return [
        click.Option(
            ["-q", "--quiet"],
            count=True,
            expose_value=False,
            callback=_store("verbosity"),
            help="Less output: no progress bars; replay prints each failing case on one line; "
            "deprecation notes are not shown.",
        ),
        click.Option(
            ["-v", "--verbose"],
            count=True,
            expose_value=False,
            callback=_store("verbosity"),
            help="More output: replay lists passing cases too, and prints the warnings the "
            "replayed code raises; every command ends with the configuration it used and its "
            "run time (on stderr).",
        ),
        click.Option(
            ["--no-color"],
            is_flag=True,
            expose_value=False,
            callback=_store("no_color"),
            help="No colour or styles, even on a terminal (as NO_COLOR=1 does).",
        ),
    ]


class LockstepCommand(click.Command):
    """A command with the options every lockstep command takes (see :func:`common_options`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(common_options())


# --------------------------------------------------------------------------- the group


class LazyCommand(NamedTuple):
    """Where a command is defined, and its one-line summary for the root ``--help``."""

    module: str
    summary: str


COMMANDS: Final[dict[str, LazyCommand]] = {
    "accept": LazyCommand(
        "lockstep.cli.accept_command",
        "Review the drifts 'lockstep replay --keep-pending' kept, and accept or reject them.",
    ),
    "brief": LazyCommand(
        "lockstep.cli.gate_commands",
        "Print the constraints to hand a coding assistant for ONE seam.",
    ),
    "budget": LazyCommand(
        "lockstep.cli.gate_commands",
        "Weigh the changed lines against the fan-in of the module under change.",
    ),
    "demo": LazyCommand(
        "lockstep.cli.demo_command",
        "Freeze a bundled messy project, refactor it safely (green), then unsafely (red).",
    ),
    "diff": LazyCommand(
        "lockstep.cli.oracle_commands",
        "Show one case's drift: the recorded document against today's.",
    ),
    "guard": LazyCommand(
        "lockstep.cli.gate_commands",
        "Fail when one change touches both oracle files and production code.",
    ),
    "init": LazyCommand(
        "lockstep.cli.init_command",
        "Survey this repository and write a commented lockstep.toml that the printed commands "
        "record and replay.",
    ),
    "mine": LazyCommand(
        "lockstep.cli.mine_commands",
        "Grow oracle NAME with generated inputs that reach new code or new outcomes.",
    ),
    "pending": LazyCommand(
        "lockstep.cli.oracle_commands",
        "List the drifts 'lockstep replay --keep-pending' kept, oracle by oracle.",
    ),
    "probe": LazyCommand(
        "lockstep.cli.probe_command",
        "Run a command (or every case of a pins oracle) N times; count distinct outputs.",
    ),
    "record": LazyCommand(
        "lockstep.cli.oracle_commands",
        "Freeze today's behaviour into oracle files (all oracles, or NAMES).",
    ),
    "replay": LazyCommand(
        "lockstep.cli.oracle_commands",
        "Re-run every recorded case and compare: the gate (exit 1 unless all pass).",
    ),
    "report": LazyCommand(
        "lockstep.cli.report_command",
        "Replay every oracle (or NAMES) and write one HTML page of what moved.",
    ),
    "review": LazyCommand(
        "lockstep.cli.gate_commands",
        "Print the decision table for a change and exit 1 if any row fails.",
    ),
    "scan": LazyCommand(
        "lockstep.cli.oracle_commands",
        "Check oracle files and fixtures for secrets (default: the oracle folder and every "
        "configured fixture and cases file); exit 1 listing FILE:LINE: FIELD: DETECTOR.",
    ),
    "status": LazyCommand(
        "lockstep.cli.oracle_commands",
        "List the oracles, how many cases each holds, and whether each file is present and "
        "readable.",
    ),
    "step": LazyCommand(
        "lockstep.cli.gate_commands",
        "One transformation, judged: probe pinned cases, replay every oracle, check the budget.",
    ),
    "strength": LazyCommand(
        "lockstep.cli.strength_command",
        "How much the gate would catch: coverage by case, and with --mutants a mutation score.",
    ),
}
"""Every command: the module that defines it (imported only when the command runs or shows
its own help) and its summary, the first paragraph of its docstring."""

COMMAND_MODULES: Final[dict[str, str]] = {name: c.module for name, c in COMMANDS.items()}


@contextmanager
def _record_io_off() -> Iterator[None]:
    """``@record_io`` does not record while a command runs (restored after: in-process tests)."""
    before = os.environ.get(RECORD_IO_OFF)
    os.environ[RECORD_IO_OFF] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RECORD_IO_OFF, None)
        else:
            os.environ[RECORD_IO_OFF] = before


class LockstepGroup(click.Group):
    """A click group that loads commands lazily and turns user errors into one line, exit 2.

    Bare ``lockstep`` prints the help and exits 0, whatever click's version does with a
    group called without a command.
    """

    command_class = LockstepCommand

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name].module)  # its decorators register it
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS`, without importing any command's module."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # a stand-in command shortens the summary as click shortens a loaded one's help
            shown = self.commands.get(name) or click.Command(name, help=COMMANDS[name].summary)
            rows.append((name, shown.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(EXIT_OK)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from lockstep.cancel import Cancelled, cancelled_by, reset
        from lockstep.cli.signals import (
            EXIT_INTERRUPTED,
            EXIT_TERMINATED,
            Terminated,
            cancel_on_signals,
        )

        started = time.monotonic()
        reset()
        _replace_what_cannot_be_written()
        try:
            with _record_io_off(), cancel_on_signals():
                return super().invoke(ctx)
        except _rejected() as e:
            click.echo(f"lockstep: refused: {_masked(ctx, str(e))}", err=True)
            sys.exit(EXIT_FAIL)
        except _lockstep_error() as e:
            fail_usage(_masked(ctx, str(e)))
        except (KeyboardInterrupt, Terminated, Cancelled) as e:
            interrupted = isinstance(e, KeyboardInterrupt) or (
                isinstance(e, Cancelled) and cancelled_by() == signal.SIGINT
            )
            word = "interrupted" if interrupted else "terminated"
            click.echo(f"lockstep: {word}; oracle files are unchanged", err=True)
            sys.exit(EXIT_INTERRUPTED if interrupted else EXIT_TERMINATED)
        finally:
            if verbosity(ctx) > 0:
                _say_verbose_trailer(ctx, time.monotonic() - started)


def _masked(ctx: click.Context, message: str) -> str:
    """An error as a person may read it: it can quote recorded behaviour (the two outputs
    of a case that varies, a value in a bad file), so secrets are masked as in a drift."""
    from lockstep.config import Project
    from lockstep.secrets.policy import display_mask

    cached = ctx.obj.get("project") if isinstance(ctx.obj, dict) else None
    return display_mask(cached if isinstance(cached, Project) else None)(message)


def _say_verbose_trailer(ctx: click.Context, seconds: float) -> None:
    project = (ctx.obj or {}).get("project")
    where = "no configuration loaded"
    if project is not None:
        where = f"configuration {project.config_path}"
    click.echo(f"lockstep: {where}; {seconds:.2f}s", err=True)


def _rejected() -> type[Exception]:
    """:class:`lockstep.errors.Rejected`, imported when a command has run."""
    from lockstep.errors import Rejected as cls

    return cls


def _lockstep_error() -> type[Exception]:
    """:class:`lockstep.errors.LockstepError`, imported when a command has run."""
    from lockstep.errors import LockstepError as cls

    return cls


@click.group(cls=LockstepGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="lockstep")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),  # a str: pathlib loads only when a command runs
    default=None,
    help="Config file (default: nearest lockstep.toml or pyproject.toml with [tool.lockstep]).",
)
@click.pass_context
def main(ctx: click.Context, config_path: str | None) -> None:
    """Freeze what legacy code does today; accept a refactor only while it replays exactly.

    \b
    The loop: probe → record → change one thing → replay → review → strength.
    Exit codes: 0 green, 1 drift or rejection, 2 usage/config/corrupt-file error.
    Every command takes -q/--quiet, -v/--verbose and --no-color (NO_COLOR=1 too).
    Revisions: REV, or a range BASE..HEAD or BASE...HEAD (see 'lockstep review -h').
    """
    ctx.ensure_object(dict)
    if config_path is not None:
        from pathlib import Path

        ctx.obj["config_path"] = Path(config_path)
    else:
        ctx.obj["config_path"] = None


_PLAINER: Final = {"—": "-", "…": "...", "→": "->", "×": "x", "·": "-", "❌": "x", "✅": "ok"}
"""lockstep's own marks, where the output's encoding lacks them."""
_PLAIN_ERRORS: Final = "lockstep-plain"


def _plain_or_escaped(error: UnicodeError) -> tuple[str, int]:
    """An output encoding error's characters: lockstep's marks spelled in ASCII, any other
    escaped (``\\xb7``), as stderr writes what its encoding lacks."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(_PLAINER.get(c) or ascii(c)[1:-1] for c in text), error.end


def _replace_what_cannot_be_written() -> None:
    """Output to a stream whose encoding lacks a character (``PYTHONIOENCODING=ascii``, a
    Latin-1 terminal) is written plainer, never fails: the summary's ``·`` and a drift's
    recorded text ended the replay of unchanged code with a traceback and exit 1."""
    codecs.register_error(_PLAIN_ERRORS, _plain_or_escaped)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") in (
            "strict",
            "backslashreplace",
        ):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors=_PLAIN_ERRORS)


def project_from(ctx: click.Context) -> Project:
    """Load the project once per invocation (cached on the click context)."""
    from lockstep.config import Project, load_project

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
    from lockstep.model import ReplayOptions, Shard

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


JOBS_HELP: Final = "Worker processes (0 = one per core)."
REPLAY_JOBS_DEFAULT: Final = "[lockstep] jobs, else pins one per core, other kinds 1"
"""What ``--jobs`` is when a command that replays oracles (replay, report, review, step) is
not given one (``oracles.default_jobs``)."""


def jobs_option_showing(default: str | None) -> Callable[[F], F]:
    """``--jobs``, the same option on every command that has one; its help shows ``default``,
    what happens without it, in words (``None``: one worker)."""

    def decorate(func: F) -> F:
        return click.option(
            "--jobs",
            "-j",
            type=int,
            default=1 if default is None else None,
            show_default=True if default is None else default,
            help=JOBS_HELP,
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


def time_limit_option(default: str | None, help_text: str) -> Callable[[F], F]:
    """``--time-limit DURATION`` (60s, 2m, 1.5h, 90), and ``--budget``, its deprecated and
    hidden former name: a *budget* is the change budget of ``lockstep budget``."""

    def decorate(func: F) -> F:
        func = click.option(
            "--budget",
            "old_time_limit",
            default=None,
            hidden=True,
            help="Deprecated spelling of --time-limit.",
        )(func)
        return click.option(
            "--time-limit",
            "time_limit",
            default=default,
            show_default=default is not None,
            metavar="DURATION",
            help=help_text,
        )(func)

    return decorate


def chosen_time_limit(time_limit: str | None, old: str | None) -> str | None:
    """``--time-limit``, or the deprecated ``--budget`` (with its one-line note)."""
    if old is None:
        return time_limit
    deprecated("--budget DURATION", "--time-limit DURATION")
    return old


def json_option(func: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help='Print one JSON document instead (fields below; "schema" numbers their layout).',
    )(func)
