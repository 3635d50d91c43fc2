"""The documentation: the site builds warning-free, its CLI reference is complete, and its
examples run.

An example is run when an HTML comment marks the fenced block right after it:

* ``<!-- test: file=PATH -->`` writes the block to PATH (relative to the page's folder);
* ``<!-- test: exit=N cwd=SUB -->`` runs the block with ``bash -e`` in that folder (or SUB
  below it) and expects exit status N (default 0).

Each page gets a fresh git repository in a temporary folder; its marked blocks run in the
order they appear, as a reader would type them, with the test's own ``lockstep`` and
``python`` first on ``PATH``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]

_MARKED = re.compile(
    r"<!-- test:(?P<attrs>[^>]*)-->\s*\n```[^\n]*\n(?P<body>.*?)^```\s*$", re.S | re.M
)


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    body: str
    file: str | None
    exit: int
    cwd: str


def examples(page: Path) -> list[Example]:
    """The marked blocks of one page, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _MARKED.finditer(text):
        attrs = dict(part.split("=", 1) for part in shlex.split(match["attrs"]))
        unknown = attrs.keys() - {"file", "exit", "cwd"}
        assert not unknown, f"{page}: unknown test attribute(s) {sorted(unknown)}"
        found.append(
            Example(
                page=page,
                line=text.count("\n", 0, match.start()) + 1,
                body=match["body"],
                file=attrs.get("file"),
                exit=int(attrs.get("exit", "0")),
                cwd=attrs.get("cwd", "."),
            )
        )
    return found


TESTED_PAGES = [page for page in PAGES if examples(page)]


def test_the_pages_that_teach_the_loop_have_examples_that_run() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in TESTED_PAGES}
    assert {"docs/tutorial.md", "docs/how-to/ledger.md", "README.md"} <= names


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCKSTEP_", "GIT_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HOME"] = str(home)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(
        GIT_AUTHOR_NAME="docs",
        GIT_AUTHOR_EMAIL="docs@lockstep.invalid",
        GIT_COMMITTER_NAME="docs",
        GIT_COMMITTER_EMAIL="docs@lockstep.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


@pytest.mark.parametrize(
    "page", TESTED_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in TESTED_PAGES]
)
def test_the_examples_of_a_page_run_as_written(page: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path)
    subprocess.run(
        ["git", "init", "-q", "-b", "main"], cwd=work, env=env, check=True, capture_output=True
    )
    subprocess.run(["git", "config", "commit.gpgsign", "false"], cwd=work, env=env, check=True)
    for example in examples(page):
        where = f"{page.relative_to(ROOT)}:{example.line}"
        if example.file is not None:
            target = work / example.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(example.body, encoding="utf-8")
            continue
        proc = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", example.body],
            cwd=work / example.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == example.exit, (
            f"{where}: exit {proc.returncode}, the page says {example.exit}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
        )


def _docs_tools_missing() -> list[str]:
    return [
        name
        for name in ("mkdocs", "material", "mkdocs_click")
        if importlib.util.find_spec(name) is None
    ]


def _require_docs_tools() -> None:
    missing = _docs_tools_missing()
    if not missing:
        return
    message = (
        f"the docs extra is not installed (missing {', '.join(missing)}): pip install -e '.[docs]'"
    )
    if os.environ.get("LOCKSTEP_REQUIRE_DOCS"):  # .ci/run installs the extra: never skip there
        pytest.fail(f"CI must build the docs, but {message}")
    pytest.skip(message)


def _commands() -> list[str]:
    from lockstep.cli import main

    assert isinstance(main, click.Group)
    with click.Context(main) as ctx:
        names = main.list_commands(ctx)
        return [n for n in names if not (c := main.get_command(ctx, n)) or not c.hidden]


def test_the_site_builds_strictly_and_its_cli_reference_names_every_command(
    tmp_path: Path,
) -> None:
    _require_docs_tools()
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    commands = _commands()
    assert len(commands) >= 15
    for name in commands:
        assert f'id="lockstep-{name}"' in page, f"the CLI reference lacks 'lockstep {name}'"
        assert f"lockstep {name}" in page
    # the generated tables are there, and say what the code says
    config = (site / "reference" / "configuration" / "index.html").read_text(encoding="utf-8")
    for key in ("stem_length", "fixtures", "float_tolerance", "max_output", "seam_limit"):
        assert f"<code>{key}</code>" in config
    environment = (site / "reference" / "environment" / "index.html").read_text(encoding="utf-8")
    assert "LOCKSTEP_CONFIG" in environment and "LOCKSTEP_FLUSH_EVERY" in environment
    pytest_page = (site / "reference" / "pytest" / "index.html").read_text(encoding="utf-8")
    assert "--lockstep-keep-pending" in pytest_page


def test_every_lockstep_variable_the_source_reads_is_documented() -> None:
    """The hook that builds the environment page fails on a variable it cannot describe;
    this checks the same without MkDocs, so it runs even without the docs extra."""
    spec = importlib.util.spec_from_file_location("lockstep_docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    names = hooks.environment_names()
    assert "LOCKSTEP_CONFIG" in names
    table = hooks.environment_table()
    for name in names:
        assert f"`{name}`" in table
    reference = hooks.config_reference()
    assert "### `[[ledger]]`" in reference and "`target`" in reference
