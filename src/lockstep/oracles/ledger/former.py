"""A ledger of a package member today's sources no longer have: an error on each row.

``Project.former`` names them (a member renamed or removed, its ledger file still in the
oracle folder, or its name still in the list of members recorded beyond the surface).
Their rows are read from the file and never replayed: the name came from the oracle
folder, so nothing is imported or called by it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

from lockstep.model import Outcome, Status
from lockstep.oracles.ledger.file import iter_rows, read_header
from lockstep.oracles.ledger.format import SUFFIX
from lockstep.store import beyond_surface, display_path

if TYPE_CHECKING:
    from lockstep.config import Project
    from lockstep.oracles.ledger.spec import LedgerSpec

FORMER: Final = "(former member)"
"""The case id of the one outcome of a former member whose ledger file is gone."""


def former_member(
    project: Project, spec: LedgerSpec, selects: Callable[[str], bool] | None
) -> Iterator[Outcome]:
    """A ledger of a member today's sources no longer have (``Project.former``): an ERROR
    on each of its rows, read from the file and never replayed (its name came from the
    oracle folder: nothing is imported or called by it); one ERROR when only the list of
    recorded members still names it."""
    path = project.oracle_dir / f"{spec.name}{SUFFIX}"
    member = spec.name.removeprefix(f"{_package_ledger(project, spec)}.")
    shown = display_path(path, project.root)
    if not os.path.lexists(path):
        if selects is None or selects(FORMER):
            note = (
                f"package {spec.package!r} no longer has {member!r}, and its ledger {shown} "
                f"is gone, but {beyond_surface.FILE_NAME} still lists it as recorded: record the suite "
                "again (it lists what is there), or put the ledger back"
            )
            yield Outcome(spec.name, FORMER, Status.ERROR, note=note)
        return
    header = read_header(path)
    note = (
        f"package {spec.package!r} no longer has {member!r} (renamed or removed?), whose "
        f"{header.rows} recorded row(s) are in {shown}: none of them replays; where the "
        f"change is meant, delete that file (a recording keeps it)"
    )
    for _, row in iter_rows(path, header):
        if selects is None or selects(row.id):
            yield Outcome(spec.name, row.id, Status.ERROR, note=note)


def _package_ledger(project: Project, spec: LedgerSpec) -> str:
    """The name of the ``package`` ledger ``spec`` is a member of."""
    return max((n for n in project.surfaces if spec.name.startswith(f"{n}.")), key=len, default="")
