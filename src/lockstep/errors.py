"""The errors lockstep raises for bad input.

Every error a user can cause by what they typed or what is on disk derives from
:class:`LockstepError`; the command layer turns it into one line on stderr and
exit code 2.  Anything else escaping is a bug in lockstep, not user input.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_line(text: str) -> str:
    """``text`` with control characters (a newline or ``\\r`` from a hostile file) escaped."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class LockstepError(Exception):
    """A user-facing error: one line that says what is wrong and where.

    The message is kept to one line whatever it quotes: control characters that came
    from the input (a field name, a path, a line of a file) are shown escaped.
    """

    def __init__(self, message: str) -> None:
        message = one_line(message)
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class Rejected(LockstepError):
    """Not bad input but a finding that fails the gate (exit 1), such as a case whose output
    varies from run to run so that it cannot be frozen."""


class UnparsableSource(Rejected):
    """A module of a package whose surface the configuration records does not parse (a
    syntax error, a null byte): the surface cannot be listed, so no member replays.  The
    code changed, not the configuration, so it fails the gate (exit 1) as a target that
    no longer imports does, where a configuration error is exit 2."""


class UsageError(LockstepError):
    """The command line asked for something that cannot be done."""


class ConfigError(LockstepError):
    """``lockstep.toml`` or ``[tool.lockstep]`` is missing, malformed or inconsistent."""


class DataError(LockstepError):
    """An oracle or cases file on disk is corrupt; the message names ``FILE:LINE``."""


class TargetError(LockstepError):
    """A configured callable, program or module could not be imported or run."""


class UnimportableModule(TargetError):
    """A target's module raised on import; ``reason`` is the exception, one line."""

    def __init__(self, message: str, module: str, reason: str) -> None:
        super().__init__(message)
        self.module = module
        self.reason = reason


class UnimportableTestModule(TargetError):
    """A module listed in ``[lockstep] test_modules`` raised on import: replay's cases
    cannot run (red, as for a target whose module no longer imports); a recording's
    verification stops that ledger with it instead, refusing none of its rows."""


class MissingMember(TargetError):
    """A target's module, imported, has no such name.  For a member of a package surface
    that the source defines where the import may not run it (natsort's ``get_icu_locale``,
    defined under ``try: import icu`` only), the member records nothing; for a target the
    configuration names, it is the error."""


class NotACallable(TargetError):
    """A target names a value that cannot be called (a class, a constant). For a target
    a package's surface guessed from its source (``Text = Token.Text``, an attribute of a
    module-level instance that is no method), the member records nothing; for a target
    the configuration names, it is the error."""


class ComparedAsValue(TargetError):
    """A module-level function of a package surface that the package compares as a value
    (``fmt.lineabove == _html_begin_table``): a wrapper in its place would not be that
    function, so the member records nothing (:mod:`lockstep.oracles.ledger.compared_names`)."""


class CanonError(LockstepError):
    """A value cannot be frozen or thawed; the message names the path inside the value."""

    def __init__(self, message: str, path: str = "value") -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.reason = message


class TooLargeError(CanonError):
    """A value holds too many objects to freeze: no path is walked for it, and a recorder
    counts it as a row's worth of its byte budget."""


class TooDeepError(CanonError):
    """A value nested past the codec's depth, or holding a reference cycle it cannot name:
    every level down to the limit was walked to learn it, so a recorder counts it as a
    row's worth of its byte budget, as it does :class:`TooLargeError`."""


class ThawError(CanonError):
    """A recorded value is well formed, but rebuilding it ran the project's own code (an
    object's ``__new__``/``__setstate__``, its ``__hash__``/``__eq__`` as a set member or a
    dict key) and that code failed or behaved otherwise: today's code, not the file, is
    what changed, so replay reports the case instead of a corrupt line."""


class GitError(LockstepError):
    """The git repository is missing, shallow, or does not hold the revision asked for."""
