"""``lockstep.toml`` or ``[tool.lockstep]`` in ``pyproject.toml`` → a typed, validated config.

The config is found by walking up from the working directory to the first
folder that has a ``lockstep.toml``, or a ``pyproject.toml`` with a
``[tool.lockstep]`` table.  That folder is the *project root*: every relative
path in the config resolves against it, and no configured path may escape it.

Every table is a closed :class:`msgspec.Struct` (:class:`lockstep.tables.Table`), so an unknown or mistyped key
is an error that names the file and the key (``lockstep.toml: corpus[0].fixture:
unknown key``) rather than a setting silently ignored.  Each kind's table is its
own package's (``lockstep.oracles.<kind>.spec``, with its checks); this module builds
the configuration from the registry (:mod:`lockstep.kinds`) and names no kind.

Layout of ``lockstep.toml``::

    [lockstep]            # settings (optional)
    dir = "lockstep"
    [[corpus]] ...        # one table per oracle, an array per kind of oracle
    [[pins]] ...          # (the kinds: lockstep.kinds.KINDS)
    [[rule]] ...          # user normalization rules
    [gates] ...           # guard / budget / review settings

In ``pyproject.toml`` the same keys live under ``[tool.lockstep]``: the
settings directly in that table, the arrays as ``[[tool.lockstep.corpus]]``.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import msgspec

from lockstep.canon import DEFAULT_STEM
from lockstep.errors import ConfigError, LockstepError
from lockstep.kinds import KIND_SPECS, KINDS
from lockstep.store import beyond_surface
from lockstep.store.reading import read_file
from lockstep.tables import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
from lockstep.tables import OracleSpec as OracleSpec
from lockstep.tables import Table
from lockstep.tables import parse_size as parse_size

CONFIG_FILE: Final = "lockstep.toml"
PYPROJECT: Final = "pyproject.toml"
NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
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


class Settings(Table, frozen=True):
    """The ``[lockstep]`` table."""

    dir: str = "lockstep"
    """Folder (relative to the root) where oracle files live."""
    stem_length: int = DEFAULT_STEM
    """Characters of an exception message frozen as its stem."""
    jobs: int = 0
    """Default replay workers when ``--jobs`` is not given; 0 lets each oracle kind choose
    (one per core for pins, whose cases are processes anyway; one for in-process kinds).
    Also how many ledgers ``pytest --lockstep-record`` verifies side by side (0: two per
    core, at most four; see :func:`lockstep.oracles.verify_session.verifying_jobs`)."""
    object_calls: int = 2_000
    """Most calls of one target whose input holds objects that are frozen, per recording
    process; later calls with objects not met before run unrecorded and are counted as
    skipped (0: no limit).  Freezing an object costs its size on every call: a suite
    that grows a structure call by call (furl's tests add to one query thousands of
    times) would otherwise take minutes to record and write as many rows.  A constructor
    given scalars is frozen past it: its ``self`` holds nothing yet.  Past it, each test of a
    ``pytest --lockstep-record`` run still freezes its first 20 such calls of the target
    (the limit counts in test order: a late group of tests kept nothing), and a call of a
    kind not met before is frozen too, up to as many again: a kind is the class of each
    argument holding objects and the value of each scalar one (a text by its first 64
    characters, a number by its sign and size), so ``humanize(other, locale="it")`` after
    a thousand calls in English is still recorded."""
    object_bytes: int = 16 * 2**20
    """Most bytes frozen for calls of one target whose input holds objects or mutable
    values (their inputs and outcomes: about what their rows take), per recording process;
    later such calls run unrecorded and are counted as skipped (0: no limit).
    :attr:`object_calls` bounds how often a growing object is frozen, this how much: a
    suite that moves items in a list of 100,000 ten thousand times (boltons'
    ``BarrelList``) froze it whole on each of the first 2,000 calls, four minutes, and a
    ledger gains those bytes on every row."""
    record_exclude: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """Tests kept out of ``pytest --lockstep-record``: node ids, files or folders, or
    ``fnmatch`` patterns of node ids (as the ``lockstep_skip`` marker does for one test)."""
    secrets: Literal["on", "off"] = "on"
    """Scan every value before it is written to an oracle file (see ``lockstep.secrets``);
    ``"off"`` is an explicit line the guard and the review count as an oracle change."""
    freeze_classes: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """``fnmatch`` patterns of ``module.QualName`` (``"mypkg.*"``) whose objects freeze by
    structure (class name plus state, their own state protocol included), beside the
    classes of the configured targets' own packages and other libraries' plain classes,
    which always do (:mod:`lockstep.canon.library_classes`)."""
    encoders: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """Modules (``tests.lockstep_encoders``) that call ``lockstep.register_encoder`` for classes
    that do not freeze by structure; record, the verifying interpreter and replay all import
    them before any value is frozen or thawed."""
    test_modules: list[Annotated[str, msgspec.Meta(min_length=1)]] = []
    """Test modules (paths or globs relative to the root: ``"tests/test_discrete.py"``)
    whose classes and functions the rows may name, as the targets' package's: a value of a
    class the suite defines (a test's subclass of the package's abstract base) freezes by
    structure instead of skipping the call.  The interpreter that verifies new rows and
    ``lockstep replay`` import each one first, under the name pytest's default ``prepend``
    import mode gives it (:mod:`lockstep.suite_modules`)."""
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


class RuleSpec(Table, frozen=True):
    """A user ``[[rule]]``: a named regex replacement applied before hashing/comparing."""

    name: str
    """The rule's name, as oracles list it in ``rules``."""
    pattern: str
    """A Python regular expression."""
    replace: str
    """What each match becomes (``re.sub`` replacement syntax)."""
    ignore_case: bool = False
    """Match without regard to case."""


class SecretSpec(Table, frozen=True):
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


class GatesSpec(Table, frozen=True):
    """The ``[gates]`` table: settings for guard, budget and review."""

    production: list[str] = msgspec.field(default_factory=lambda: ["**/*.py"])
    """Globs of production code (guard: oracle files and production code never change together)."""
    exclude: list[str] = msgspec.field(
        default_factory=lambda: [
            "tests/**",
            "test/**",
            "test_*.py",
            "**/test_*.py",
            "*_test.py",
            "**/*_test.py",
            "conftest.py",
            "**/conftest.py",
        ]
    )
    """Globs taken out of ``production``: tests are not production code (pytest's default
    ``test_*.py`` and ``*_test.py``, and the ``tests``/``test`` folders)."""
    budget: list[list[int]] = msgspec.field(default_factory=lambda: [[3, 20], [10, 10], [25, 5]])
    """``[max fan-in, max changed lines]`` rows, ascending; beyond the last row the budget is 0."""
    seam_limit: int = 1
    """How many new functions/modules one change may add."""
    reach: bool = True
    """Whether the review asks that a recorded case run every line of production code the
    change touches, as it was at BASE (:mod:`lockstep.gates.reach`)."""


class _Config(Table, frozen=True):
    """The whole configuration: the settings and the tables every kind shares; the
    oracles' tables are the fields :data:`Config` adds, one per registered kind."""

    lockstep: Settings = Settings()
    rule: list[RuleSpec] = []
    secret: list[SecretSpec] = []
    gates: GatesSpec = GatesSpec()

    def tables(self, kind: str) -> list[OracleSpec]:
        """The ``[[kind]]`` tables, in file order."""
        tables: list[OracleSpec] = getattr(self, kind)
        return tables


if TYPE_CHECKING:

    class Config(_Config, frozen=True):
        """What mypy sees of :data:`Config`: each kind's tables are a field named after
        the kind (``config.pins``), made from the registry at import time."""

        def __init__(
            self,
            *,
            lockstep: Settings = Settings(),  # noqa: B008 (a signature only)
            rule: list[RuleSpec] = [],  # noqa: B006
            secret: list[SecretSpec] = [],  # noqa: B006
            gates: GatesSpec = GatesSpec(),  # noqa: B008
            **tables: list[OracleSpec],
        ) -> None: ...

        def __getattr__(self, kind: str) -> list[Any]: ...

else:
    Config = msgspec.defstruct(
        "Config",
        [(kind, list[spec], []) for kind, spec in KIND_SPECS.items()],
        bases=(_Config,),
        module=__name__,
        frozen=True,
        forbid_unknown_fields=True,
        kw_only=True,
    )
    Config.__doc__ = """The whole configuration: :class:`_Config` plus, for each registered
    kind (:data:`lockstep.kinds.KIND_SPECS`), its ``[[kind]]`` tables as a list of its spec.
    Built from the registry so that msgspec decodes each kind's tables strictly into
    its own type and names a bad key exactly where it is."""


def config_of(settings: Settings, *specs: OracleSpec) -> Config:
    """A configuration of ``specs`` alone, with no file behind it (a ``@record_io``
    ledger verified in a fresh interpreter)."""
    tables: dict[str, list[OracleSpec]] = {}
    for spec in specs:
        tables.setdefault(spec.kind, []).append(spec)
    return msgspec.structs.replace(Config(lockstep=settings), **tables)


_ARRAY_KEYS: Final = (*KINDS, "rule", "secret", "gates")


class Project(msgspec.Struct, frozen=True, dict=True):
    """A located, validated configuration and the root everything resolves against."""

    root: Path
    config_path: Path
    config: Config
    surfaces: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    """The name of each ``package`` ledger -> the names of the ledgers it expanded into."""
    surface_origin: dict[str, int] = msgspec.field(default_factory=dict)
    """With a ``package`` ledger: each ledger's name -> the index of its ``[[ledger]]`` in
    the file (a package's expanded targets share theirs; :func:`expand_surfaces`)."""
    tested: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Oracles that exist only once recorded (a package ledger's members beyond its
    public surface, :meth:`OracleSpec.tested_members`): name -> its file in the oracle
    folder.  A member the suite never calls directly is no oracle at all."""

    @functools.cached_property
    def oracle_dir(self) -> Path:
        """The oracle folder, resolved once per project: a run asks for it for every oracle
        file it names (listing a package's recorded members asked for it per member, and
        resolving a path is a dozen system calls).  A project is a reading of the
        configuration at one moment; a folder moved afterwards is met when it is used."""
        return self.resolve(self.config.lockstep.dir, key="lockstep.dir")

    @functools.cached_property
    def real_root(self) -> Path:
        """The root with every link resolved, once per project, as :attr:`oracle_dir`: each
        verifying fork and each ledger's replay asked for it several times (a dozen system
        calls each)."""
        return self.root.resolve()

    def resolve(self, rel: str, *, key: str) -> Path:
        """Resolve a configured path against the root; refuse one that escapes it."""
        candidate = (self.root / rel).resolve()
        root = self.real_root
        if candidate != root and root not in candidate.parents:
            raise ConfigError(f"{self.config_name}: {key}: path {rel!r} escapes the project root")
        return candidate

    @property
    def config_name(self) -> str:
        return self.config_path.name

    def oracles(self, *, former: bool = False) -> Iterator[OracleSpec]:
        """Every configured oracle, in file order by kind (an oracle of :attr:`tested` only
        once recorded); with ``former``, then each of :attr:`former` (what a replay, a
        status or pytest's items must show: what only reads an oracle's cases)."""
        is_oracle = self.oracle_test()  # once; a list that cannot be read is an error
        for spec in self.all_oracles():
            if is_oracle(spec.name):
                yield spec
        if former:
            yield from self.former.values()

    @functools.cached_property
    def former(self) -> dict[str, OracleSpec]:
        """The ledgers of a ``package`` ledger's members that were recorded and that today's
        sources no longer have (a method renamed or removed), by name.

        Told by the oracle folder: a member's ledger file, or its name in the list of members
        recorded beyond the surface, with no member of that name today.  Each replays as an
        error on its cases (the rows of a removed member are not replayed green by going
        unread: hyperlink's ``URL.fromText`` renamed, its suite failed two tests and
        ``lockstep replay`` was green with 858 of 860 cases), never calling anything; the
        error says to delete its file where the removal is meant.  A name ``exclude``
        leaves out is no such ledger."""
        if not self.surfaces:
            return {}
        try:
            entries = [e.name for e in os.scandir(self.oracle_dir)]
        except OSError:
            entries = []
        listed = self.listed_beyond()
        taken = {spec.name for spec in self.all_oracles()}
        found: dict[str, OracleSpec] = {}
        # the longest package name first: "pkg.sub.x" is "pkg.sub"'s, not "pkg"'s
        for package_name in sorted(self.surfaces, key=len, reverse=True):
            members = self.surfaces[package_name]
            if not members:
                continue
            package_spec = msgspec.structs.replace(
                self.oracle(members[0]), name=package_name, target=""
            )
            if not getattr(package_spec, "private", True):
                # kept to the public surface: a ledger of a member beyond it, recorded while
                # it was not, names a member the package still has (no former member)
                beyond = msgspec.structs.replace(package_spec, private=True)
                where = f"{self.config_name}: {self.key(package_spec)}"
                taken.update(m.name for m, _ in beyond.tested_members(self.root, where))
            for spec in package_spec.former_members(entries, listed, taken):
                taken.add(spec.name)
                found[spec.name] = spec
        return found

    def all_oracles(self) -> Iterator[OracleSpec]:
        """Every configured oracle, those of :attr:`tested` not recorded yet included: what
        a recording of the suite installs."""
        for kind in KINDS:
            yield from self.config.tables(kind)

    def recorded_member(self, name: str) -> bool:
        """Whether an oracle of :attr:`tested` was recorded: its file is in the oracle
        folder (a folder or link in its place too: reading it says what is wrong), or the
        folder's list of what recordings wrote names it (then a deleted file is missed,
        red: :mod:`lockstep.store.beyond_surface`)."""
        return self._has_file(name) or name in self.listed_beyond()

    def _has_file(self, name: str) -> bool:
        return os.path.lexists(self.oracle_dir / self.tested[name])

    def oracle_test(self) -> Callable[[str], bool]:
        """Whether a configured name is an oracle now: any name outside :attr:`tested`, a
        member of it once recorded (:meth:`recorded_member`); the list is read once, each
        member's file looked for only when asked about (a caller that needs one recorded
        member per module asks about a few, not every member)."""
        listed = self.listed_beyond()
        tested = self.tested
        return lambda name: name not in tested or name in listed or self._has_file(name)

    def listed_beyond(self) -> frozenset[str]:
        """The members beyond a package's surface that recordings wrote a ledger for."""
        return beyond_surface.listed(self.oracle_dir) if self.tested else frozenset()

    def key(self, spec: OracleSpec, field: str = "") -> str:
        """Where ``spec`` (or one of its fields) sits in the configuration: ``corpus[0].render``.

        Every message about a configured value names this key, so the user can find it.
        """
        tables = self.config.tables(spec.kind)
        index = self.surface_origin.get(spec.name)
        if index is None:
            index = next((i for i, s in enumerate(tables) if s.name == spec.name), 0)
        key = f"{spec.kind}[{index}]"
        if field == "target" and self._surface_member(spec.name):
            field = "package"  # the table names the package; the member's target is read
        return f"{key}.{field}" if field else key

    def _surface_member(self, name: str) -> bool:
        """Whether oracle ``name`` is a member a ``package`` table stands for."""
        return name in self._surface_members

    @functools.cached_property
    def _surface_members(self) -> frozenset[str]:
        return frozenset(name for members in self.surfaces.values() for name in members)

    def where(self, spec: OracleSpec, field: str = "") -> str:
        """:meth:`key` with the config file in front: ``lockstep.toml: corpus[0].render``."""
        return f"{self.config_name}: {self.key(spec, field)}"

    def select(
        self, names: tuple[str, ...] | list[str], *, former: bool = False
    ) -> list[OracleSpec]:
        """The oracles ``names`` name, in the order given, or every one when none is; the
        name of a ``package`` ledger stands for all its members (``former``: and its
        :attr:`former` ones)."""
        if not names:
            return list(self.oracles(former=former))
        return [self.oracle(name) for name in self.expand_names(names, former=former)]

    def expand_names(
        self, names: tuple[str, ...] | list[str], *, former: bool = False
    ) -> tuple[str, ...]:
        """``names`` with each ``package`` ledger's name replaced by its members' names
        (each name once, in the order given; ``former``: then its :attr:`former` ones)."""
        out: dict[str, None] = {}
        is_oracle: Callable[[str], bool] | None = None
        for name in names:
            members = self.surfaces.get(name)
            if members is None:
                out[name] = None
                continue
            is_oracle = is_oracle or self.oracle_test()
            out.update(dict.fromkeys(filter(is_oracle, members)))
            if former:
                out.update(dict.fromkeys(n for n in self.former if n.startswith(f"{name}.")))
        return tuple(out)

    def oracle(self, name: str) -> OracleSpec:
        """The oracle called ``name`` (one of :attr:`former` too); a usage error lists the
        names that exist."""
        for spec in self.all_oracles():
            if spec.name == name:
                return spec
        if self.surfaces and name in self.former:
            return self.former[name]
        names = [s.name for s in self.oracles()]
        shown = names[:KNOWN_SHOWN] + (
            [f"… (+{len(names) - KNOWN_SHOWN})"] * (len(names) > KNOWN_SHOWN)
        )
        known = ", ".join(shown) or "none configured"
        raise ConfigError(
            f"{self.config_name}: no oracle named {name!r}{_file_named(name, names)} "
            f"(known: {known})"
        )


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


def _load_toml(path: Path, shown: Path) -> dict[str, Any]:
    """The TOML at ``path``; an error names ``shown`` (the file as found, not where its
    link points)."""
    try:
        data = read_file(path, through_links=True)
    except OSError as e:
        raise ConfigError(f"{shown}: cannot read: {e.strerror}") from None
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
    config = _validated(config, source, "tool.lockstep." if source == PYPROJECT else "")
    _check_consistency(config, source)
    return config


def _validated(config: Config, source: str, prefix: str) -> Config:
    """Each oracle's table after its kind's own checks (:meth:`OracleSpec.validated`).
    ``prefix``: where the tables sit (``tool.lockstep.``)."""
    tables = {
        kind: [spec.validated(f"{source}: {prefix}{kind}[{i}]") for i, spec in enumerate(specs)]
        for kind in KINDS
        if (specs := config.tables(kind))
    }
    return msgspec.structs.replace(config, **tables) if tables else config


class Expanded(msgspec.Struct, frozen=True):
    """A configuration with its tables that stand for several oracles expanded
    (:func:`expand_surfaces`)."""

    config: Config
    surfaces: dict[str, tuple[str, ...]]
    """Each package ledger's name -> its members' ledger names."""
    origin: dict[str, int]
    """Each oracle's name -> the index of the table it came from, for messages."""
    tested: dict[str, str] = msgspec.field(default_factory=dict)
    """The oracles that exist only once recorded (see :attr:`Project.tested`)."""


def expand_surfaces(config: Config, root: Path, source: str) -> Expanded:
    """Each table that stands for several oracles (:meth:`OracleSpec.expanded`: a
    ``package`` ledger) replaced by those oracles."""
    tables: dict[str, list[OracleSpec]] = {}
    origin: dict[str, int] = {}
    surfaces: dict[str, tuple[str, ...]] = {}
    tested: dict[str, str] = {}
    for kind in KINDS:
        specs: list[OracleSpec] = []
        for i, spec in enumerate(config.tables(kind)):
            where = f"{source}: {kind}[{i}]"
            members = spec.expanded(root, where)
            if members is not None:
                extra = spec.tested_members(root, where)
                tested.update((member.name, file) for member, file in extra)
                members = (*members, *(member for member, _ in extra))
            names = tuple(member.name for member in members or (spec,))
            if members is not None:
                surfaces[spec.name] = names
            specs.extend(members or (spec,))
            origin.update(dict.fromkeys(names, i))
        tables[kind] = specs
    if not surfaces:
        return Expanded(config, {}, {})
    expanded = msgspec.structs.replace(config, **tables)
    _check_consistency(expanded, source)
    return Expanded(expanded, surfaces, origin, tested)


def _check_consistency(config: Config, source: str) -> None:
    seen: dict[str, str] = {}
    for kind in KINDS:
        for i, spec in enumerate(config.tables(kind)):
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
    if not 0 <= config.lockstep.object_calls <= 10**9:
        raise ConfigError(
            f"{source}: lockstep.object_calls: must be between 0 (no limit) and 1000000000"
        )
    if not 0 <= config.lockstep.object_bytes <= 2**40:
        raise ConfigError(
            f"{source}: lockstep.object_bytes: must be between 0 (no limit) and {2**40}"
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
        if candidate.exists():  # a folder or a device named so is reported when read
            return candidate
        pyproject = folder / PYPROJECT
        if pyproject.is_file():
            try:
                data = tomllib.loads(read_file(pyproject, through_links=True).decode("utf-8"))
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


KNOWN_SHOWN: Final = 12
"""Oracle names an unknown name's error lists (a package surface has hundreds: one line of
seven kilobytes named more-itertools' 194)."""


def _file_named(name: str, names: list[str]) -> str:
    """``; that is the file of oracle 'x'`` when ``name`` is an oracle's file
    (``lockstep/x.ledger.jsonl``) rather than its name, else ""."""
    base = name.replace("\\", "/").rpartition("/")[2]
    if not base.endswith((".json", ".jsonl")):
        return ""
    owners = [n for n in names if base.startswith(f"{n}.")]
    return f"; that is the file of oracle {max(owners, key=len)!r}" if owners else ""


def config_location(start: Path | None = None, *, config_path: Path | None = None) -> Path | None:
    """The configuration file :func:`load_project` reads, not read: ``config_path``, or the
    one ``LOCKSTEP_CONFIG`` names, or the nearest found walking up from ``start`` (None:
    none is found).  Its folder, resolved, is the project's root."""
    explicit = config_path or (Path(p) if (p := os.environ.get("LOCKSTEP_CONFIG")) else None)
    return explicit or find_config(start)


def load_project(start: Path | None = None, *, config_path: Path | None = None) -> Project:
    """Find, read and validate the configuration.

    ``LOCKSTEP_CONFIG`` in the environment, or ``config_path``, names the file
    explicitly; otherwise it is found by walking up from ``start``.
    """
    path = config_location(start, config_path=config_path)
    if path is None:
        raise ConfigError(
            f"no {CONFIG_FILE} (or [tool.lockstep] in {PYPROJECT}) found here or in any parent"
            " folder; create one (see the README) or run from the project root"
        )
    # The project is the folder the file is found in, a link's too (its target's folder
    # named every ledger "missing" at paths that were there).
    try:
        found, path = path, path.parent.resolve() / path.name
        there = path.exists()
    except (OSError, RuntimeError) as e:  # a name too long, a folder that loops (RuntimeError)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ConfigError(f"{path}: cannot read: {reason}") from None
    if not there:
        raise ConfigError(f"{path}: config file not found")
    data = _load_toml(path, found)
    if path.name == PYPROJECT:
        raw = _from_pyproject(data)
        if raw is None:
            raise ConfigError(f"{path.name}: has no [tool.lockstep] table")
    else:
        raw = data
    return expanded_project(parse_config(raw, path.name), path)


def expanded_project(config: Config, path: Path) -> Project:
    """The project ``config`` (read from the file at ``path``) configures, each table that
    stands for several oracles expanded (:func:`expand_surfaces`)."""
    found = expand_surfaces(config, path.parent, path.name)
    project = Project(
        root=path.parent,
        config_path=path,
        config=found.config,
        surfaces=found.surfaces,
        surface_origin=found.origin,
        tested=found.tested,
    )
    if config.lockstep.test_modules:  # each must name a test module inside the root
        from lockstep.suite_modules import suite_modules

        suite_modules(project)
    return project
