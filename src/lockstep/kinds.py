"""The registry of oracle kinds: :data:`KINDS` is the one list of them.

Each name is a package ``lockstep.oracles.<name>`` and an array of tables in the
configuration (``[[corpus]]``); everything else is found from the name:

* ``lockstep.oracles.<name>.spec.SPEC``: the table's type, a subclass of
  :class:`lockstep.tables.OracleSpec` whose ``kind`` defaults to the name, with its own
  checks (:meth:`~lockstep.tables.OracleSpec.validated`).  :mod:`lockstep.config` decodes
  ``[[<name>]]`` into it (strictly: an unknown key is an error naming it).
* ``lockstep.oracles.<name>.kind.KIND``: the one instance of its subclass of
  :class:`lockstep.oracles.OracleKind` (imported on first use, by
  :func:`lockstep.oracles.kind_named`).

So a toy fifth kind ``toy`` is these files and one line here (``"toy"`` added to
:data:`KINDS`), nothing else::

    src/lockstep/oracles/toy/__init__.py   # the package (a docstring)
    src/lockstep/oracles/toy/spec.py       # class ToySpec(OracleSpec, frozen=True, kw_only=True)
                                           #   with its keys and kind: Literal["toy"] = "toy";
                                           #   SPEC = ToySpec
    src/lockstep/oracles/toy/kind.py       # class ToyKind(OracleKind[ToySpec]); KIND = ToyKind()

``tests/test_fifth_kind.py`` builds exactly that on a copy of the source and records,
replays and checks its tables through the command line.

The command line, the configuration, the gates and the reporters reach a kind
through these two names only.  The specs are imported with the configuration (they
are small: types and checks); a kind's machinery only when one of its oracles is used.
"""

from __future__ import annotations

import importlib
from typing import Final

from lockstep.tables import OracleSpec

KINDS: Final = ("corpus", "ledger", "pins", "tape")
"""The registered kinds, in the order the configuration lists their oracles."""


def _spec_of(name: str) -> type[OracleSpec]:
    """The table type the kind ``name`` registers, checked: an :class:`OracleSpec` whose
    ``kind`` defaults to ``name``."""
    spec = importlib.import_module(f"lockstep.oracles.{name}.spec").SPEC
    if isinstance(spec, type) and issubclass(spec, OracleSpec) and _default_kind(spec) == name:
        return spec
    raise TypeError(f"lockstep.oracles.{name}.spec.SPEC is not the {name!r} oracle table")


def _default_kind(spec: type[OracleSpec]) -> object:
    """The default of the table's ``kind`` field (None without one), read from the
    Struct's own field and default tuples: ``msgspec.structs.fields`` resolves every
    annotation of the table first, a millisecond per kind at every start."""
    names = spec.__struct_fields__
    defaults = spec.__struct_defaults__
    if "kind" not in names:
        return None
    at = names.index("kind") - (len(names) - len(defaults))
    return defaults[at] if at >= 0 else None


KIND_SPECS: Final[dict[str, type[OracleSpec]]] = {name: _spec_of(name) for name in KINDS}
"""Each kind's name -> the type its ``[[<name>]]`` tables decode into."""
