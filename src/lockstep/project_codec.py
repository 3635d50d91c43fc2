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
from collections.abc import Callable, Iterator

from lockstep import canon, suite_modules
from lockstep.config import Project
from lockstep.errors import ConfigError
from lockstep.suite_files import suite_paths
from lockstep.surface import class_modules
from lockstep.tables import OracleSpec
from lockstep.targets import root_on_path


def apply(project: Project, *targets: str, importing_tests: bool = True) -> None:
    """Let the targets' own packages, the listed test modules and ``freeze_classes`` freeze
    by structure, and import the configured encoder modules (a module that fails to import
    is a configuration error).  ``importing_tests``: import the listed test modules too
    (where rows are replayed; a recording's pytest run imports them as it collects)."""
    canon.allow_callables_from(*(t.partition(":")[0] for t in targets), *_ledger_packages(project))
    suite_modules.allow(project, importing=importing_tests)
    modules, surfaces = _target_modules(project, targets)
    canon.allow_imports_of(*modules)
    if surfaces:  # read only if a value names a module the targets' do not cover
        canon.allow_imports_found_by(_ClassModules(project.root, project, surfaces))
    settings = project.config.lockstep
    canon.allow_classes_matching(*settings.freeze_classes)
    for index, name in enumerate(settings.encoders):
        with root_on_path(project.root):
            try:
                importlib.import_module(name)
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # a sys.exit() at import too: one line, exit 2
                raise ConfigError(
                    f"{project.config_name}: lockstep.encoders[{index}]: cannot import "
                    f"{name!r}: {type(e).__name__}: {e}"
                ) from None


def _ledger_packages(project: Project) -> set[str]:
    """The top-level package of every configured ledger's target: recording under a suite
    wraps every one of them, so each lets ``$fn`` name what it defines for every ledger
    recorded in that run (jsonpatch's objects hold ``jsonpointer.JsonPointer``, a class of
    another configured package); verification and replay must allow the same, or a row,
    or a signature's default, frozen by name would not thaw (a red replay of unchanged
    code).  Configuration is the user's: no oracle file widens this."""
    found: set[str] = set()
    for _, module in _ledger_targets(project, lambda _, m: m.split(".")[0] not in found):
        found.add(module.split(".")[0])
    return found


def _target_modules(project: Project, targets: tuple[str, ...]) -> tuple[set[str], tuple[str, ...]]:
    """The modules of every ledger target the project configures in the targets' packages:
    replay imports each of them for its own ledger, so a value naming a class of one may
    import it (:func:`lockstep.canon.allow_imports_of`) in a fork that replays another;
    and the configured package surfaces among those packages (:func:`_class_modules`)."""
    packages = {t.partition(":")[0].split(".")[0] for t in targets}
    modules: set[str] = set()
    surfaces: set[str] = set()

    def adds(spec: OracleSpec, module: str) -> bool:
        if module.split(".")[0] not in packages:
            return False
        package = getattr(spec, "package", None)
        return module not in modules or (package in packages and package not in surfaces)

    for spec, module in _ledger_targets(project, adds):
        modules.add(module)
        package = getattr(spec, "package", None)
        if isinstance(package, str) and package in packages:
            surfaces.add(package)
    return modules, tuple(sorted(surfaces))


def _ledger_targets(
    project: Project, adds: Callable[[OracleSpec, str], bool]
) -> Iterator[tuple[OracleSpec, str]]:
    """Each configured ledger (a package's member only once recorded: one not recorded
    yet is not replayed) whose target's module ``adds`` something, with that module.

    Whether a member was recorded is its file in the oracle folder: asked only of a
    member whose module would add something, so a surface of 64 members in 5 modules
    looks for a handful of files, not 64 -- each verifying fork applies this first."""
    is_oracle = project.oracle_test()
    for spec in project.all_oracles():
        target = getattr(spec, "target", None)
        if spec.kind != "ledger" or not isinstance(target, str):
            continue
        module = target.partition(":")[0]
        if adds(spec, module) and is_oracle(spec.name):
            yield spec, module


class _ClassModules:
    """:func:`_class_modules` as a finder equal to another of the same root and surfaces
    (replay applies the codec once per ledger: the finder is kept once)."""

    def __init__(self, root: object, project: Project, surfaces: tuple[str, ...]) -> None:
        self.key = (root, surfaces)
        self.project = project

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ClassModules) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __call__(self) -> set[str]:
        return _class_modules(self.project, self.key[1])


def _class_modules(project: Project, surfaces: tuple[str, ...]) -> set[str]:
    """Each module of the configured package surfaces that defines a class and that the
    package or its suite imports (:func:`lockstep.surface.class_modules`): code that runs
    anyway, read from the working tree as the surface is.  A module nothing imports (one a
    pull request planted), another package's, a test module, is never imported because
    data names it."""
    suite = suite_paths(project.root)
    modules: set[str] = set()
    for package in surfaces:
        where = f"ledger package {package!r}"
        modules |= class_modules(package, project.root, where=where, importers=suite)
    return modules
