"""Running a ledger's ``driver``: what calls the target when recording without pytest."""

from __future__ import annotations

import inspect
import os
import runpy
import sys
import traceback
from pathlib import Path

from lockstep.config import Project
from lockstep.errors import LockstepError, TargetError
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.store import display_path
from lockstep.targets import resolve_callable, root_on_path


def _driver_failure(driver: str, exc: BaseException, root: Path) -> TargetError:
    frames = traceback.extract_tb(exc.__traceback__)
    where = driver
    for frame in reversed(frames):
        try:
            Path(frame.filename).resolve().relative_to(root.resolve())
        except ValueError:
            continue
        where = f"{display_path(Path(frame.filename), root)}:{frame.lineno}"
        break
    message = " ".join(str(exc).split())
    return TargetError(
        f"{where}: driver {driver!r} raised {type(exc).__name__}: {message}; nothing was written"
    )


def run_driver(project: Project, spec: LedgerSpec) -> None:
    """Run ``spec.driver`` in this process.

    ``pkg.mod:func`` is imported (after the wrap, so its imports bind the wrapper)
    and called; a ``.py`` path is run as ``__main__`` from the project root.
    """
    driver = spec.driver
    assert driver is not None
    key = project.where(spec, "driver")
    if driver.endswith(".py") or "/" in driver or ":" not in driver:
        script = project.resolve(driver, key=key.split(": ", 1)[1])
        if not script.is_file():
            raise TargetError(f"{key}: driver script {driver!r} not found")

        def call() -> None:
            old_argv = sys.argv
            sys.argv = [str(script)]
            try:
                runpy.run_path(str(script), run_name="__main__")
            finally:
                sys.argv = old_argv

    else:
        func = resolve_callable(driver, project.root, where=key)

        def call() -> None:
            result = func()
            if inspect.iscoroutine(result):
                import asyncio

                asyncio.run(result)

    cwd = os.getcwd()
    try:
        with root_on_path(project.root):
            os.chdir(project.root)
            call()
    except SystemExit as e:
        if e.code not in (None, 0):
            raise TargetError(
                f"{key}: driver {driver!r} exited with status {e.code}; nothing was written"
            ) from None
    except LockstepError:
        raise
    except Exception as e:
        raise _driver_failure(driver, e, project.root) from None
    finally:
        os.chdir(cwd)
