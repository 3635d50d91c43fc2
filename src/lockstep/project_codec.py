"""What a project adds to the codec before any of its values is frozen or thawed.

Record (under pytest or a driver), the interpreter that verifies new rows and replay
must agree on which classes freeze by structure and which encoders exist; otherwise a
row frozen at record time would not thaw at replay (the encoder registered in a
``conftest.py`` that the verifying interpreter never saw).  Each of them calls
:func:`apply` with the project and its targets, so the one place a user configures this
is ``[lockstep] freeze_classes`` and ``[lockstep] encoders``.
"""

from __future__ import annotations

import importlib

from lockstep import canon
from lockstep.config import Project
from lockstep.errors import ConfigError
from lockstep.targets import root_on_path


def apply(project: Project, *targets: str) -> None:
    """Let the targets' own packages and ``freeze_classes`` freeze by structure, and import
    the configured encoder modules (a module that fails to import is a configuration error)."""
    canon.allow_callables_from(*(t.partition(":")[0] for t in targets))
    settings = project.config.lockstep
    canon.allow_classes_matching(*settings.freeze_classes)
    for index, name in enumerate(settings.encoders):
        with root_on_path(project.root):
            try:
                importlib.import_module(name)
            except Exception as e:
                raise ConfigError(
                    f"{project.config_name}: lockstep.encoders[{index}]: cannot import "
                    f"{name!r}: {type(e).__name__}: {e}"
                ) from None
