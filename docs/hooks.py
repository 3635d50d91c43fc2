"""MkDocs hook: the reference pages' tables are generated from the code, never copied.

A page asks for a table with a marker line; ``on_page_markdown`` replaces it:

* ``<!-- lockstep:config -->`` — every table and key of ``lockstep.toml``, from the
  msgspec structs of ``lockstep.config`` (types and defaults through ``msgspec.inspect``,
  descriptions from the attribute docstrings in the source);
* ``<!-- lockstep:pytest -->`` — the plugin's command-line options and ini keys, as the
  plugin's ``pytest_addoption`` registers them;
* ``<!-- lockstep:env -->`` — every ``LOCKSTEP_*`` variable the source reads. A variable
  found in ``src/`` without a description below (or described but no longer read) fails
  the build, so the page cannot fall behind the code.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "lockstep"

ENVIRONMENT: dict[str, str] = {
    "LOCKSTEP_CONFIG": (
        "Path of the configuration file to use instead of searching upwards from the "
        "working folder for `lockstep.toml` or a `pyproject.toml` with `[tool.lockstep]`."
    ),
    "LOCKSTEP_FLUSH_EVERY": (
        "`@record_io`: also write a decorated function's new rows every N of its calls "
        "(bounds what SIGKILL, `os._exit` or a crash can lose). Default: only at the end."
    ),
    "LOCKSTEP_IMPORTSPY_OUT": (
        "Internal: set by `warm = true` pins recording on the extra run that lists the "
        "modules a program imports (where the import spy writes them). Not for users."
    ),
    "LOCKSTEP_IMPORTSPY_PYTHONPATH": (
        "Internal: the program's own `PYTHONPATH`, kept aside while the import spy is put "
        "on the path for that extra run, and restored before the program starts."
    ),
    "LOCKSTEP_SPILL_AT": (
        "Ledger recording: distinct rows kept in memory before they spill to a sorted "
        "scratch file in `TMPDIR` (default 50,000). A value that is not a positive number "
        "is said in a warning and ignored."
    ),
    "LOCKSTEP_RECORD_IO_OFF": (
        "Any non-empty value switches `@record_io` off in this process: decorated functions "
        "run unrecorded. lockstep sets it in the fresh interpreter that verifies recorded "
        "rows; set it yourself to replay a ledger while the decorator is still in place."
    ),
    "LOCKSTEP_ENVSPY_OUT": (
        "Internal: set by `lockstep record` / `probe` in a Python program it runs, to learn "
        "which environment keys the program reads. The spy removes it before the program "
        "starts; do not set it."
    ),
    "LOCKSTEP_PENDING_FIXTURES": (
        "Internal: set by `lockstep mine` for the fresh interpreter that verifies the "
        "fixtures it records, naming the temporary folder they wait in until recorded; "
        "do not set it."
    ),
    "LOCKSTEP_INIT_SUITE_REQUEST": (
        "Internal: set by `lockstep init` for the one run of the suite that ranks a "
        "package's surface by its calls, naming the temporary file that says what to count "
        "and where to write the counts; do not set it."
    ),
    "LOCKSTEP_RECORDING_TZ": (
        "Internal: set for the fresh interpreter that verifies new cases, which runs in "
        "another local time zone (`TZ`) than the recording: the recording's `TZ`, so a case "
        "that reproduces only there is named as the zone's; do not set it."
    ),
    "LOCKSTEP_ENVSPY_PYTHONPATH": (
        "Internal, with `LOCKSTEP_ENVSPY_OUT`: the program's own `PYTHONPATH`, restored "
        "before it starts; do not set it."
    ),
}
"""What each ``LOCKSTEP_*`` variable read under ``src/lockstep`` does."""

_ENV_NAME = re.compile(r"\bLOCKSTEP_[A-Z][A-Z0-9_]*\b")


def environment_names() -> set[str]:
    """Every ``LOCKSTEP_*`` name that appears in lockstep's Python source."""
    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        names.update(_ENV_NAME.findall(path.read_text(encoding="utf-8")))
    return names


def environment_table() -> str:
    found = environment_names()
    undocumented = sorted(found - ENVIRONMENT.keys())
    gone = sorted(ENVIRONMENT.keys() - found)
    if undocumented or gone:
        raise ValueError(
            f"docs/hooks.py ENVIRONMENT is out of date: undocumented {undocumented}, "
            f"no longer read {gone}"
        )
    rows = ["| variable | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {ENVIRONMENT[name]} |" for name in sorted(found)]
    return "\n".join(rows)


# -- configuration ---------------------------------------------------------------------

_SHARED: tuple[tuple[str, str, bool], ...] = (
    ("rule", "RuleSpec", True),
    ("secret", "SecretSpec", True),
    ("gates", "GatesSpec", False),
)
"""The tables after the oracle kinds' (which come from the registry, ``lockstep.kinds``)."""


def _tables() -> list[tuple[str, type, bool]]:
    """``(key, struct, array)`` of every table: the settings, each kind's, the shared ones."""
    from lockstep import config
    from lockstep.kinds import KIND_SPECS

    return [
        ("lockstep", config.Settings, False),
        *((kind, spec, True) for kind, spec in KIND_SPECS.items()),
        *((key, getattr(config, name), array) for key, name, array in _SHARED),
    ]


def _attribute_docs(source: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Class name -> (class docstring, field -> the docstring written under it)."""
    docs: dict[str, tuple[str, dict[str, str]]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, str] = {}
        body = node.body
        for here, after in itertools.pairwise(body):
            if (
                isinstance(here, ast.AnnAssign)
                and isinstance(here.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                fields[here.target.id] = inspect.cleandoc(after.value.value)
        docs[node.name] = (inspect.cleandoc(ast.get_docstring(node) or ""), fields)
    return docs


def _type_name(info: Any) -> str:
    ti = msgspec.inspect
    if isinstance(info, ti.StrType):
        return "string"
    if isinstance(info, ti.BoolType):
        return "boolean"
    if isinstance(info, ti.IntType):
        return "integer"
    if isinstance(info, ti.FloatType):
        return "number"
    if isinstance(info, ti.NoneType):
        return "absent"
    if isinstance(info, ti.LiteralType):
        return " \\| ".join(f'`"{v}"`' if isinstance(v, str) else f"`{v}`" for v in info.values)
    if isinstance(info, ti.ListType):
        return f"list of {_type_name(info.item_type)}"
    if isinstance(info, ti.UnionType):
        return " or ".join(_type_name(t) for t in info.types)
    return type(info).__name__


def _default(field: Any) -> str:
    if field.required:
        return "required"
    value = field.default
    if value is msgspec.NODEFAULT:
        value = field.default_factory()
    if isinstance(value, str):
        return f'`"{value}"`'
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return "`" + msgspec.json.encode(value).decode().replace(",", ", ") + "`"
    return f"`{value}`"


def _md(text: str) -> str:
    """A docstring as one table cell: reST literals become Markdown code, roles plain, and
    ``<`` outside code is escaped (``<dir>`` is not an HTML tag)."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    parts = " ".join(text.split()).split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside backticks
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def _class_docs(cls: type) -> tuple[str, dict[str, str]]:
    """A table's docstring and its fields' docstrings, in the order its source writes them
    (a field a base class documents comes after the class's own)."""
    fields: dict[str, str] = {}
    doc = ""
    for klass in cls.__mro__:
        source = inspect.getsourcefile(klass) if klass.__module__.startswith("lockstep") else None
        if source is None:
            continue
        class_doc, field_docs = _attribute_docs(Path(source).read_text(encoding="utf-8")).get(
            klass.__name__, ("", {})
        )
        doc = doc or class_doc
        for name, text in field_docs.items():
            fields.setdefault(name, text)
    return doc, fields


def config_reference() -> str:
    parts: list[str] = []
    for key, cls, array in _tables():
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        class_doc, field_docs = _class_docs(cls)
        heading = f"[[{key}]]" if array else f"[{key}]"
        parts.append(f"### `{heading}`\n")
        parts.append(_md(class_doc.split("\n\n")[0]) + "\n")
        parts.append("| key | type | default | meaning |")
        parts.append("|---|---|---|---|")
        order = list(field_docs)
        fields = sorted(info.fields, key=lambda f: order.index(f.name) if f.name in order else 99)
        for field in fields:
            if field.name == "kind":  # the tag that tells the oracle kinds apart, not a key
                continue
            doc = _md(field_docs.get(field.name, ""))
            parts.append(
                f"| `{field.name}` | {_type_name(field.type)} | {_default(field)} | {doc} |"
            )
        parts.append("")
    return "\n".join(parts)


# -- pytest ----------------------------------------------------------------------------


class _Group:
    def __init__(self, options: list[tuple[list[str], dict[str, Any]]]) -> None:
        self.options = options

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((list(names), attrs))

    _addoption = addoption


class _Parser:
    """Stands in for ``pytest.Parser``: records what the plugin registers."""

    def __init__(self) -> None:
        self.options: list[tuple[list[str], dict[str, Any]]] = []
        self.ini: list[tuple[str, str, Any, Any]] = []

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> _Group:
        return _Group(self.options)

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append((list(names), attrs))

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None:
        self.ini.append((name, help, type, default))


def pytest_reference() -> str:
    from lockstep.pytest import plugin

    parser = _Parser()
    plugin.pytest_addoption(parser)  # type: ignore[arg-type]
    rows = ["| option | what it does |", "|---|---|"]
    for names, attrs in parser.options:
        spelled = ", ".join(f"`{n}`" for n in names)
        if attrs.get("action") not in ("store_true", "store_false", "count"):
            metavar = attrs.get("metavar") or attrs.get("dest") or names[-1].lstrip("-")
            choices = attrs.get("choices")
            value = "|".join(choices) if choices else str(metavar).upper()
            spelled = ", ".join(f"`{n}={value}`" for n in names)
        help_text = _md(str(attrs.get("help", "")).replace("%%", "%"))
        rows.append(f"| {spelled} | {help_text} |")
    rows += ["", "| ini key | type | what it does |", "|---|---|---|"]
    for name, help_text, kind, _default_value in parser.ini:
        rows.append(f"| `{name}` | {kind or 'string'} | {_md(help_text)} |")
    return "\n".join(rows)


_GENERATORS = {
    "<!-- lockstep:config -->": config_reference,
    "<!-- lockstep:pytest -->": pytest_reference,
    "<!-- lockstep:env -->": environment_table,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, generate in _GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
