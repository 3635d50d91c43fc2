"""Wrapping a target in place so its calls are recorded: functions, methods, async.

:class:`Installation` wraps ``pkg.mod:qualname`` targets for a while (a pytest run, a
driver script), including references other modules took with ``from pkg.mod import
func`` before the wrap, and undoes it; the wrappers hand each call to a
:class:`~.recorder.TargetRecorder` and return or raise exactly what the target did.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import functools
import inspect
import marshal
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.canon._core import _INT_HIGH, _INT_LOW
from lockstep.canon._core import _encoder as _canonical_writer
from lockstep.canon.codec import allow_callables_from
from lockstep.errors import (
    ComparedAsValue,
    MissingMember,
    NotACallable,
    UnimportableModule,
)
from lockstep.oracles.ledger import clock as _clock
from lockstep.oracles.ledger import recorder as _recorder
from lockstep.oracles.ledger.call_state import _Again, _Materialized, _Pending, _Seen
from lockstep.oracles.ledger.compared_names import compared_site
from lockstep.oracles.ledger.format import (
    SELF_FROZEN,
    Param,
    signature_of,
)
from lockstep.oracles.ledger.input_kinds import _MEMO_LEAVES, _memoizable
from lockstep.oracles.ledger.printed import teed
from lockstep.oracles.ledger.recorder import TargetRecorder
from lockstep.surface import names_tests
from lockstep.targets import cached_function, root_on_path, split_target

_INSIDE: Final[contextvars.ContextVar[frozenset[str]]] = contextvars.ContextVar(
    "lockstep_inside_surface", default=frozenset()
)
"""The package surfaces whose recorded call this thread (or task) is inside: a call the
package makes to its own surface from there is part of the outer row, not a row."""


def _own_code(module: object, package: str, prefix: str) -> bool:
    """Whether code of ``module`` is the package's own (its tests, shipped inside it as
    ``pkg/tests/...``, call it from outside, like any user)."""
    if not isinstance(module, str) or not (module == package or module.startswith(prefix)):
        return False
    return not names_tests(module.split(".")[1:])


def _surface_guard(
    wrapper: Any, func: Callable[..., Any], surface: str, *, through: int = 0
) -> Any:
    """``wrapper`` (recording ``func``) for a call from outside ``surface``; ``func`` itself
    for a call the package makes to itself: from code of the package (the calling frame's
    module is the package or one of its modules: ``__init__`` calling ``self.parse``,
    ``__iter__`` calling ``self._iter``; not a doctest of a module of the package, which
    runs with that module's globals), or while a call of the same surface is already
    being recorded (a callback the package runs).  ``through``: frames between the guard
    and the call's site (a cached property of the package's own kind calls its function
    from its ``__get__``: the site is the attribute read that ran it)."""
    prefix = surface + "."
    getframe = sys._getframe
    known: dict[str, bool] = {}  # module name -> is it the package's own code?
    depth = 2 + through

    def from_package() -> bool:
        frame = getframe(depth)
        name = frame.f_globals.get("__name__", "")
        own = known.get(name)
        if own is None:
            own = known[name] = _own_code(name, surface, prefix)
        # a module's doctest runs with the module's globals, but it is a test: its calls
        # come from outside (stdnum's format() was checked by its doctests alone)
        return own and not frame.f_code.co_filename.startswith("<doctest ")

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_guard(*args: Any, **kwargs: Any) -> Any:
            inside = _INSIDE.get()
            if surface in inside or from_package():
                return await func(*args, **kwargs)
            token = _INSIDE.set(inside | {surface})
            try:
                return await wrapper(*args, **kwargs)
            finally:
                _INSIDE.reset(token)

        async_guard.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
        return async_guard

    @functools.wraps(func)
    def guard(*args: Any, **kwargs: Any) -> Any:
        inside = _INSIDE.get()
        if surface in inside or from_package():
            return func(*args, **kwargs)
        token = _INSIDE.set(inside | {surface})
        try:
            return wrapper(*args, **kwargs)
        finally:
            _INSIDE.reset(token)

    guard.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
    return guard


_THIS_MODULE: Final = __name__

_STEP_AROUND_TRACERS: Final = sys.version_info < (3, 12)
"""Whether a recording wrapper runs its own steps with the thread's tracer off.

Under a tracer (``sys.settrace``: coverage.py's C tracer under ``pytest --cov``, a
debugger) every Python call the recorder makes around a recorded call was traced: on
semver's suite, run with ``--cov``, its tests took 0.06 s longer recorded than with the
recorder's steps untraced, and coverage counted as the suite's the package's
``__getstate__`` the recorder called to freeze an object.  Not from Python 3.12: there
``sys.settrace`` switches every code object's instrumentation (PEP 669), and switching it
twice a call cost more than it saved (semver: 3.5 s recorded became 3.6-3.9 s)."""


def _give_module_back(cls: type[Any]) -> None:
    """Name the caller's module as the module of a class a target just made.

    A factory that names its class's module after its caller (``sys._getframe(1)``, as
    ``collections.namedtuple`` does, and boltons' ``namedtuple`` and ``make_sentinel``)
    finds the recording wrapper's frame instead: its class would say it was defined here,
    and pickling it, or freezing it by name, fails where the suite passed unrecorded.  The
    module is the first frame's above the wrappers, as the factory would have found it."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == _THIS_MODULE:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return
    with contextlib.suppress(AttributeError, TypeError):
        cls.__module__ = frame.f_globals.get("__name__", "__main__")


_SAFE_INT: Final = 2**64
"""An int of less than this magnitude is written by the JSON writer without fail."""


def _wrap_coroutine_function(
    func: Callable[..., Any], rec: TargetRecorder, *, skip_first: bool
) -> Any:
    """:func:`_wrap_function` for an ``async def``: records around the awaited call."""
    before = rec.before
    returned = rec.returned
    raised = rec.raised
    receiver = _receiver_of(func) if skip_first else None

    @functools.wraps(func)
    async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
        if not rec.active:
            return await func(*args, **kwargs)
        on = receiver(args[0]) if receiver is not None and args else None
        pending = before(args[1:] if skip_first else args, kwargs, on)
        if type(pending) is _Materialized:
            args, kwargs = pending.call(args, skip_first)
            pending.count_references()  # with this frame's own: a kept callable is more
            if not pending.recorded:
                pending = None
        try:
            result = await func(*args, **kwargs)
        except (Exception, SystemExit) as exc:  # a CLI's exit (argparse, docopt) too
            raised(pending, exc)
            raise
        returned(pending, result)
        return result

    async_wrapper.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
    return async_wrapper


def _receiver_of(func: Callable[..., Any]) -> Callable[[Any], Any]:
    """For a classmethod's function: what a call's ``cls`` makes of the row -- None for the
    class that defines it, the subclass frozen by name for any other (``ColorAll.blackbody``
    reaching ``Color.blackbody``: its ``cls`` builds a ``ColorAll``, and replayed on
    ``Color`` the call would give another class's object).  A class that cannot be named
    (one a test module defines) is None too: the row is the defining class's, and the
    verifying interpreter keeps it only if that class gives the same outcome.

    The defining class is told by its module and qualified name, read off ``func``
    (``Color.blackbody``'s function is ``Color.blackbody``): each class met is decided once.
    """
    module = func.__module__
    owner = func.__qualname__.rpartition(".")[0]
    decided: dict[Any, Any] = {}

    def on(cls: Any) -> Any:
        try:
            return decided[cls]
        except KeyError:
            pass
        except TypeError:  # unhashable: no class
            return None
        frozen: Any = None
        if isinstance(cls, type) and (cls.__module__, cls.__qualname__) != (module, owner):
            try:
                frozen = canon.encode(cls)
            except Exception:
                frozen = None
        decided[cls] = frozen
        return frozen

    return on


_FUNCTION_API: Final = frozenset(dir(types.FunctionType))
"""What every wrapper, a plain function, already answers to."""


def _with_api_of(func: Callable[..., Any], wrapper: Any) -> Any:
    """``wrapper`` answering to the public methods of ``func``'s type too, bound to ``func``.

    ``functools.wraps`` copies a function's ``__dict__``; a callable object keeps its own
    API on its type instead: a ``functools.lru_cache`` function's ``cache_clear``,
    ``cache_info`` and ``cache_parameters``.  A suite that clears a cache between tests
    must still clear the real one while its calls are recorded, or recording changes
    what the suite does (its tests fail, or pass on a stale cache)."""
    kind = type(func)
    if kind is types.FunctionType:
        return wrapper
    for name in dir(kind):
        if name.startswith("_") or name in _FUNCTION_API or hasattr(wrapper, name):
            continue
        try:
            member = getattr(func, name)
        except Exception:  # a property of the object that raises: nothing to hand on
            continue
        if callable(member):
            with contextlib.suppress(AttributeError, TypeError):
                setattr(wrapper, name, member)
    return wrapper


def _wrap_function(
    func: Callable[..., Any],
    rec: TargetRecorder,
    *,
    skip_first: bool,
    surface: str = "",
    through: int = 0,
) -> Any:
    """A wrapper that records around ``func`` and is otherwise ``func`` (with ``surface``,
    only the outermost call into that package surface is recorded; ``through``: see
    :func:`_surface_guard`): its public methods too (:func:`_with_api_of`)."""
    if surface:
        recording = _recording_wrapper(func, rec, skip_first=skip_first)
        guarded = _surface_guard(recording, func, surface, through=through)
        return _with_signature_of(func, _with_api_of(func, guarded))
    wrapper = _recording_wrapper(func, rec, skip_first=skip_first)
    return _with_signature_of(func, _with_api_of(func, wrapper))


def _with_signature_of(func: Callable[..., Any], wrapper: Any) -> Any:
    """``wrapper`` answering ``inspect.getfullargspec`` as ``func`` does.

    ``inspect.signature`` follows the ``__wrapped__`` that ``functools.wraps`` sets, but
    ``getfullargspec`` does not: it read the wrapper's own ``(*args, **kwargs)``, and
    babel's suite, which calls each gettext method with the arguments its spec names,
    called them with none and failed under recording only.  Both read ``__signature__``
    first, so the wrapper carries ``func``'s own.  Not for a ``func`` that is itself a
    decorator's wrapper: there ``inspect.signature`` follows its chain further, and the
    two answers differ, as they did without lockstep."""
    if "__wrapped__" in getattr(func, "__dict__", {}) or "__signature__" in vars(wrapper):
        return wrapper
    with contextlib.suppress(Exception):  # none to read (a builtin), or reading it failed
        wrapper.__signature__ = inspect.signature(func, follow_wrapped=False)
    return wrapper


def _recording_wrapper(  # noqa: C901 -- the recorder's commonest steps inline, one test each
    func: Callable[..., Any], rec: TargetRecorder, *, skip_first: bool
) -> Any:
    """The wrapper that records around ``func`` (see :func:`_wrap_function`)."""
    if inspect.iscoroutinefunction(func):
        return _wrap_coroutine_function(func, rec, skip_first=skip_first)
    returned = rec.returned
    raised = rec.raised
    note = rec._note
    add = rec._add
    freeze_input = rec._freeze_input
    before = rec.before
    time_module, real_time = time, _recorder._REAL_TIME
    time_machine, modules = _recorder._TIME_MACHINE, sys.modules
    may_be_frozen = _clock.may_be_frozen
    leaves = _MEMO_LEAVES
    memoizable = _memoizable
    dumps = marshal.dumps
    scalar_key = _recorder._scalar_call_key
    write_outcome = _canonical_writer.encode
    object_key = canon.object_key
    int_low, int_high = _INT_LOW, _INT_HIGH
    safe_low, safe_high = -_SAFE_INT, _SAFE_INT
    iterator_results = _recorder.ITERATOR_RESULTS
    receiver = _receiver_of(func) if skip_first else None
    gettrace, settrace, step_around = sys.gettrace, sys.settrace, _STEP_AROUND_TRACERS
    may_print: list[bool | None] = [None]
    """Whether the target can reach code that prints (:mod:`.set_reach`): only then is
    what its calls print captured."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:  # noqa: C901 -- before(), inline
        if not rec.active:
            return func(*args, **kwargs)
        # What a tracer (coverage.py under pytest-cov, a debugger) would see of the
        # recorder's own steps is not the suite's: they run untraced, the call itself
        # traced as ever (coverage.py takes back its C tracer at the next call).  See
        # _STEP_AROUND_TRACERS.
        trace = gettrace() if step_around else None
        if trace is not None:
            settrace(None)
        try:
            # rec.before(), inline (a frame less on every call): the memo key of an input of
            # exact scalars and tuples of them (input_kinds._memo_key), the row of one already
            # seen, the key of a new one of scalars (a tuple carried across the call).
            given = args[1:] if skip_first else args
            pending: Any
            on = receiver(args[0]) if receiver is not None and args else None
            if on is not None:
                pending = before(given, kwargs, on)  # a classmethod on a subclass: the row keeps it
            elif time_module.time is not real_time[0] or (
                time_machine in modules and may_be_frozen()
            ):
                pending = before(given, kwargs)  # perhaps under a frozen clock: the row keeps it
            else:
                rec.calls += 1
                index = rec.calls
                memo_key: bytes | None = None
                try:
                    for v in given:
                        t = type(v)
                        if t in leaves:
                            continue
                        if t is not tuple:
                            break
                        for w in v:
                            t = type(w)
                            if t not in leaves and (t is not tuple or not memoizable(w)):
                                break
                        else:
                            continue
                        break
                    else:
                        for v in kwargs.values():
                            t = type(v)
                            if t not in leaves and (t is not tuple or not memoizable(v)):
                                break
                        else:
                            memo_key = dumps((given, kwargs), 2)
                except RecursionError:
                    pass
                if memo_key is None:
                    pending = freeze_input(given, kwargs, index, None)
                else:
                    pending = rec._memo.get(memo_key)
                    if pending is None:
                        key = scalar_key(given, kwargs)
                        if key is not None:
                            pending = (index, memo_key, key)
                        else:
                            pending = freeze_input(given, kwargs, index, memo_key)
            if type(pending) is _Materialized:  # iterator arguments, consumed: fresh ones
                args, kwargs = pending.call(args, skip_first)
                pending.count_references()  # with this frame's own: a kept callable is more
                if not pending.recorded:
                    pending = None
            captures = may_print[0]
            if captures is None:  # asked at the first call: the module has run whole
                from lockstep.oracles.ledger.set_reach import target_reaches_printing

                captures = may_print[0] = target_reaches_printing(_where_defined(func, rec.fn))
            tee = teed() if captures else None  # what the call prints (see .printed)
            if trace is not None:
                settrace(trace)
            try:
                result = func(*args, **kwargs)
            except (Exception, SystemExit) as exc:  # a CLI's exit (argparse, docopt) too
                if trace is not None:
                    settrace(None)
                raised(pending, exc, tee.end() if tee is not None else "")
                raise
            except BaseException:
                if tee is not None:
                    tee.end()
                raise
            if trace is not None:
                settrace(None)
            printed = tee.end() if tee is not None else ""
            if printed != "":
                pass  # the rare call that printed: none of the shortcuts, returned() below
            # A new input of scalars returning an int or an ASCII str (frozen as itself, written
            # without fail: an int far inside any int_max_str_digits): straight to the table.
            elif type(pending) is tuple and (
                (type(result) is int and safe_low < result < safe_high)
                or (type(result) is str and result.isascii())
            ):
                add(pending, True, result, "", "", write_outcome([True, result, "", "", None]))
                return result
            elif (
                type(pending) is _Pending
                and pending.object_key is None
                and (
                    (type(result) is int and int_low < result < int_high)
                    or (type(result) is str and result.isascii())
                )
            ):
                note(pending, True, result, "", "")
                return result
            # returned()'s first test, inlined: a repeated input giving its recorded scalar back.
            elif (
                type(pending) is _Seen
                and type(result) in SELF_FROZEN
                and pending.ok
                and type(pending.result) is type(result)
                and pending.result == result
                and pending.mutated is None
            ):
                return result
            made = type(result)  # not isinstance(): a proxy's __class__ property would run
            made = result if issubclass(made, type) else made  # a class made, or its object's
            if made.__module__ == _THIS_MODULE:
                _give_module_back(made)  # made by a factory that read its caller's frame
            if type(result) in iterator_results:  # items frozen as the caller consumes them
                return result if pending is None else rec.relay(pending, result)
            # ... and a repeated input with objects giving its recorded object back, unchanged.
            if type(pending) is _Again and printed == "":
                result_key = pending.remembered.result_key
                if (
                    result_key is not None
                    and object_key((result,), {}) == result_key
                    and pending.unchanged()
                ):
                    return result
            returned(pending, result, printed)
            return result
        finally:
            if trace is not None:
                settrace(trace)

    wrapper.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
    return wrapper


def _where_defined(func: Callable[..., Any], fn: str) -> str:
    """``module:qualname`` of the function itself (a ``@record_io`` target's ledger may be
    named after a file, ``bench.bench_ledger:trivial`` for ``__main__``'s), else ``fn``."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<locals>" not in qualname:
        return f"{module}:{qualname}"
    return fn


def _refuse_compared(module: Any, module_name: str, raw: Any, where: str) -> None:
    """:class:`~lockstep.errors.ComparedAsValue` when the package compares the module's
    function ``raw`` as a value (under any of its names)."""
    names = [k for k, v in vars(module).items() if v is raw]  # aliases too
    site = compared_site(module_name, names)
    if site is not None:
        raise ComparedAsValue(
            f"{where}: the package compares it as a value, or keys by it ({site}); a "
            "wrapper in its place would not be that function, so it is not recorded"
        )


def _function_like(raw: Any) -> bool:
    """Whether ``raw`` (as a module or class holds it) is a function or a method's
    descriptor: what a wrapper function may take the place of, bound the same way."""
    return (
        type(raw) is types.FunctionType
        or isinstance(raw, staticmethod | classmethod | property)
        or cached_function(raw) is not None
    )


def _wrap_member(
    raw: Any, rec: TargetRecorder, *, where: str, surface: str = ""
) -> tuple[Any, list[Param]]:
    """Wrap a function or a class member as found in ``__dict__``; also return its signature."""
    if isinstance(raw, staticmethod):
        inner = raw.__func__
        return (
            staticmethod(_wrap_function(inner, rec, skip_first=False, surface=surface)),
            signature_of(inner),
        )
    if isinstance(raw, classmethod):
        inner = raw.__func__
        return (
            classmethod(_wrap_function(inner, rec, skip_first=True, surface=surface)),
            signature_of(inner, drop_first=True),
        )
    if isinstance(raw, property) and raw.fget is not None:
        getter = _wrap_function(raw.fget, rec, skip_first=False, surface=surface)
        return raw.getter(getter), signature_of(raw.fget)
    cached_func = cached_function(raw)
    if cached_func is not None:
        # its first read on each object calls the function (later reads find the value in
        # the object's __dict__): that call is the row, as a property's getter's is; a copy
        # of the descriptor (its name, its lock) holds the wrapped function
        cached = copy.copy(raw)
        own_kind = _own_code(type(raw).__module__, surface, surface + ".") if surface else False
        cached.func = _wrap_function(
            cached_func, rec, skip_first=False, surface=surface, through=1 if own_kind else 0
        )
        return cached, signature_of(cached_func)
    if isinstance(raw, type):
        raise NotACallable(f"{where}: is a class; name the method to record (Class.method)")
    if not callable(raw):
        raise NotACallable(f"{where}: is a {type(raw).__name__}, not a callable")
    if surface and _own_code(type(raw).__module__, surface, f"{surface}."):
        # toolz's ``@curry def flip``: an object of the package's own callable class, whose
        # calls its class's ``__call__`` records; a function in its place would not be one
        # (no ``.func``, no pickling by name, not equal to the object the package keeps)
        raise NotACallable(
            f"{where}: is a {type(raw).__name__} object (its class's __call__ is the member)"
        )
    return _wrap_function(raw, rec, skip_first=False, surface=surface), signature_of(raw)


class _Patch(msgspec.Struct):
    owner: Any
    attr: str
    original: Any
    owned: bool


class Wrapped(msgspec.Struct):
    """One installed target: its recorder and its signature at install time."""

    target: str
    recorder: TargetRecorder
    signature: list[Param]


class Installation:
    """Targets wrapped in place; :meth:`undo` puts every original back.

    Module-level functions are also replaced wherever another already-imported
    module bound them by name (``from pkg.mod import func``, with or without
    ``as``), because that is how most legacy callers reach them.

    With ``batched``, those other bindings are replaced by one walk of ``sys.modules``
    for every target wrapped since the last walk (instead of one walk per target), done
    by :meth:`watch_context` (or :meth:`rebind_pending`) and, so that no code ever sees a
    state the one-walk-per-target order would not show it, before a wrap imports a
    module not imported yet and before a wrap reaches an object a pending walk would
    replace (a second target naming the same function).
    """

    def __init__(self, *, batched: bool = False) -> None:
        self._patches: list[_Patch] = []
        self.wrapped: list[Wrapped] = []
        self._batched = batched
        self._pending: dict[int, tuple[Any, Any, Any]] = {}
        """id(original) -> (original, replacement, its home module): walks not yet done."""

    def wrap(
        self,
        target: str,
        root: Path,
        *,
        where: str,
        stem_length: int = canon.DEFAULT_STEM,
        object_calls: int = 0,
        object_bytes: int = 0,
        surface: str = "",
        leave_compared: bool = False,
        own_only: bool = False,
        functions_only: bool = False,
    ) -> Wrapped:
        """Wrap ``pkg.mod:qualname``; errors name ``where`` and what failed.  With
        ``surface`` (a package), a call made while a call of another target of that surface
        is being recorded is not recorded: it is part of the outer call.  With
        ``leave_compared``, a module-level function the package compares as a value is
        left in place (:class:`~lockstep.errors.ComparedAsValue`).  With ``own_only``, a
        member its owner only inherits is :class:`~lockstep.errors.NotACallable` (a
        dunder a decorator may have written: ``object.__eq__`` is no target).  With
        ``functions_only`` (a member beyond the surface), so is any callable that is not a
        function or a method's descriptor: a function put in its place would be bound as
        a method where the object was not (a ``functools.partial`` kept in a class)."""
        module_name, qualname = split_target(target, where=where)
        if self._pending and module_name not in sys.modules:
            self.rebind_pending()  # the import runs code: it sees every walk done
        with root_on_path(root):
            try:
                module = __import__(module_name, fromlist=["_"])
            except (Exception, SystemExit) as e:  # a script exits reading pytest's argv
                reason = f"{type(e).__name__}: {e}"
                if isinstance(e, SystemExit):
                    reason += " (the module exits when imported: a script, not a library)"
                raise UnimportableModule(
                    f"{where}: cannot import module {module_name!r}: {reason}", module_name, reason
                ) from None
        parts = qualname.split(".")
        way, raw = self._resolve(module, parts, module_name, qualname, where)
        if self._pending and any(id(o) in self._pending for o in (raw, *way)):
            self.rebind_pending()  # as if each earlier target's walk were done
            way, raw = self._resolve(module, parts, module_name, qualname, where)
        owner: Any = way[-1]
        rec = TargetRecorder(
            target, stem_length=stem_length, object_calls=object_calls, object_bytes=object_bytes
        )
        if isinstance(owner, property) and parts[-1] == "fset" and len(way) > 2:
            allow_callables_from(module_name)  # its callbacks freeze by name (canon: $fn)
            return self._wrap_setter(target, way[-2], parts[-2], rec, where, surface)
        if own_only and parts[-1] not in getattr(owner, "__dict__", ()):
            raise NotACallable(f"{where}: {target!r}: its class does not define it itself")
        if functions_only and not _function_like(raw):
            raise NotACallable(f"{where}: {target!r}: is a {type(raw).__name__}, not a function")
        if leave_compared and owner is module and isinstance(raw, types.FunctionType):
            _refuse_compared(module, module_name, raw, f"{where}: {target!r}")
        allow_callables_from(module_name)  # its callbacks freeze by name (canon: $fn)
        replacement, signature = _wrap_member(
            raw, rec, where=f"{where}: {target!r}", surface=surface
        )
        attr = parts[-1]
        owned = attr in vars(owner)
        self._patches.append(_Patch(owner, attr, raw, owned))
        setattr(owner, attr, replacement)
        if owner is module:
            if self._batched:
                self._pending[id(raw)] = (raw, replacement, module)
            else:
                self._rebind_imports({id(raw): (raw, replacement, module)})
        elif isinstance(owner, type):
            self._rebind_aliases(owner, attr, raw, replacement)
        wrapped = Wrapped(target, rec, signature)
        self.wrapped.append(wrapped)
        return wrapped

    def _wrap_setter(
        self,
        target: str,
        cls: Any,
        name: str,
        rec: TargetRecorder,
        where: str,
        surface: str,
    ) -> Wrapped:
        """``pkg.mod:Class.prop.fset``: the property's setter, which ``obj.prop = value``
        runs (netaddr's ``IPNetwork.netmask`` checks the value's version there).  A
        property is immutable: the class gets a copy of the one it holds now (its getter
        wrapped too, when that is a target) with the setter wrapped.  The row is the call
        ``fset(obj, value)``: the object's state before, the value, and the object after."""
        current = inspect.getattr_static(cls, name, None)
        if not isinstance(cls, type) or not isinstance(current, property) or current.fset is None:
            raise NotACallable(f"{where}: {target!r}: its class holds no property setter there")
        wrapped_fset = _wrap_function(current.fset, rec, skip_first=False, surface=surface)
        self._patches.append(_Patch(cls, name, current, name in vars(cls)))
        setattr(cls, name, current.setter(wrapped_fset))
        wrapped = Wrapped(target, rec, signature_of(current.fset))
        self.wrapped.append(wrapped)
        return wrapped

    def _rebind_aliases(self, owner: type[Any], attr: str, original: Any, replacement: Any) -> None:
        """Other names of the same member in its class (``__radd__ = __add__``): a call
        through the alias is a call of the target."""
        for name, value in list(vars(owner).items()):
            if name != attr and value is original:
                self._patches.append(_Patch(owner, name, original, True))
                setattr(owner, name, replacement)

    @staticmethod
    def _resolve(
        module: Any, parts: list[str], module_name: str, qualname: str, where: str
    ) -> tuple[list[Any], Any]:
        """The objects ``parts[:-1]`` leads through from ``module`` (the owner last) and
        the raw member ``parts[-1]`` in the owner."""
        way: list[Any] = [module]
        try:
            for part in parts[:-1]:
                way.append(getattr(way[-1], part))
            raw = inspect.getattr_static(way[-1], parts[-1])
        except AttributeError:
            raise MissingMember(
                f"{where}: module {module_name!r} has no attribute {qualname!r}"
            ) from None
        return way, raw

    def rebind_pending(self) -> None:
        """Do the walks of ``sys.modules`` that :meth:`wrap` left pending (``batched``)."""
        pending, self._pending = self._pending, {}
        if pending:
            self._rebind_imports(pending)

    def _rebind_imports(self, pending: dict[int, tuple[Any, Any, Any]]) -> None:
        """Replace each ``original`` of ``pending`` by its replacement wherever a module
        binds it by name, in one walk; a replacement that is itself pending (the same
        function wrapped twice) is followed, as consecutive walks would.

        Its home module too, under its other names (``pvector = python_pvector``): a
        name left on the original there made ``pickle`` refuse the wrapper (pickle finds
        a function by its ``__qualname__``, which the wrapper shares, and requires the
        very object: pyrsistent's vectors pickle through ``pvector``), and ``f is
        ALIAS`` false where it was true.

        Most modules bind none of them: each module's values are first looked up by
        identity in one pass that runs in C (a thousand modules' names, at every run's
        start), and only a module that binds one is walked name by name."""
        binds = pending.__contains__
        for mod in list(sys.modules.values()):
            if mod is None:
                continue
            namespace = getattr(mod, "__dict__", None)
            if not isinstance(namespace, dict) or not any(map(binds, map(id, namespace.values()))):
                continue
            for name, value in list(namespace.items()):
                entry = pending.get(id(value))
                while entry is not None and entry[0] is value:
                    original, replacement, _ = entry
                    self._patches.append(_Patch(mod, name, original, True))
                    namespace[name] = value = replacement
                    entry = pending.get(id(replacement))
        from lockstep.oracles.ledger.default_args import rebound_defaults

        originals = [original for original, _, _ in pending.values()]
        for fn, attr, before in rebound_defaults(pending, originals):
            self._patches.append(_Patch(fn, attr, before, True))

    def watch_context(self) -> None:
        """From now on, note for each new row what differs from the process as it is now
        (a patched collaborator, a changed registry, a frozen clock, a switched locale):
        the likely cause should the row not reproduce.  Call it once every target is wrapped
        (it does the walks a ``batched`` installation left pending first)."""
        self.rebind_pending()
        from lockstep.oracles.ledger.context import ContextWatch

        watch = ContextWatch([w.target for w in self.wrapped])
        for wrapped in self.wrapped:
            wrapped.recorder.context = watch

    def undo(self) -> None:
        """Restore every original binding (newest first); recorders stop recording."""
        self._pending.clear()
        for wrapped in self.wrapped:
            wrapped.recorder.active = False
            wrapped.recorder.context = None
        for patch in reversed(self._patches):
            if patch.owned:
                setattr(patch.owner, patch.attr, patch.original)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(patch.owner, patch.attr)
        self._patches.clear()
