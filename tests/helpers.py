"""Shared helpers for tests: run the CLI (as a process or in this one), lay out projects,
drive real git repositories."""

from __future__ import annotations

import contextlib
import importlib
import linecache
import os
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import lockstep

if TYPE_CHECKING:
    from lockstep.oracles.ledger.format import LedgerRow


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_cli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    timeout: float = 120,
) -> Result:
    """Run ``python -m lockstep ARGS`` as a user would, in ``cwd``."""
    full_env = dict(os.environ)
    full_env.pop("LOCKSTEP_CONFIG", None)
    full_env["COLUMNS"] = "200"
    full_env["NO_COLOR"] = "1"
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        cwd=cwd,
        env=full_env,
        input=input if input is not None else b"",
        capture_output=True,
        timeout=timeout,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


_IN_PROCESS_ENV: dict[str, str | None] = {
    "LOCKSTEP_CONFIG": None,
    "COLUMNS": "200",
    "NO_COLOR": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
"""What :func:`run_cli` sets in the child's environment, set here for the call's duration."""


def invoke_cli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
) -> Result:
    """Run ``lockstep ARGS`` in ``cwd`` inside this process (click's CliRunner).

    The same :class:`Result` as :func:`run_cli` (exit code, stdout and stderr kept
    apart) without starting an interpreter, for a command whose outcome does not
    depend on being a process of its own: usage, configuration and corrupt-file
    errors, and the quick record / replay / status / gate runs. Keep :func:`run_cli`
    for what *is* about the process: programs that pins and the probe run, worker
    pools (``--jobs``), ``PYTHONHASHSEED``, timeouts and killed process groups,
    recording at interpreter exit, the end-to-end demo.

    The project's modules the command imports are forgotten afterwards (and no
    bytecode is written), so a later call sees edited files as a new process would.
    An exception the CLI does not turn into an exit code propagates: the test errors
    with its traceback rather than seeing "exit 1".
    """
    from click.testing import CliRunner

    from lockstep.cli import main

    runner = CliRunner(env={**_IN_PROCESS_ENV, **(env or {})}, catch_exceptions=False)
    with _isolated_process_state(cwd), contextlib.chdir(cwd):
        result = runner.invoke(
            main,
            list(args),
            input=input if input is not None else b"",
            prog_name="python -m lockstep",  # what run_cli's usage lines say
        )
    return Result(result.exit_code, result.stdout, result.stderr)


_SHARED_CODE = tuple(
    os.path.realpath(p)
    for p in {
        *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
        os.path.dirname(lockstep.__file__),
    }
)
"""Modules loaded from here (the standard library, installed packages, lockstep itself)
stay imported between calls of :func:`invoke_cli`; any other module is the project's."""


def _locations(module: ModuleType) -> list[str]:
    file = getattr(module, "__file__", None)
    return [file] if file else [str(p) for p in getattr(module, "__path__", [])]


def _is_shared(module: ModuleType) -> bool:
    return all(os.path.realpath(p).startswith(_SHARED_CODE) for p in _locations(module))


def _shadowed_names(cwd: Path) -> list[str]:
    """Top-level modules of the project in ``cwd`` that this process already imported
    from elsewhere (a test helper of the same name, say): the CLI would get those."""
    found = []
    for base in (cwd, cwd / "src"):
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            if entry.suffix == ".py" and entry.is_file():
                name = entry.stem
            elif (entry / "__init__.py").is_file():
                name = entry.name
            else:
                continue
            module = sys.modules.get(name)
            if module is not None and not all(
                Path(p).resolve().is_relative_to(base.resolve()) for p in _locations(module)
            ):
                found.append(f"{name} ({', '.join(_locations(module)) or 'built in'})")
    return found


@contextlib.contextmanager
def _isolated_process_state(cwd: Path) -> Iterator[None]:
    shadowed = _shadowed_names(cwd)
    assert not shadowed, (
        f"the project's {', '.join(shadowed)} is already imported from elsewhere: "
        "in this process the command would use that one; rename it or use run_cli"
    )
    modules = set(sys.modules)
    path = list(sys.path)
    environ = dict(os.environ)
    dont_write_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    importlib.invalidate_caches()
    try:
        yield
    finally:
        for name in set(sys.modules) - modules:
            module = sys.modules.get(name)
            if module is not None and not _is_shared(module):
                del sys.modules[name]
        sys.path[:] = path
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        for key, value in environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
        sys.dont_write_bytecode = dont_write_bytecode
        importlib.invalidate_caches()
        linecache.clearcache()


def recording_errors(cwd: Path) -> tuple[Result, list[str]]:
    """``pytest --lockstep-record`` over ``tests`` in ``cwd`` (lockstep's plugin only), and
    the ``lockstep: error:`` lines it printed."""
    result = run_pytest(
        "-q",
        "-p",
        "no:randomly",
        "tests",
        "--lockstep-record",
        cwd=cwd,
        plugins=("lockstep.pytest.plugin",),
    )
    errors = [line for line in result.stdout.splitlines() if line.startswith("lockstep: error:")]
    return result, errors


def run_pytest(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    plugins: tuple[str, ...] | None = None,
) -> Result:
    """Run a real pytest subprocess in an example project.

    With ``plugins``, only those are loaded (``-p``), as in a project that pins its
    plugins: autoloading every installed one costs about a second of CPU per
    process (three under ``-n 2``) and proves nothing the test asks about.
    """
    full_env = dict(os.environ)
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env.pop("PYTEST_XDIST_WORKER", None)
    # the outer test's own variable, which the inner run would remove at its end: a
    # recording's verifying interpreter would see its environment change and start again
    full_env.pop("PYTEST_CURRENT_TEST", None)
    chosen: list[str] = []
    if plugins is not None:
        full_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        chosen = [arg for plugin in plugins for arg in ("-p", plugin)]
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *chosen, *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files under ``root``; str contents are dedented."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


def package_project(root: Path, package: str, source: str, tests: str) -> Path:
    """A project under ``root``: package ``package`` (one module, ``source``) in a src
    layout, one test file (``tests``), and a configuration with its package ledger."""
    write_files(
        root,
        {
            "lockstep.toml": f'[[ledger]]\npackage = "{package}"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            f"src/{package}/__init__.py": source,
            f"tests/test_{package}.py": tests,
        },
    )
    return root


def replayed_after(root: Path, rel: str, old: str, new: str) -> Result:
    """``lockstep replay`` in ``root`` once ``old`` reads ``new`` in the file ``rel`` (a
    one-line change to the code the ledgers were recorded from)."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{rel} holds no {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return run_cli("replay", cwd=root)


@contextlib.contextmanager
def project_module(root: Path, name: str, source: str) -> Iterator[ModuleType]:
    """Module ``name`` written under ``root`` and imported from there for the block, its
    classes the project's own (they freeze by structure); gone from ``sys.modules`` and
    ``sys.path`` after."""
    from lockstep.canon.callables import callables_from

    write_files(root, {f"{name}.py": source})
    sys.path.insert(0, str(root))
    sys.modules.pop(name, None)
    try:
        with callables_from(name):
            yield importlib.import_module(name)
    finally:
        sys.modules.pop(name, None)
        sys.path.remove(str(root))


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: to assert that nothing on disk changed."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".git" not in p.parts
    }


def copy_project(source: Path, root: Path) -> Path:
    """Copy every file of ``source`` (as :func:`snapshot_tree` sees them) into ``root``."""
    for rel, data in snapshot_tree(source).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def pytest_in(
    root: Path, *args: str, xdist: bool = False, env: dict[str, str] | None = None
) -> Result:
    """A real pytest run in an example project with only lockstep's plugin (and xdist) loaded:
    entry-point autoloading of every installed plugin costs seconds per run and proves nothing."""
    plugins = ("lockstep.pytest.plugin", *(("xdist.plugin",) if xdist else ()))
    return run_pytest(*args, cwd=root, env=env, plugins=plugins)


def rows_of(path: Path) -> list[LedgerRow]:
    """Every row of the ledger file at ``path``, in file order."""
    from lockstep.oracles.ledger.kind import iter_rows, read_header

    header = read_header(path)
    return [row for _, row in iter_rows(path, header)]


def recorded(root: Path, files: dict[str, str]) -> Result:
    """``files`` written under ``root``, then ``pytest --lockstep-record -q tests`` there,
    which must pass: the run, for its summary."""
    write_files(root, files)
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    return result


def red_after_change(root: Path, source: str, old: str, new: str, *names: str) -> Result:
    """``lockstep replay`` (of ``names``, else every oracle) after ``old`` is replaced by
    ``new`` in the file ``source`` under ``root``: it must be red (exit 1)."""
    path = root / source
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not once in {source}"
    path.write_text(text.replace(old, new))
    red = run_cli("replay", *names, cwd=root)
    assert red.code == 1, red.output
    return red


class GitRepo:
    """A real git repository in a temp folder, with helpers to commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "dev@example.invalid")
        self.git("config", "user.name", "Dev")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> str:
        if files:
            write_files(self.root, files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def refused_in_one_line(document: object) -> str:
    """The message of the :class:`~lockstep.errors.CanonError` thawing ``{"v": document}``
    raises, checked to be one line (a hostile form must never print a traceback)."""
    import pytest

    from lockstep import canon
    from lockstep.errors import CanonError

    with pytest.raises(CanonError) as caught:
        canon.decode({"v": document})
    message = str(caught.value)
    assert "\n" not in message, message
    return message
