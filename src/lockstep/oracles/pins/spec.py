"""The ``[[pins]]`` table: whole process runs → exit code, stdout, stderr."""

from __future__ import annotations

from typing import Final, Literal, Self

from lockstep.errors import ConfigError
from lockstep.tables import DEFAULT_MAX_OUTPUT, OracleSpec, parse_size

MAX_TIMEOUT: Final = 7 * 24 * 3600.0
"""The longest ``timeout`` of a pinned run (a week): more is a typo, and overflows ``select``."""


class PinsSpec(OracleSpec, frozen=True, kw_only=True):
    """A ``[[pins]]`` oracle: whole process runs → exit code, stdout, stderr."""

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    command: list[str]
    """The program as an argv prefix (``["python", "export.py"]``)."""
    cases: str
    """Path of a TOML file with ``[[case]]`` tables."""
    env_keys: list[str] = []
    """The environment variables a case may set (its ``env``); nothing else reaches the program."""
    rules: list[str] = []
    """Normalization rules applied to stdout and stderr before hashing and comparing, in order."""
    timeout: float = 30.0
    """Seconds a case may run (up to a week); then its whole process tree is killed."""
    runs: int = 2
    """Runs per case at record time; a case whose normalized output varies is refused."""
    max_output: int | str = DEFAULT_MAX_OUTPUT
    """Cap on each of stdout and stderr: bytes, or a size such as ``"64MiB"``; a case that
    writes more is killed there and is an error (see :func:`parse_size`)."""
    warm: bool = False
    """Run Python cases by forking a preloaded server (``python SCRIPT`` or ``-m MODULE`` only);
    record proves per case that warm and cold outputs are identical."""
    warm_imports: list[str] = []
    """Modules the warm server imports once, before forking any case."""

    kind: Literal["pins"] = "pins"

    @property
    def max_output_bytes(self) -> int:
        """:attr:`max_output` in bytes (validated when the config is read)."""
        return parse_size(self.max_output)

    def validated(self, where: str) -> Self:
        """At least two runs, a timeout in range, a size, warm only for a Python program."""
        if self.runs < 2:
            raise ConfigError(
                f"{where}.runs: must be at least 2: record always checks that a "
                "case repeats itself before freezing it"
            )
        if not 0 < self.timeout <= MAX_TIMEOUT:  # also refuses nan
            raise ConfigError(
                f"{where}.timeout: must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds"
            )
        try:
            parse_size(self.max_output)
        except ValueError as e:
            raise ConfigError(f"{where}.max_output: {e}") from None
        from lockstep.pyentry import MODULE_NAME, python_entry  # pins only: not for other kinds

        if self.warm:
            entry = python_entry(self.command)
            if isinstance(entry, str):
                raise ConfigError(f"{where}.warm: only for Python programs: {entry}")
        elif self.warm_imports:
            raise ConfigError(f"{where}.warm_imports: only used with 'warm = true'")
        for j, name in enumerate(self.warm_imports):
            if not MODULE_NAME.match(name):
                raise ConfigError(f"{where}.warm_imports[{j}]: {name!r} is not a module name")
        return self


SPEC: Final = PinsSpec
"""This kind's table, for the registry (:mod:`lockstep.kinds`)."""
