"""The ``[[ledger]]`` table: a function's calls → outcomes."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Self

import msgspec

from lockstep.errors import ConfigError
from lockstep.oracles.ledger.deadline import DEFAULT_TIMEOUT
from lockstep.tables import OracleSpec

if TYPE_CHECKING:
    from lockstep.surface import Member

MAX_TIMEOUT: Final = 7 * 24 * 3600.0
"""The longest ``timeout`` (a week): more is a typo."""


class LedgerSpec(OracleSpec, frozen=True, kw_only=True):
    """A ``[[ledger]]`` oracle: a function's calls → outcomes.

    With ``package`` instead of ``target``, one ledger per member of the package's public
    surface (:mod:`lockstep.surface`), each named ``<name>.<module>.<qualname>`` (the
    module relative to the package, left out for the package's ``__init__``) and written to
    ``<dir>/<that name>.ledger.jsonl``; a call the package makes to its own surface while
    inside such a call is part of the outer row, not a row of its own."""

    name: str = ""
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands
    take; required with ``target``, the package's name by default with ``package``."""
    target: str = ""
    """``pkg.mod:qualname`` of the function under freeze (or ``package``, not both)."""
    package: str = ""
    """A top-level package whose public surface is recorded: every public function, method,
    classmethod, staticmethod and property of its public modules (or ``target``, not both)."""
    private: bool = True
    """With ``package``: also record what the tests call directly beyond the public surface
    (private functions and methods, ``__init__``, members of private modules); such a
    member's ledger is written only once the suite calls it, and it is then replayed like
    the surface's."""
    exclude: list[str] = []
    """With ``package``: members left out of the surface, by ``fnmatch`` patterns over the
    names ledgers take (``core.Tag._add_tag``, ``diagram.*``).  Code that reads its own
    stack (pyparsing's parse-action arity test, ``warnings.warn(stacklevel=...)``) sees
    the recorder's wrapper as one more frame; such a member is recorded by leaving it out.
    A pattern that matches no member is an error (a typo would leave nothing out)."""
    driver: str | None = None
    """What calls the target when recording without pytest: ``pkg.mod:func`` or a script path."""
    loose: bool = False
    """Freeze tuples as lists: a tuple where a list was recorded is not drift."""
    float_tolerance: float = 0.0
    """Absolute tolerance for float results on replay; 0 means exact."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one replayed call may run: a call still running then is stopped and its row
    is an ERROR (the ledger's later rows are not called: :mod:`.deadline`); verifying a
    recording replays under it too, so a written row returned within it."""
    rules: list[str] = []
    """Normalization rules (built-in or ``[[rule]]`` names) applied to text values before comparing."""

    kind: Literal["ledger"] = "ledger"

    def validated(self, where: str) -> Self:
        """Exactly one of ``target`` and ``package``; a package ledger's name defaults to
        the package's; a tolerance that is a finite number, 0 or more."""
        spec = self
        if spec.target and spec.package:
            raise ConfigError(f"{where}.package: give target or package, not both")
        if not spec.target and not spec.package:
            raise ConfigError(f"{where}.target: required key is missing (or give package)")
        if spec.package:
            if not spec.package.isidentifier():
                raise ConfigError(
                    f"{where}.package: {spec.package!r} is not a top-level package name"
                )
            if not spec.name:
                spec = msgspec.structs.replace(spec, name=spec.package)
        elif spec.exclude:
            raise ConfigError(f"{where}.exclude: only with package (it leaves members out)")
        elif not spec.name:
            raise ConfigError(f"{where}.name: required key is missing")
        if not 0 < spec.timeout <= MAX_TIMEOUT:  # also refuses nan
            raise ConfigError(
                f"{where}.timeout: must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds"
            )
        tol = spec.float_tolerance
        if not (math.isfinite(tol) and tol >= 0):
            raise ConfigError(f"{where}.float_tolerance: must be a finite number, 0 or more")
        return spec

    def expanded(self, root: Path, where: str) -> tuple[Self, ...] | None:
        """With ``package`` (and no ``target``): one ledger per member of the package's
        public surface, named ``<name>.<member>``, with ``target`` set."""
        if not self.package or self.target:
            return None
        from lockstep.surface import surface  # reads the package's source; imports nothing of it

        public = surface(self.package, root, where=f"{where}.package")
        members = self._kept(public, where, beyond=lambda: self._beyond(root, where))
        if not members:
            raise ConfigError(
                f"{where}.package: package {self.package!r} has no public "
                "function, method or property to record"
            )
        return tuple(
            msgspec.structs.replace(
                self, name=f"{self.name}.{member.short(self.package)}", target=member.target
            )
            for member in members
        )

    def tested_members(self, root: Path, where: str) -> tuple[tuple[Self, str], ...]:
        """With ``private``: one ledger per member the tests may call beyond the public
        surface (:func:`lockstep.surface.tested_members`), an oracle once its file exists."""
        if not self.package or self.target or not self.private:
            return ()
        from lockstep.oracles.ledger.format import SUFFIX
        from lockstep.surface import tested_members

        out = []
        members = tested_members(self.package, root, where=f"{where}.package")
        for member in self._kept(members, where, every_pattern_used=False):
            name = f"{self.name}.{member.short(self.package)}"
            spec = msgspec.structs.replace(self, name=name, target=member.target)
            out.append((spec, f"{name}{SUFFIX}"))
        return tuple(out)

    def former_members(
        self, entries: Collection[str], listed: Collection[str], taken: Collection[str]
    ) -> tuple[Self, ...]:
        """With ``package``: a ledger for each ``<name>.<member>`` whose file the oracle
        folder holds, or that its list of members recorded beyond the surface names, and
        that today's surface no longer has (``taken``: every name configured now), unless
        ``exclude`` leaves the member out.  Its ``target`` is empty: it names nothing to
        call, and a name a file chose is never imported."""
        if not self.package or self.target:
            return ()
        import fnmatch

        from lockstep.config import NAME_PATTERN
        from lockstep.oracles.ledger.format import SUFFIX

        prefix = f"{self.name}."
        names = {e.removesuffix(SUFFIX) for e in entries if e.endswith(SUFFIX)}
        names.update(listed)
        found = []
        for name in sorted(names):
            short = name.removeprefix(prefix)
            if (
                name == short
                or name in taken
                or not short
                or not NAME_PATTERN.match(name)
                or any(fnmatch.fnmatchcase(short, pattern) for pattern in self.exclude)
            ):
                continue
            found.append(msgspec.structs.replace(self, name=name, target=""))
        return tuple(found)

    def _beyond(self, root: Path, where: str) -> list[str]:
        """The names of the members recorded beyond the surface (with ``private``)."""
        if not self.private:
            return []
        from lockstep.surface import tested_members

        members = tested_members(self.package, root, where=f"{where}.package")
        return [m.short(self.package) for m in members]

    def _kept(
        self,
        members: list[Member],
        where: str,
        *,
        every_pattern_used: bool = True,
        beyond: Callable[[], list[str]] | None = None,
    ) -> list[Member]:
        """``members`` less those ``exclude`` names (each pattern must name one of the
        surface's, or, with ``private``, one recorded beyond it (``beyond``), or it is a
        typo: pyparsing's ``core.Tag._add_tag``, a private method, was refused)."""
        if not self.exclude:
            return members
        import fnmatch

        shorts = [m.short(self.package) for m in members]
        others: list[str] | None = None
        for index, pattern in enumerate(self.exclude):
            if every_pattern_used and not fnmatch.filter(shorts, pattern):
                if beyond is not None:
                    others = beyond() if others is None else others
                    if fnmatch.filter(others, pattern):
                        continue
                raise ConfigError(
                    f"{where}.exclude[{index}]: {pattern!r} names no member of package "
                    f"{self.package!r} (members are named as their ledgers are: module.Qual.name)"
                )
        return [
            m
            for m, short in zip(members, shorts, strict=True)
            if not any(fnmatch.fnmatchcase(short, pattern) for pattern in self.exclude)
        ]

    def expansion_sources(self, root: Path) -> object:
        """With ``package``: where the package is found and the bytes of its modules."""
        if not self.package or self.target:
            return None
        from lockstep.surface import source_state

        return source_state(self.package, root)

    def expansion_stamp(self, root: Path) -> object:
        """With ``package``: :func:`~lockstep.source_stamps.source_stamp` of the package."""
        if not self.package or self.target:
            return None
        from lockstep.source_stamps import source_stamp
        from lockstep.tables import UNSTAMPED

        stamp = source_stamp(self.package, root)
        return UNSTAMPED if stamp is None else stamp


SPEC: Final = LedgerSpec
"""This kind's table, for the registry (:mod:`lockstep.kinds`)."""
