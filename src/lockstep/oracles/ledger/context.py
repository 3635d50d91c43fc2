"""What was unusual about the process when a row was first recorded: the likely cause of a refusal.

A row recorded inside a test suite that does not reproduce in a fresh interpreter owed
its outcome to the recording's context.  Telling the user *which* context turns "guess a
``-k`` exclusion" into a one-line fix (``@pytest.mark.lockstep_skip`` on the named test).
:class:`ContextWatch` snapshots the process when recording starts and, when a new row is
first seen, says in one line what differs from that snapshot:

* a ``unittest.mock`` object bound where a module global (or a class attribute) of the
  target's package was -- a ``mock.patch`` of a collaborator -- or a ``patch.start()`` still
  active anywhere;
* any other module global of the target's package rebound, or a container global (a
  registry: dict, set, list) holding another number of items than at the start;
* a frozen clock: ``time.time`` (or ``localtime``, ``gmtime``, ``monotonic``, ``strftime``)
  or ``datetime.datetime`` / ``datetime.date`` is not the real one (freezegun and
  ``mock.patch("time.time")`` both replace them);
* a locale switch (``locale.setlocale``), or a Django translation activated;
* the decimal context changed (``decimal.localcontext()`` with another rounding or
  precision: what ``quantize`` and ``Decimal`` arithmetic return depends on it);
* an environment variable set, changed or removed (``LANG``, a feature flag):
  ``monkeypatch.setenv`` is the usual way a test does it; ``TZ`` (with ``time.tzset()``)
  is named on its own, as the local time zone changed: such a row is verified in two
  zones (:func:`zone_changed`).

Hash-seed dependence cannot be seen from inside the call; :mod:`lockstep.oracles.verify`
finds it by replaying a refused case under a second hash seed.

Cost: paid only for a call that produces a *new* row, never for a repeated one: a few
identity checks, and one pass over the package's globals (at most :data:`MAX_WATCHED` of
them) in C -- their current values against those at the start, namespace by namespace,
and the sizes of the containers among them -- so that only a global that may have changed
is looked at in Python.
"""

from __future__ import annotations

import datetime
import locale
import operator
import os
import re
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any, Final

from lockstep.canon.text import clip
from lockstep.environ_table import raw_environ
from lockstep.oracles.ledger import clock

MAX_WATCHED: Final = 2000
"""Most module globals and class attributes compared per new row (the first ones found)."""

MAX_CAUSES: Final = 3
"""Causes named in one hint (the rest are counted)."""

_CLOCK: Final = {
    "time.time": time.time,
    "time.localtime": time.localtime,
    "time.gmtime": time.gmtime,
    "time.monotonic": time.monotonic,
    "time.strftime": time.strftime,
}
_REAL_DATETIME: Final = datetime.datetime
_REAL_DATE: Final = datetime.date
_CLOCK_NOW: Final = operator.attrgetter(*(dotted.partition(".")[2] for dotted in _CLOCK))
_CLOCK_REAL: Final = tuple(_CLOCK.values())
_DATES_NOW: Final = operator.attrgetter("datetime", "date")
_DATES_REAL: Final = (_REAL_DATETIME, _REAL_DATE)
_CONTAINERS: Final = (dict, set, list)
_ENV_NOISE: Final = frozenset({"PYTEST_CURRENT_TEST"})
"""Set by pytest around every test: never a cause."""
_MISSING: Final = object()
ZONE_CHANGED: Final = "local time zone changed"
"""How a cause naming a test's own ``TZ`` begins (:func:`zone_changed`)."""


RECURSION_CHANGED: Final = "recursion limit changed"
"""How a hint names a recursion limit a test set (``sys.setrecursionlimit(100)``)."""
_RECURSION_CHANGE: Final = re.compile(re.escape(RECURSION_CHANGED) + r" \((\d+) -> (\d+)\)")


def recursion_changed(hint: str) -> bool:
    """Whether a row's recording hint says a test had *lowered* the recursion limit: the
    row's outcome may owe itself to that limit (a parser's "maximum depth" error raised
    at once), and no replay runs under it (at the interpreter's own limit the same call
    recursed for 27 s on sqlparse before it raised), so such a row is refused.

    A raised limit is not such a cause: Hypothesis raises it around every example it
    runs, and a row that needs more depth than the interpreter's own limit gives does not
    reproduce in the verifying interpreter, which runs under that limit, as replay does.
    Refusing them refused every row a property-based test recorded (natsort: 1,447)."""
    changes = _RECURSION_CHANGE.finditer(hint)
    return any(int(found[2]) < int(found[1]) for found in changes)


def refusal_hint(hint: str, reason: str, cause: str) -> str:
    """What of a refused row's recording ``hint`` its refusal names beside the ``cause``
    verification found: nothing of a hint of caches only (:data:`NO_CLEAR_CAUSE`) once a
    cause is found, and no *raised* recursion limit (:func:`without_raised_limit`)."""
    if cause and hint.startswith(NO_CLEAR_CAUSE):
        return ""
    return without_raised_limit(hint, reason)


def without_raised_limit(hint: str, reason: str) -> str:
    """``hint`` less a *raised* recursion limit, unless ``reason`` (why the row did not
    reproduce) is a recursion error: Hypothesis raises the limit around every example it
    runs, and naming that as the cause of a fresh interpreter's ``ValueError`` (dateutil's
    ``fromutc``: "dt.tzinfo is not self") sent the reader the wrong way."""
    if RECURSION_CHANGED not in hint or "recursion" in reason.lower():
        return hint
    parts = hint.split("; ")
    kept = [
        part
        for part in parts
        if not ((found := _RECURSION_CHANGE.fullmatch(part)) and int(found[2]) > int(found[1]))
    ]
    return "; ".join(kept)


NO_CLEAR_CAUSE: Final = "no clear cause"
"""How a hint begins that names only caches that filled up: it explains no refusal, so a
refused row with it still gets the second hash seed's opinion on its cause (icalendar's
``TimeBase.__hash__`` of naive datetimes, seed-dependent, was put down to caches)."""


def explaining(hints: dict[str, str]) -> set[str]:
    """The ids of the rows whose recording hint names a cause (not :data:`NO_CLEAR_CAUSE`)."""
    return {rid for rid, hint in hints.items() if hint and not hint.startswith(NO_CLEAR_CAUSE)}


def zone_changed(hint: str) -> bool:
    """Whether a row's recording hint says a test had set another local time zone: such a
    row may reproduce in the verifying zone only because that zone shares the answer."""
    return ZONE_CHANGED in hint


def _encoded_noise() -> frozenset[Any]:
    encode = getattr(os.environ, "encodekey", None)
    return frozenset(encode(name) for name in _ENV_NOISE) if encode is not None else frozenset()


_ENV_NOISE_RAW: Final = _encoded_noise()
""":data:`_ENV_NOISE` as the names of ``os.environ``'s own table."""


def _quiet(raw: dict[Any, Any]) -> dict[Any, Any]:
    """The environment's raw table without :data:`_ENV_NOISE`."""
    return {k: v for k, v in raw.items() if k not in _ENV_NOISE_RAW}


def _package_of(target: str) -> str:
    """``shop`` for ``shop.total:total``; ``refs`` for ``refs:parse``."""
    return target.partition(":")[0].split(".")[0]


def _is_mock(value: Any) -> bool:
    mock = sys.modules.get("unittest.mock")
    if mock is None:
        return False
    base = mock.NonCallableMock
    # autospec'd functions carry their mock as .mock
    return isinstance(value, base) or isinstance(getattr(value, "mock", None), base)


def _locale_now() -> str:
    try:
        return locale.setlocale(locale.LC_ALL)  # a query: no second argument changes nothing
    except locale.Error:
        return ""


_DECIMAL_FIELDS: Final = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


def _decimal_now() -> tuple[object, ...] | None:
    """This thread's decimal context (precision, rounding, exponent limits, traps), when
    :mod:`decimal` is loaded: ``localcontext()`` changes what ``quantize`` and every
    ``Decimal`` operation return."""
    module = sys.modules.get("decimal")
    if module is None:
        return None
    return _decimal_fields(module.getcontext())


def _decimal_fields(context: Any) -> tuple[object, ...]:
    """The context's fields, its traps last as a plain ``{signal: on}`` dict: one copy in
    C, where naming the traps that are on walked the mapping in Python at every new row
    (a third of this check's cost).  They are named only when they differ."""
    c = context
    return (c.prec, c.rounding, c.Emin, c.Emax, c.capitals, c.clamp, c.traps.copy())


def _traps_on(traps: object) -> tuple[str, ...]:
    on = traps.items() if isinstance(traps, dict) else ()
    return tuple(sorted(signal.__name__ for signal, trapped in on if trapped))


def _decimal_cause(before: tuple[object, ...] | None, now: tuple[object, ...] | None) -> str:
    """ "decimal context changed (rounding ROUND_HALF_EVEN -> ROUND_HALF_UP)", or ""."""
    if now is None:
        return ""
    if before is None:  # decimal was loaded after recording started: its default context
        module = sys.modules.get("decimal")
        before = _decimal_fields(module.DefaultContext) if module is not None else now
    if now == before:
        return ""
    names = (*_DECIMAL_FIELDS, "traps")
    shown = [(*before[:-1], _traps_on(before[-1])), (*now[:-1], _traps_on(now[-1]))]
    changed = [f"{n} {b} -> {a}" for n, b, a in zip(names, *shown, strict=True) if a != b]
    return f"decimal context changed ({', '.join(changed)})"


def _language_now() -> str:
    """The active Django translation, when Django's translation module is loaded."""
    translation = sys.modules.get("django.utils.translation")
    if translation is None:
        return ""
    try:
        return str(translation.get_language() or "")
    except Exception:
        return ""


SNAPSHOT_ITEMS: Final = 1000
"""Largest container global whose items are kept at the start, to tell a cache that only
filled up with computed objects (never the cause of a refusal by itself) from a registry
a test edited."""


_PLAIN: Final = (str, int, float, bool, bytes, type(None))


def _plain(value: Any) -> bool:
    return isinstance(value, _PLAIN) or (
        type(value) is tuple and all(isinstance(v, _PLAIN) for v in value)
    )


def _plain_items(start: Any, now: Any) -> bool:
    """Whether what a container gained is plain data (a word added to a registry, which
    the row may well depend on) rather than computed objects (a cache of compiled regexes,
    which only saves work and so is never the cause of a different outcome)."""
    if type(now) is dict:
        return all(_plain(k) and _plain(v) for k, v in now.items() if k not in start)
    added = now[len(start) :] if type(now) is list else now - start
    return all(_plain(v) for v in added)


class _Watched:
    __slots__ = ("key", "local", "name", "namespace", "size", "start", "value")

    def __init__(self, name: str, namespace: Any, value: Any) -> None:
        self.name = name
        self.key = name.rpartition(".")[2]
        self.namespace = namespace
        self.value = value
        self.size = len(value) if type(value) in _CONTAINERS else -1
        self.start: Any = value.copy() if 0 <= self.size <= SNAPSHOT_ITEMS else None
        # A threading.local holds per-thread settings (humanize's active translation):
        # its attributes, as this thread sees them, are what changes.
        self.local: dict[str, Any] | None = (
            dict(vars(value)) if isinstance(value, threading.local) else None
        )

    def local_changes(self) -> list[str]:
        """The attributes of a watched ``threading.local`` set, rebound or deleted since."""
        start = self.local
        if start is None:
            return []
        now = vars(self.value)
        return sorted(
            k
            for k in start.keys() | now.keys()
            if start.get(k, _MISSING) is not now.get(k, _MISSING)
        )

    def only_grew(self, now: Any) -> bool:
        """True when every item there at the start is still there, the same object (items
        were only added, as a cache fills)."""
        start = self.start
        if start is None or len(now) < len(start):
            return False
        if type(start) is dict:
            return all(now.get(k, _MISSING) is v for k, v in start.items())
        if type(start) is list:
            return all(a is b for a, b in zip(now, start, strict=False))
        return bool(start <= now)


class ContextWatch:
    """The process as recording started; calling it names what differs now ("" if nothing)."""

    def __init__(self, targets: list[str]) -> None:
        self.packages = {_package_of(t) for t in targets}
        self.locale = _locale_now()
        self.language = _language_now()
        self.decimal = _decimal_now()
        self.recursion = sys.getrecursionlimit()
        self.environ = dict(os.environ)
        self._env_seen: Any = raw_environ()
        """The environment's raw table when last compared, and the cause found then: a dict
        comparison in C per new row, where reading ``os.environ`` decodes every name."""
        self._env_cause: list[str] = []
        self._patches: tuple[list[Any], bool, list[str]] = ([], False, [])
        """The ``patch(...).start()`` patches last seen active, whether time-machine was
        imported then, and the causes they name."""
        self._env_quiet: dict[Any, Any] | None = None
        """:attr:`_env_seen` without :data:`_ENV_NOISE`, once asked (the same while only
        pytest's own variable moves, as it does at every test)."""
        self.watched: list[_Watched] = []
        self.modules: set[str] = set()
        self.known = 0
        self._index = _Index([])
        self._watch_new_modules()

    def _watch_new_modules(self) -> None:
        """Snapshot the package's modules imported since the last look (a test file may
        import a submodule long after recording started); cheap when none were."""
        if len(sys.modules) == self.known:
            return
        self.known = len(sys.modules)
        packages, seen = self.packages, self.modules
        # the new names of the packages first, sorted then: not every module's, at each
        # import a test makes (hundreds of them in a pytest process)
        new = [n for n in list(sys.modules) if n not in seen and n.split(".")[0] in packages]
        for module_name in sorted(new):
            module = sys.modules.get(module_name)
            if isinstance(module, types.ModuleType):
                self.modules.add(module_name)
                self._watch_module(module_name, module, self.packages)

    def _watch_module(self, module_name: str, module: types.ModuleType, packages: set[str]) -> None:
        namespace = object.__getattribute__(module, "__dict__")
        for name, value in list(namespace.items()):
            if len(self.watched) >= MAX_WATCHED:
                return
            if name.startswith("__") or isinstance(value, types.ModuleType):
                continue
            self.watched.append(_Watched(f"{module_name}.{name}", namespace, value))
            if (
                isinstance(value, type)
                and getattr(value, "__module__", "") == module_name
                and module_name.split(".")[0] in packages
            ):
                members = vars(value)  # one view of the class's namespace for all its attributes
                for attr, member in list(members.items()):
                    if not attr.startswith("__") and len(self.watched) < MAX_WATCHED:
                        self.watched.append(
                            _Watched(f"{module_name}.{name}.{attr}", members, member)
                        )

    def __call__(self) -> str:
        self._watch_new_modules()
        causes: list[str] = []
        recursion = sys.getrecursionlimit()
        if recursion != self.recursion:  # first: a cause that refuses is never cut off
            causes.append(f"{RECURSION_CHANGED} ({self.recursion} -> {recursion})")
        causes.extend(self._clock())
        now = _locale_now()
        if now != self.locale:
            causes.append(f"locale switched ({self.locale} -> {now})")
        language = _language_now()
        if language != self.language and not self.language:
            # Django set up after recording began (a conftest's django.setup() at
            # collection): the suite's language from then on, not a test's switch; named,
            # it was every later refusal's cause (semantic_version's hash-seed rows)
            self.language = language
        elif language != self.language:
            causes.append(f"translation switched ({self.language} -> {language})")
        causes.extend(self._environment())  # early: the zone's cause is never cut off
        decimal_changed = _decimal_cause(self.decimal, _decimal_now())
        if decimal_changed:
            causes.append(decimal_changed)

        changed, grown = self._globals()
        causes.extend(changed)
        causes.extend(self._started_patches(causes))
        if not causes and grown:  # only caches filled up: say so, without blaming them
            causes.append(
                f"{NO_CLEAR_CAUSE} ({', '.join(grown[:2])} only gained items, as a cache does)"
            )
        if len(causes) > MAX_CAUSES:
            causes[MAX_CAUSES:] = [f"{len(causes) - MAX_CAUSES} more"]
        return "; ".join(causes)

    def _clock(self) -> list[str]:
        """One cause naming every clock function or class that is not the real one.

        A clock frozen still (:mod:`.clock`) is kept with the row and replayed there: it is
        named with its instant, should the row still not reproduce at that instant.  A
        clock that ticks is named as such: its rows are verified on the real clock."""
        kept = clock.state()
        if kept is None and self._real_clock():
            return []
        if isinstance(kept, clock.Clock):
            return [f"frozen clock at {kept.describe()}, replayed at that instant"]
        ticking = [kept] if isinstance(kept, str) else []
        replaced: list[str] = []
        time_module = sys.modules.get("time", time)
        for dotted, real in _CLOCK.items():
            now = getattr(time_module, dotted.partition(".")[2], real)
            if now is not real:
                replaced.append(f"{dotted} is a mock" if _is_mock(now) else dotted)
        dt_module = sys.modules.get("datetime", datetime)
        classes: tuple[tuple[str, type], ...] = (
            ("datetime.datetime", _REAL_DATETIME),
            ("datetime.date", _REAL_DATE),
        )
        for dotted, cls in classes:
            if getattr(dt_module, dotted.partition(".")[2], cls) is not cls:
                replaced.append(dotted)
        if ticking:
            return [f"{ticking[0]}: only a clock that stands still is replayed"]
        return [f"frozen clock ({', '.join(replaced)} replaced)"] if replaced else []

    @staticmethod
    def _real_clock() -> bool:
        """Every clock function and class is the real one (the usual case: one C pass)."""
        try:
            return all(
                map(operator.is_, _CLOCK_NOW(sys.modules.get("time", time)), _CLOCK_REAL)
            ) and all(
                map(operator.is_, _DATES_NOW(sys.modules.get("datetime", datetime)), _DATES_REAL)
            )
        except AttributeError:  # one is gone: the full look below says what
            return False

    def _environment(self) -> list[str]:
        """One cause naming the environment variables that differ from the start."""
        live = getattr(os.environ, "_data", None)
        if live is not None and live == self._env_seen:
            return list(self._env_cause)
        if live is not None and self._env_seen is not None:
            if self._env_quiet is None:
                self._env_quiet = _quiet(self._env_seen)
            if _quiet(live) == self._env_quiet:
                self._env_seen = raw_environ()  # only pytest's own variable moved: same cause
                return list(self._env_cause)
        self._env_cause = self._environment_now()
        self._env_seen, self._env_quiet = raw_environ(), None
        return list(self._env_cause)

    def _environment_now(self) -> list[str]:
        now = os.environ
        names = sorted(
            (
                {k for k in now if self.environ.get(k, _MISSING) != now[k]}
                | {k for k in self.environ if k not in now}
            )
            - _ENV_NOISE
        )
        causes: list[str] = []
        if "TZ" in names:
            names.remove("TZ")
            before, after = self.environ.get("TZ", "unset"), now.get("TZ", "unset")
            causes.append(f"{ZONE_CHANGED} (TZ {clip(before, 40)} -> {clip(after, 40)})")
        if names:
            shown = ", ".join(names[:4])
            shown += f" and {len(names) - 4} more" if len(names) > 4 else ""
            causes.append(f"environment variable(s) changed: {shown}")
        return causes

    def _globals(self) -> tuple[list[str], list[str]]:
        """The globals changed since the start (causes), and those that only grew."""
        if self._index.count != len(self.watched):
            self._index = _Index(self.watched)
        out: list[str] = []
        grown: list[str] = []
        watched = self.watched
        for i in self._index.suspects():
            _compare(watched[i], out, grown)
        return out, grown

    def _started_patches(self, seen: list[str]) -> list[str]:
        """``patch(...).start()`` patches anywhere (context-manager patches are not listed
        by ``unittest.mock``: those of the package's globals are found above)."""
        mock = sys.modules.get("unittest.mock")
        active = list(getattr(getattr(mock, "_patch", None), "_active_patches", None) or [])
        if not active:
            return []
        traveling = "time_machine" in sys.modules
        known, was_traveling, causes = self._patches
        if (
            was_traveling is not traveling
            or len(known) != len(active)
            or not all(map(operator.is_, known, active))
        ):
            causes = _patch_causes(active, mock)
            self._patches = (active, traveling, causes)  # the same patches, the same causes
        return [cause for cause in causes if cause not in seen]


def _patch_causes(active: list[Any], mock: Any) -> list[str]:
    """What :meth:`ContextWatch._started_patches` names for the patches ``active``."""
    out: list[str] = []
    for patch in active:
        if hasattr(patch, "in_dict"):  # patch.dict(...).start(): no target, a mapping
            held = patch.in_dict
            shown = (
                "os.environ"
                if held is os.environ
                else (held if isinstance(held, str) else type(held).__name__)
            )
            cause = f"mock.patch.dict active on {shown}"
            if cause not in out:
                out.append(cause)
            continue
        owner = getattr(patch, "target", None)
        where = getattr(owner, "__name__", type(owner).__name__)
        if where == "uuid" and "time_machine" in sys.modules:
            continue  # time-machine's own, while it travels (uuid1 reads its clock)
        if owner is mock or getattr(owner, "__module__", None) == "unittest.mock":
            continue  # mock's own (pytest-mock wraps NonCallableMock.assert_called...)
        cause = f"mock.patch active on {where}.{getattr(patch, 'attribute', '?')}"
        if cause not in out:
            out.append(cause)
    return out


def _compare(w: _Watched, out: list[str], grown: list[str]) -> None:
    """Add to ``out`` what is a cause about ``w`` now, or to ``grown`` its name when it is
    a container that only gained computed items (nothing when it is as at the start)."""
    now = w.namespace.get(w.key, _MISSING)
    if now is w.value:
        if w.local is not None and (changed := w.local_changes()):
            out.append(f"module global {w.name} changed ({', '.join(changed)} set)")
            return
        if w.size >= 0 and len(now) != w.size:
            if w.only_grew(now) and not _plain_items(w.start, now):
                grown.append(w.name)
                return
            out.append(f"module global {w.name} changed ({len(now)} items, {w.size} at the start)")
        return
    if _is_mock(now):
        out.append(f"mock.patch active on {w.name}")
    elif isinstance(now, types.ModuleType) and w.value is None:
        # dateutil.rrule's ``global easter; from dateutil import easter`` in ``__init__``: a
        # row thawed without that call finds None there, so it stays a cause, named as such
        out.append(f"module global {w.name} imported lazily since the start (it was None)")
    elif now is _MISSING:
        out.append(f"module global {w.name} deleted")
    else:
        out.append(f"module global {w.name} rebound")


class _Group:
    """The watched names of one namespace (a module's globals, a class's attributes)."""

    __slots__ = ("fetch", "indices", "keys", "namespace", "values")

    def __init__(self, namespace: Any) -> None:
        self.namespace = namespace
        self.keys: list[str] = []
        self.values: list[Any] = []
        self.indices: list[int] = []
        self.fetch: Callable[[Any], tuple[Any, ...]] = tuple

    def done(self) -> None:
        """Make :attr:`fetch`: every watched value of the namespace in one C call, as a
        tuple (one name is fetched twice, so that the result is a tuple all the same)."""
        if len(self.keys) == 1:
            self.keys.append(self.keys[0])
            self.values.append(self.values[0])
            self.indices.append(self.indices[0])
        self.fetch = operator.itemgetter(*self.keys)


class _Index:
    """The watched globals arranged so that a few passes in C find those that may differ.

    :func:`_compare` says nothing about a global still bound to its starting object,
    unless it is a container whose size changed or a ``threading.local``: the suspects
    are exactly the others, found by comparing identities namespace by namespace
    (:class:`_Group`) and the sizes of the starting containers; only they are compared
    in Python, in watch order.
    """

    __slots__ = ("count", "groups", "locals", "sized", "sized_at", "sizes")

    def __init__(self, watched: list[_Watched]) -> None:
        self.count = len(watched)
        groups: dict[int, _Group] = {}
        self.sized: list[Any] = []
        self.sizes: list[int] = []
        self.sized_at: list[int] = []
        self.locals: list[int] = []
        for i, w in enumerate(watched):
            group = groups.get(id(w.namespace))
            if group is None:
                group = groups[id(w.namespace)] = _Group(w.namespace)
            group.keys.append(w.key)
            group.values.append(w.value)
            group.indices.append(i)
            if w.size >= 0:
                self.sized.append(w.value)
                self.sizes.append(w.size)
                self.sized_at.append(i)
            if w.local is not None:
                self.locals.append(i)
        self.groups = list(groups.values())
        for group in self.groups:
            group.done()

    def suspects(self) -> list[int]:
        """The positions (in watch order) of the globals that may differ from the start."""
        found = list(self.locals)
        is_ = operator.is_
        for g in self.groups:
            try:
                same = all(map(is_, g.fetch(g.namespace), g.values))
            except KeyError:  # a global deleted
                same = False
            if not same:
                get = g.namespace.get
                found.extend(
                    i
                    for i, key, value in zip(g.indices, g.keys, g.values, strict=True)
                    if get(key, _MISSING) is not value
                )
        if list(map(len, self.sized)) != self.sizes:
            found.extend(
                i
                for i, value, size in zip(self.sized_at, self.sized, self.sizes, strict=True)
                if len(value) != size
            )
        return sorted(set(found)) if found else found
