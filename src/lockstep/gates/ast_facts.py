"""Facts about one Python module read from its syntax tree, for comparing BASE with HEAD.

The review judges a change by what the code *says*, not by text: a public
signature (parameters, their kinds and defaults), the definitions a change
adds, reads of the world (clock, randomness, environment, network, locale,
time zone) and output (``print``, logging, writes to ``sys.stdout``/``stderr``).
Names are resolved through the module's imports, so ``from datetime import
datetime as dt; dt.now()`` is the clock and ``import os as o; o.getenv`` is
the environment, whatever the local spelling.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

READ_PREFIXES: Final[dict[str, str]] = {
    # clock
    "time.time": "clock",
    "time.time_ns": "clock",
    "time.monotonic": "clock",
    "time.monotonic_ns": "clock",
    "time.perf_counter": "clock",
    "time.perf_counter_ns": "clock",
    "time.process_time": "clock",
    "time.localtime": "clock",
    "time.gmtime": "clock",
    "time.ctime": "clock",
    "time.asctime": "clock",
    "time.strftime": "clock",
    "datetime.datetime.now": "clock",
    "datetime.datetime.utcnow": "clock",
    "datetime.datetime.today": "clock",
    "datetime.date.today": "clock",
    # randomness
    "random": "randomness",
    "secrets": "randomness",
    "uuid.uuid1": "randomness",
    "uuid.uuid4": "randomness",
    "os.urandom": "randomness",
    "os.getrandom": "randomness",
    "numpy.random": "randomness",
    # environment
    "os.environ": "environment",
    "os.environb": "environment",
    "os.getenv": "environment",
    "os.getenvb": "environment",
    # network
    "socket": "network",
    "urllib.request": "network",
    "urllib.urlopen": "network",
    "urllib3": "network",
    "http.client": "network",
    "requests": "network",
    "httpx": "network",
    "aiohttp": "network",
    "ftplib": "network",
    "smtplib": "network",
    # locale and time zone
    "locale": "locale",
    "time.tzname": "timezone",
    "time.timezone": "timezone",
    "time.altzone": "timezone",
    "time.daylight": "timezone",
    "time.tzset": "timezone",
    "tzlocal": "timezone",
    "dateutil.tz.tzlocal": "timezone",
}
"""Dotted names (and everything below them) that read the world outside the arguments."""

LOG_METHODS: Final = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
STREAM_WRITES: Final = frozenset(
    f"sys.{stream}.{method}"
    for stream in ("stdout", "stderr", "__stdout__", "__stderr__")
    for method in ("write", "writelines")
)


@dataclass(frozen=True)
class Signature:
    """A public callable's or class's calling contract, as text (annotations left out)."""

    qualname: str
    text: str
    line: int


@dataclass(frozen=True)
class Read:
    """A reference to something that reads the world, e.g. ``datetime.datetime.now`` (clock)."""

    name: str
    category: str
    line: int
    source: str


@dataclass(frozen=True)
class Output:
    """A call that prints or logs; ``key`` is its callee and arguments with variable names blanked,
    so renaming a variable does not count as a change of output but a new message does."""

    key: str
    line: int
    source: str


@dataclass(frozen=True)
class ModuleFacts:
    signatures: tuple[Signature, ...]
    definitions: frozenset[str]
    """Qualnames of functions, classes and methods (not functions nested in functions)."""
    reads: tuple[Read, ...]
    outputs: tuple[Output, ...]


@dataclass(frozen=True)
class ParseFailure:
    """A file that is not valid Python; reported in the review instead of crashing it."""

    line: int
    message: str


def is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def facts_of(source: bytes) -> ModuleFacts | ParseFailure:
    """Read the facts of one module's source; a syntax error becomes a :class:`ParseFailure`."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return ParseFailure(e.lineno or 0, e.msg)
    except ValueError as e:  # null bytes
        return ParseFailure(0, str(e))
    text = source.decode("utf-8", "replace").splitlines()
    aliases = _aliases(tree)
    signatures: list[Signature] = []
    definitions: set[str] = set()
    _walk_definitions(tree.body, "", True, signatures, definitions)
    return ModuleFacts(
        signatures=tuple(signatures),
        definitions=frozenset(definitions),
        reads=tuple(_reads(tree, aliases, text)),
        outputs=tuple(_outputs(tree, aliases, text)),
    )


# -- signatures and definitions ------------------------------------------------------------

_CONVENTION_DECORATORS: Final = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "abstractmethod", "overload"}
)


def _walk_definitions(
    body: list[ast.stmt],
    prefix: str,
    public_scope: bool,
    signatures: list[Signature],
    definitions: set[str],
) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            qualname = prefix + node.name
            definitions.add(qualname)
            public = public_scope and is_public(node.name)
            if isinstance(node, ast.ClassDef):
                if public:
                    signatures.append(Signature(qualname, _class_text(node), node.lineno))
                _walk_definitions(node.body, qualname + ".", public, signatures, definitions)
            elif public:
                signatures.append(Signature(qualname, _function_text(node), node.lineno))
        elif isinstance(node, ast.If | ast.Try):
            # definitions under `if TYPE_CHECKING:` / `try: ... except ImportError:` are still defs
            for block in (node.body, node.orelse, *(h.body for h in getattr(node, "handlers", []))):
                _walk_definitions(block, prefix, public_scope, signatures, definitions)


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if last in _CONVENTION_DECORATORS or last.endswith(("setter", "deleter")):
            names.append("@" + ast.unparse(target))
    return names


def _function_text(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    a = node.args
    parts: list[str] = []
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(
        a.defaults
    )
    for i, arg in enumerate(positional):
        default = defaults[i]
        parts.append(arg.arg if default is None else f"{arg.arg}={ast.unparse(default)}")
        if a.posonlyargs and i == len(a.posonlyargs) - 1:
            parts.append("/")
    if a.vararg is not None:
        parts.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        parts.append("*")
    for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        parts.append(arg.arg if kw_default is None else f"{arg.arg}={ast.unparse(kw_default)}")
    if a.kwarg is not None:
        parts.append("**" + a.kwarg.arg)
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    decorators = " ".join(_decorator_names(node))
    head = f"{decorators} " if decorators else ""
    return f"{head}{keyword} {node.name}({', '.join(parts)})"


def _class_text(node: ast.ClassDef) -> str:
    bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
    return f"class {node.name}({', '.join(bases)})" if bases else f"class {node.name}"


# -- name resolution ---------------------------------------------------------------------------


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → the absolute dotted name it was imported as (wherever the import sits)."""
    table: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    table[root] = root
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    table[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return table


def _chain(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _resolve(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts = _chain(node)
    if parts is None or parts[0] not in aliases:
        return None
    return ".".join([aliases[parts[0]], *parts[1:]])


def _category(name: str) -> tuple[str, str] | None:
    best: tuple[str, str] | None = None
    for prefix, category in READ_PREFIXES.items():
        if (name == prefix or name.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, category)
    return best


def _line(text: list[str], lineno: int) -> str:
    return text[lineno - 1].strip() if 0 < lineno <= len(text) else ""


def _reads(tree: ast.Module, aliases: dict[str, str], text: list[str]) -> Iterator[Read]:
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute | ast.Name) or id(node) in inner:
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            continue
        name = _resolve(node, aliases)
        if name is None:
            continue
        found = _category(name)
        if found is not None:
            # report the watched name itself (os.environ, not os.environ.get)
            yield Read(found[0], found[1], node.lineno, _line(text, node.lineno))


class _Blank(ast.NodeTransformer):
    """Blank local variable names so a rename is not an output change."""

    def __init__(self, keep: set[str]) -> None:
        self.keep = keep

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return node if node.id in self.keep else ast.copy_location(ast.Name("_", node.ctx), node)


def _output_callee(call: ast.Call, aliases: dict[str, str]) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "print" and "print" not in aliases:
        return "print"
    resolved = _resolve(func, aliases)
    if resolved is not None:
        if resolved in STREAM_WRITES:
            return resolved
        if resolved.startswith("logging.") and resolved.rsplit(".", 1)[1] in LOG_METHODS:
            return resolved
    if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS:
        receiver = ast.unparse(func.value)
        if "log" in receiver.lower():
            return f"<logger>.{func.attr}"
    return None


def _outputs(tree: ast.Module, aliases: dict[str, str], text: list[str]) -> Iterator[Output]:
    keep = set(aliases)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = _output_callee(node, aliases)
        if callee is None:
            continue
        blank = _Blank(keep)
        args = [ast.unparse(blank.visit(_copy(a))) for a in node.args]
        kwargs = [f"{k.arg}={ast.unparse(blank.visit(_copy(k.value)))}" for k in node.keywords]
        key = f"{callee}({', '.join(args + kwargs)})"
        yield Output(key, node.lineno, _line(text, node.lineno))


def _copy(node: ast.expr) -> ast.expr:
    copied = ast.parse(ast.unparse(node), mode="eval").body
    return copied
