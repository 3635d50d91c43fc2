"""Warming a recording session's verifying interpreters while the tests run.

A ``pytest --lockstep-record`` session starts its verifying interpreter at configure and
has each package of the recorded targets imported in it ahead
(:meth:`~lockstep.oracles.verify_session.VerifySession.warm`), so that start overlaps the
tests.  For a package that builds sets, the interpreters of the other hash seeds are
warmed too: rows whose outcome holds texts in a set's possible order are replayed under
every seed (:mod:`.seed_suspects`), and those four interpreters, started at the session's
end, were most of what that cost (semver: four more starts, each importing the package).
They start one after another, each once the one before has done its imports
(:meth:`~lockstep.oracles.verify_session.VerifySession.warm_in_turn`): started together
while pytest configured and collected, they took both cores from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lockstep.oracles.ledger.seed_suspects import package_builds_sets
from lockstep.oracles.verify import MORE_SEEDS, SECOND_SEED, warming_argvs
from lockstep.oracles.verify_session import verifying_seed
from lockstep.targets import split_target

if TYPE_CHECKING:
    from lockstep.config import Project
    from lockstep.oracles.ledger.spec import LedgerSpec
    from lockstep.oracles.verify_session import VerifySession


def warm_session(session: VerifySession, project: Project, specs: Sequence[LedgerSpec]) -> None:
    """Start the verifying interpreter with each package of ``specs`` imported in it; for a
    package that builds sets (its modules imported by now: the targets were wrapped), queue
    the other seeds' interpreters, to start in turn as the run calls
    :meth:`~lockstep.oracles.verify_session.VerifySession.pump`."""
    argvs = warming_argvs(project, specs)
    session.warm(verifying_seed(), argvs)
    modules = (split_target(spec.target, where=spec.name)[0] for spec in specs)
    if any(package_builds_sets(module) for module in modules):
        session.warm_in_turn((SECOND_SEED, *MORE_SEEDS), argvs)


__all__ = ["warm_session"]
