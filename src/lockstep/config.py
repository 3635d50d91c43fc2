"""``lockstep.toml`` or ``[tool.lockstep]`` in ``pyproject.toml`` → a typed, validated config.

The config is found by walking up from the working directory to the first
folder that has a ``lockstep.toml``, or a ``pyproject.toml`` with a
``[tool.lockstep]`` table.  That folder is the *project root*: every relative
path in the config resolves against it, and no configured path may escape it.

Every table is a closed :class:`msgspec.Struct`, so an unknown or mistyped key
is an error that names the file and the key (``lockstep.toml: corpus[0].fixture:
unknown key``) rather than a setting silently ignored.

Layout of ``lockstep.toml``::

    [lockstep]            # settings (optional)
    dir = "lockstep"
    [[corpus]] ...        # one table per oracle
    [[ledger]] ...
    [[pins]] ...
    [[tape]] ...
    [[rule]] ...          # user normalization rules
    [gates] ...           # guard / budget / review settings

In ``pyproject.toml`` the same keys live under ``[tool.lockstep]``: the
settings directly in that table, the arrays as ``[[tool.lockstep.corpus]]``.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import msgspec

from lockstep.canon import DEFAULT_STEM
from lockstep.errors import ConfigError, LockstepError

CONFIG_FILE: Final = "lockstep.toml"
PYPROJECT: Final = "pyproject.toml"
NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MAX_TIMEOUT: Final = 7 * 24 * 3600.0
"""The longest ``timeout`` of a pinned run (a week): more is a typo, and overflows ``select``."""


DEFAULT_MAX_OUTPUT: Final = 32 * 1024 * 1024
"""Bytes kept of each of a pinned run's stdout and stderr unless ``max_output`` says otherwise
(:data:`lockstep.process.DEFAULT_OUTPUT_CAP` is this value)."""
MAX_OUTPUT_LIMIT: Final = 4 * 1024**3
_SIZE: Final = re.compile(r"^\s*([0-9]{1,13})\s*(B|KiB|MiB|GiB)?\s*$")
_UNITS: Final[dict[str | None, int]] = {
    None: 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
}


def parse_size(value: int | str) -> int:
    """A byte count from an int or a string such as ``"64MiB"`` (units B, KiB, MiB, GiB).

    Raises :class:`ValueError` saying what is accepted: 1 byte up to 4 GiB.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and (match := _SIZE.match(value)):
        size = int(match[1]) * _UNITS[match[2]]
    else:
        raise ValueError(
            f"{value!r} is not a size: give bytes as an integer or a string such as '64MiB' "
            "(units B, KiB, MiB, GiB)"
        )
    if not 1 <= size <= MAX_OUTPUT_LIMIT:
        raise ValueError(f"{value!r} is out of range: from 1 byte to 4 GiB")
    return size


SECRET_ENV_NAMES: Final = (
    "*PASSWORD*",
    "*PASSWD*",
    "*TOKEN*",
    "*SECRET*",
    "*_KEY",
    "*CREDENTIAL*",
    "*AUTH*",
)
"""The default ``[lockstep] secret_env``: names of variables whose values are secrets."""


class _Table(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Base of every config table: closed, immutable."""


class Settings(_Table, frozen=True):
    """The ``[lockstep]`` table."""

    dir: str = "lockstep"
    """Folder (relative to the root) where oracle files live."""
    stem_length: int = DEFAULT_STEM
    """Characters of an exception message frozen as its stem."""
    jobs: int = 0
    """Default replay workers when ``--jobs`` is not given; 0 lets each oracle kind choose
    (one per core for pins, whose cases are processes anyway; one for in-process kinds)."""
    record_exclude: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """Tests kept out of ``pytest --lockstep-record``: node ids, files or folders, or
    ``fnmatch`` patterns of node ids (as the ``lockstep_skip`` marker does for one test)."""
    secrets: Literal["on", "off"] = "on"
    """Scan every value before it is written to an oracle file (see ``lockstep.secrets``);
    ``"off"`` is an explicit line the guard and the review count as an oracle change."""
    freeze_classes: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """``fnmatch`` patterns of ``module.QualName`` (``"mypkg.*"``) whose objects freeze by
    structure (class name plus state), beside the classes of the configured targets' own
    packages, which always do."""
    encoders: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """Modules (``tests.lockstep_encoders``) that call ``lockstep.register_encoder`` for classes
    that do not freeze by structure; record, the verifying interpreter and replay all import
    them before any value is frozen or thawed."""
    secret_env: list[Annotated[str, msgspec.Meta(min_length=1)]] = msgspec.field(
        default_factory=lambda: list(SECRET_ENV_NAMES)
    )
    """``fnmatch`` patterns (case-insensitive) of environment variable names whose values
    are secrets without a ``[[secret]]`` table: present at record or replay time, each
    value is scrubbed like a ``[[secret]] env`` one, in every spelling, from everything
    lockstep writes or prints.  A value under 8 characters is named in a warning instead
    (scrubbing every occurrence of a short word would wreck the record).  A case recorded
    with such a placeholder replays only with the variable set (else it is an error naming
    it, like a ``[[secret]] env``).  ``[]`` turns this off."""


class CorpusSpec(_Table, frozen=True):
    """A ``[[corpus]]`` oracle: fixture files → render callable → canonical bytes → lock."""

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    fixtures: str
    """Glob, relative to the root, of the fixture files (``fixtures/*.json``)."""
    render: str
    """``pkg.mod:func`` called with each fixture's Path; returns bytes, str or a JSON value."""
    loose: bool = False
    """Freeze tuples returned by render as lists."""
    rules: list[str] = []
    """Normalization rules applied to rendered text before hashing."""

    kind: Literal["corpus"] = "corpus"


LEDGER_SUFFIX: Final = ".ledger.jsonl"
"""A ledger file's suffix (the configuration needs it to tell a recorded tested member)."""


class LedgerSpec(_Table, frozen=True):
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
    driver: str | None = None
    """What calls the target when recording without pytest: ``pkg.mod:func`` or a script path."""
    loose: bool = False
    """Freeze tuples as lists: a tuple where a list was recorded is not drift."""
    float_tolerance: float = 0.0
    """Absolute tolerance for float results on replay; 0 means exact."""
    rules: list[str] = []
    """Normalization rules (built-in or ``[[rule]]`` names) applied to text values before comparing."""

    kind: Literal["ledger"] = "ledger"


class PinsSpec(_Table, frozen=True):
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


class TapeSpec(_Table, frozen=True):
    """A ``[[tape]]`` oracle: the collaborator calls a driver makes, in order."""

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    driver: str
    """``pkg.mod:func`` taking a :class:`lockstep.Tape`; it wires spies and runs the target."""
    mode: Literal["ordered", "multiset", "counts"] = "ordered"
    """How calls are compared: in order, as a multiset (any order), or only counts per collaborator."""
    rules: list[str] = []
    """Normalization rules applied to the frozen call arguments and outcomes."""

    kind: Literal["tape"] = "tape"


class RuleSpec(_Table, frozen=True):
    """A user ``[[rule]]``: a named regex replacement applied before hashing/comparing."""

    name: str
    """The rule's name, as oracles list it in ``rules``."""
    pattern: str
    """A Python regular expression."""
    replace: str
    """What each match becomes (``re.sub`` replacement syntax)."""
    ignore_case: bool = False
    """Match without regard to case."""


class SecretSpec(_Table, frozen=True):
    """A ``[[secret]]``: a value scrubbed by where it comes from, or an allowed false positive.

    Exactly one of ``env`` (the value of an environment variable), ``pattern`` (every
    match of a regex; needs ``name``) or ``allow`` (the sha256 of a value the detector
    flags but that is no secret).  Checked by :func:`_check_secret`.
    """

    env: str = ""
    """An environment variable whose value is scrubbed to ``<ENV>`` in everything recorded."""
    name: str = ""
    """The placeholder's name: ``<NAME>`` (defaults to ``env``)."""
    pattern: str = ""
    """A regex; every match is scrubbed to ``<NAME>`` (needs ``name``)."""
    allow: str = ""
    """The sha256 of a flagged value that is no secret (the refusal prints it)."""


class GatesSpec(_Table, frozen=True):
    """The ``[gates]`` table: settings for guard, budget and review."""

    production: list[str] = msgspec.field(default_factory=lambda: ["**/*.py"])
    """Globs of production code (guard: oracle files and production code never change together)."""
    exclude: list[str] = msgspec.field(
        default_factory=lambda: [
            "tests/**",
            "test_*.py",
            "**/test_*.py",
            "conftest.py",
            "**/conftest.py",
        ]
    )
    """Globs taken out of ``production``: tests are not production code."""
    budget: list[list[int]] = msgspec.field(default_factory=lambda: [[3, 20], [10, 10], [25, 5]])
    """``[max fan-in, max changed lines]`` rows, ascending; beyond the last row the budget is 0."""
    seam_limit: int = 1
    """How many new functions/modules one change may add."""


OracleSpec = CorpusSpec | LedgerSpec | PinsSpec | TapeSpec

KIND_SPECS: Final[dict[str, type[OracleSpec]]] = {
    "corpus": CorpusSpec,
    "ledger": LedgerSpec,
    "pins": PinsSpec,
    "tape": TapeSpec,
}
"""The registry of oracle kinds, the one list of them: each name is an array of tables in
the configuration (``[[corpus]]``, a field of :class:`Config`) and a package
``lockstep.oracles.<name>`` whose ``kind.KIND`` implements it.  A new kind adds one line
here, its spec above, and the field of :class:`Config` that msgspec decodes into it."""

KINDS: Final = tuple(KIND_SPECS)


class Config(_Table, frozen=True):
    """The whole configuration."""

    lockstep: Settings = Settings()
    corpus: list[CorpusSpec] = []
    ledger: list[LedgerSpec] = []
    pins: list[PinsSpec] = []
    tape: list[TapeSpec] = []
    rule: list[RuleSpec] = []
    secret: list[SecretSpec] = []
    gates: GatesSpec = GatesSpec()


_ARRAY_KEYS: Final = (*KINDS, "rule", "secret", "gates")


@dataclass(frozen=True)
class Project:
    """A located, validated configuration and the root everything resolves against."""

    root: Path
    config_path: Path
    config: Config
    surfaces: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The name of each ``package`` ledger -> the names of the ledgers it expanded into."""
    surface_origin: dict[str, int] = field(default_factory=dict)
    """With a ``package`` ledger: each ledger's name -> the index of its ``[[ledger]]`` in
    the file (a package's expanded targets share theirs; :func:`expand_surfaces`)."""
    tested: frozenset[str] = frozenset()
    """Members of a package ledger beyond its public surface (``private``): an oracle only
    once its file exists, so a member the suite never calls directly is no oracle at all."""

    @property
    def oracle_dir(self) -> Path:
        return self.resolve(self.config.lockstep.dir, key="lockstep.dir")

    def resolve(self, rel: str, *, key: str) -> Path:
        """Resolve a configured path against the root; refuse one that escapes it."""
        candidate = (self.root / rel).resolve()
        root = self.root.resolve()
        if candidate != root and root not in candidate.parents:
            raise ConfigError(f"{self.config_name}: {key}: path {rel!r} escapes the project root")
        return candidate

    @property
    def config_name(self) -> str:
        return self.config_path.name

    def oracles(self) -> Iterator[OracleSpec]:
        """Every configured oracle, in file order by kind (a package's tested member only
        once recorded: see :attr:`tested`)."""
        for spec in self.all_oracles():
            if spec.name not in self.tested or self.recorded_member(spec.name):
                yield spec

    def all_oracles(self) -> Iterator[OracleSpec]:
        """Every configured oracle, the tested members not recorded yet included: what a
        recording of the suite installs."""
        for kind in KINDS:
            yield from getattr(self.config, kind)

    def recorded_member(self, name: str) -> bool:
        """Whether the ledger of a package's tested member exists (in the oracle folder)."""
        return (self.oracle_dir / f"{name}{LEDGER_SUFFIX}").is_file()

    def key(self, spec: OracleSpec, field: str = "") -> str:
        """Where ``spec`` (or one of its fields) sits in the configuration: ``corpus[0].render``.

        Every message about a configured value names this key, so the user can find it.
        """
        tables: list[OracleSpec] = list(getattr(self.config, spec.kind))
        index = self.surface_origin.get(spec.name) if spec.kind == "ledger" else None
        if index is None:
            index = next((i for i, s in enumerate(tables) if s.name == spec.name), 0)
        key = f"{spec.kind}[{index}]"
        return f"{key}.{field}" if field else key

    def where(self, spec: OracleSpec, field: str = "") -> str:
        """:meth:`key` with the config file in front: ``lockstep.toml: corpus[0].render``."""
        return f"{self.config_name}: {self.key(spec, field)}"

    def select(self, names: tuple[str, ...] | list[str]) -> list[OracleSpec]:
        """The oracles ``names`` name, in the order given, or every one when none is; the
        name of a ``package`` ledger stands for all its members."""
        if not names:
            return list(self.oracles())
        return [self.oracle(name) for name in self.expand_names(names)]

    def expand_names(self, names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """``names`` with each ``package`` ledger's name replaced by its members' names
        (each name once, in the order given)."""
        out: dict[str, None] = {}
        for name in names:
            members = self.surfaces.get(name)
            if members is None:
                out[name] = None
                continue
            tested = self.tested
            out.update(
                dict.fromkeys(m for m in members if m not in tested or self.recorded_member(m))
            )
        return tuple(out)

    def oracle(self, name: str) -> OracleSpec:
        """The oracle called ``name``; a usage error lists the names that exist."""
        for spec in self.all_oracles():
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in self.oracles()) or "none configured"
        raise ConfigError(f"{self.config_name}: no oracle named {name!r} (known: {known})")


def _format_validation(err: msgspec.ValidationError) -> str:
    text = str(err)
    # msgspec: "Object contains unknown field `x` - at `$.corpus[0]`"
    match = re.match(r"(?P<what>.*?)(?: - at `\$(?P<where>[^`]*)`)?$", text)
    assert match is not None
    what = match.group("what")
    where = (match.group("where") or "").lstrip(".")
    field = re.search(r"`([^`]+)`", what)
    if what.startswith("Object contains unknown field") and field:
        key = f"{where}.{field.group(1)}" if where else field.group(1)
        return f"{key}: unknown key"
    if what.startswith("Object missing required field") and field:
        key = f"{where}.{field.group(1)}" if where else field.group(1)
        return f"{key}: required key is missing"
    return f"{where}: {what}" if where else what


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    return parse_toml(data, path.name, ConfigError)


def parse_toml(data: bytes, shown: str, error: type[LockstepError]) -> dict[str, Any]:
    """TOML bytes as a mapping; anything that is not UTF-8 TOML is ``error`` naming ``shown``
    and the line (also for what ``tomllib`` does not report itself: an int of more than 4300
    digits, arrays nested past the recursion limit)."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"{shown}:{line}: not UTF-8 text (byte {data[e.start]:#04x})") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{shown}: not valid TOML: {e}") from None
    except ValueError as e:  # tomllib's int(): more digits than Python converts
        raise error(f"{shown}: not valid TOML: {e}") from None
    except RecursionError:
        raise error(f"{shown}: not valid TOML: arrays or tables nested too deeply") from None


def _from_pyproject(data: dict[str, Any]) -> dict[str, Any] | None:
    tool = data.get("tool")
    if not isinstance(tool, dict) or "lockstep" not in tool:
        return None
    table = tool["lockstep"]
    if not isinstance(table, dict):
        raise ConfigError(f"{PYPROJECT}: tool.lockstep must be a table")
    raw: dict[str, Any] = {k: v for k, v in table.items() if k in _ARRAY_KEYS}
    settings = {k: v for k, v in table.items() if k not in _ARRAY_KEYS}
    if settings:
        raw["lockstep"] = settings
    return raw


def parse_config(raw: dict[str, Any], source: str) -> Config:
    """Validate a raw TOML mapping; errors name ``source`` and the key."""
    try:
        config = msgspec.convert(raw, Config)
    except msgspec.ValidationError as e:
        key_hint = "tool.lockstep." if source == PYPROJECT else ""
        message = _format_validation(e)
        if key_hint and message.startswith("lockstep."):
            message = message.removeprefix("lockstep.")  # settings sit directly in [tool.lockstep]
        raise ConfigError(f"{source}: {key_hint}{message}") from None
    config = _check_ledgers(config, source, "tool.lockstep." if source == PYPROJECT else "")
    _check_consistency(config, source)
    return config


def _check_ledgers(config: Config, source: str, prefix: str) -> Config:
    """Exactly one of ``target`` and ``package`` per ledger; a package ledger's name
    defaults to the package's.  ``prefix``: where the tables sit (``tool.lockstep.``)."""
    ledgers: list[LedgerSpec] = []
    for i, spec in enumerate(config.ledger):
        where = f"{source}: {prefix}ledger[{i}]"
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
        elif not spec.name:
            raise ConfigError(f"{where}.name: required key is missing")
        ledgers.append(spec)
    return msgspec.structs.replace(config, ledger=ledgers)


@dataclass(frozen=True)
class Expanded:
    """A configuration with its ``package`` ledgers expanded (:func:`expand_surfaces`)."""

    config: Config
    surfaces: dict[str, tuple[str, ...]]
    """Each package ledger's name -> its members' ledger names."""
    origin: dict[str, int]
    """Each ledger's name -> the index of the ``[[ledger]]`` it came from, for messages."""
    tested: frozenset[str] = frozenset()
    """The members beyond the public surfaces (see :attr:`Project.tested`)."""


def expand_surfaces(config: Config, root: Path, source: str) -> Expanded:
    """Each ``package`` ledger replaced by one ledger per member of its public surface
    (with ``target`` and ``package`` both set)."""
    if not any(spec.package for spec in config.ledger):
        return Expanded(config, {}, {})
    # reads the package's source; imports nothing of it
    from lockstep.surface import surface, tested_members

    ledgers: list[LedgerSpec] = []
    origin: dict[str, int] = {}
    surfaces: dict[str, tuple[str, ...]] = {}
    tested: set[str] = set()
    for i, spec in enumerate(config.ledger):
        if not spec.package or spec.target:
            ledgers.append(spec)
            origin[spec.name] = i
            continue
        where = f"{source}: ledger[{i}].package"
        members = surface(spec.package, root, where=where)
        if not members:
            raise ConfigError(
                f"{source}: ledger[{i}].package: package {spec.package!r} has no public "
                "function, method or property to record"
            )
        extra = tested_members(spec.package, root, where=where) if spec.private else []
        names = tuple(f"{spec.name}.{member.short(spec.package)}" for member in [*members, *extra])
        for name, member in zip(names, [*members, *extra], strict=True):
            ledgers.append(msgspec.structs.replace(spec, name=name, target=member.target))
            origin[name] = i
        surfaces[spec.name] = names
        tested.update(names[len(members) :])
    expanded = msgspec.structs.replace(config, ledger=ledgers)
    _check_consistency(expanded, source)
    return Expanded(expanded, surfaces, origin, frozenset(tested))


def _check_pins(pins: PinsSpec, where: str) -> None:
    if pins.runs < 2:
        raise ConfigError(
            f"{where}.runs: must be at least 2: record always checks that a "
            "case repeats itself before freezing it"
        )
    if not 0 < pins.timeout <= MAX_TIMEOUT:  # also refuses nan
        raise ConfigError(
            f"{where}.timeout: must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds"
        )
    try:
        parse_size(pins.max_output)
    except ValueError as e:
        raise ConfigError(f"{where}.max_output: {e}") from None
    from lockstep.pyentry import MODULE_NAME, python_entry  # pins only: not for other kinds

    if pins.warm:
        entry = python_entry(pins.command)
        if isinstance(entry, str):
            raise ConfigError(f"{where}.warm: only for Python programs: {entry}")
    elif pins.warm_imports:
        raise ConfigError(f"{where}.warm_imports: only used with 'warm = true'")
    for j, name in enumerate(pins.warm_imports):
        if not MODULE_NAME.match(name):
            raise ConfigError(f"{where}.warm_imports[{j}]: {name!r} is not a module name")


def _check_consistency(config: Config, source: str) -> None:
    seen: dict[str, str] = {}
    for kind in KINDS:
        for i, spec in enumerate(getattr(config, kind)):
            where = f"{kind}[{i}].name"
            if not NAME_PATTERN.match(spec.name):
                raise ConfigError(
                    f"{source}: {where}: {spec.name!r} is not a valid oracle name "
                    "(letters, digits, '.', '_' and '-')"
                )
            if spec.name in seen:
                raise ConfigError(
                    f"{source}: {where}: oracle name {spec.name!r} is already used by {seen[spec.name]}"
                )
            seen[spec.name] = f"{kind}[{i}]"
    rule_names: set[str] = set()
    for i, rule in enumerate(config.rule):
        if rule.name in rule_names:
            raise ConfigError(f"{source}: rule[{i}].name: rule {rule.name!r} is defined twice")
        rule_names.add(rule.name)
        try:
            re.compile(rule.pattern)
        except (re.error, RecursionError, OverflowError) as e:
            raise ConfigError(f"{source}: rule[{i}].pattern: does not compile: {e}") from None
    for i, pins in enumerate(config.pins):
        _check_pins(pins, f"{source}: pins[{i}]")
    for i, secret in enumerate(config.secret):
        _check_secret(secret, f"{source}: secret[{i}]")
    _check_numbers(config, source)


SECRET_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")


def _check_secret(secret: SecretSpec, where: str) -> None:
    """One of env / pattern / allow; a name fit for a ``<NAME>`` placeholder; a pattern
    that compiles and cannot match the empty string; an allow that is a sha256."""
    given = [k for k in ("env", "pattern", "allow") if getattr(secret, k)]
    if len(given) != 1:
        raise ConfigError(f"{where}: give exactly one of env, pattern or allow")
    name = secret.name or secret.env
    if secret.allow:
        if secret.name:
            raise ConfigError(f"{where}.name: an allow entry has no placeholder name")
        if not _SHA256.match(secret.allow):
            raise ConfigError(f"{where}.allow: must be the value's sha256 (64 lowercase hex)")
        return
    if not name:
        raise ConfigError(f"{where}.name: a pattern secret needs a name for its placeholder")
    if not SECRET_NAME.match(name):
        key = "name" if secret.name else "env"
        raise ConfigError(
            f"{where}.{key}: {name!r} cannot name a placeholder (letters, digits and '_')"
        )
    if secret.pattern:
        try:
            compiled = re.compile(secret.pattern)
        except (re.error, RecursionError, OverflowError) as e:
            raise ConfigError(f"{where}.pattern: does not compile: {e}") from None
        if compiled.match(""):
            raise ConfigError(f"{where}.pattern: matches the empty string")


MAX_STEM: Final = 100_000
"""The longest exception message stem lockstep freezes (characters)."""


def _check_numbers(config: Config, source: str) -> None:
    """Numbers a reader could be handed from a hostile or mistyped file: each in its range."""
    if not 1 <= config.lockstep.stem_length <= MAX_STEM:
        raise ConfigError(f"{source}: lockstep.stem_length: must be between 1 and {MAX_STEM}")
    if not 0 <= config.lockstep.jobs <= 1024:
        raise ConfigError(f"{source}: lockstep.jobs: must be between 0 (one per core) and 1024")
    for i, ledger in enumerate(config.ledger):
        tol = ledger.float_tolerance
        if not (math.isfinite(tol) and tol >= 0):
            raise ConfigError(
                f"{source}: ledger[{i}].float_tolerance: must be a finite number, 0 or more"
            )
    for i, row in enumerate(config.gates.budget):
        if len(row) != 2 or any(n < 0 for n in row):
            raise ConfigError(
                f"{source}: gates.budget[{i}]: must be [max fan-in, max changed lines], "
                "both 0 or more"
            )
    if config.gates.seam_limit < 0:
        raise ConfigError(f"{source}: gates.seam_limit: must be 0 or more")


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``lockstep.toml`` or ``pyproject.toml`` with ``[tool.lockstep]``, walking up."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / PYPROJECT
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError, ValueError, RecursionError):
                continue  # (UnicodeDecodeError is a ValueError)
            if isinstance(data.get("tool"), dict) and "lockstep" in data["tool"]:
                return pyproject
    return None


def config_from_bytes(data: bytes, name: str, shown: str | None = None) -> Config:
    """A configuration file's text (``lockstep.toml`` or ``pyproject.toml`` by ``name``),
    validated: the configuration of another revision, read from git.  Errors name
    ``shown`` (default: ``name``)."""
    shown = shown or name
    parsed = parse_toml(data, shown, ConfigError)
    if Path(name).name == PYPROJECT:
        raw = _from_pyproject(parsed)
        if raw is None:
            raise ConfigError(f"{shown}: has no [tool.lockstep] table")
    else:
        raw = parsed
    return parse_config(raw, shown)


def load_project(start: Path | None = None, *, config_path: Path | None = None) -> Project:
    """Find, read and validate the configuration.

    ``LOCKSTEP_CONFIG`` in the environment, or ``config_path``, names the file
    explicitly; otherwise it is found by walking up from ``start``.
    """
    explicit = config_path or (Path(p) if (p := os.environ.get("LOCKSTEP_CONFIG")) else None)
    path = explicit or find_config(start)
    if path is None:
        raise ConfigError(
            f"no {CONFIG_FILE} (or [tool.lockstep] in {PYPROJECT}) found here or in any parent"
            " folder; create one (see the README) or run from the project root"
        )
    path = path.resolve()
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    data = _load_toml(path)
    if path.name == PYPROJECT:
        raw = _from_pyproject(data)
        if raw is None:
            raise ConfigError(f"{path.name}: has no [tool.lockstep] table")
    else:
        raw = data
    found = expand_surfaces(parse_config(raw, path.name), path.parent, path.name)
    return Project(
        root=path.parent,
        config_path=path,
        config=found.config,
        surfaces=found.surfaces,
        surface_origin=found.origin,
        tested=found.tested,
    )
