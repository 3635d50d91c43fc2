"""Canonical values: the codec every oracle freezes through.

JSON has no tuple, bytes, set, Decimal, NaN or non-string key, yet legacy code
returns all of them and a refactor that swaps a tuple for a list *is* a change
of behaviour.  This module maps Python values to a JSON-compatible *tagged*
form and back so that

* ``decode(encode(x))`` equals ``x`` with the same types, and
* two different values never encode alike (``{1: x}`` vs ``{"1": x}``,
  ``(1,)`` vs ``[1]``, ``True`` vs ``1``, ``Decimal("1.0")`` vs ``Decimal("1.00")``).

The tagged form
---------------
A tag is a JSON object with exactly one key that starts with ``$``::

    {"$tuple": [...]}            {"$bytes": "<base64>"}      {"$bytearray": "<base64>"}
    {"$set": [...]}              {"$frozenset": [...]}       {"$decimal": "1.00"}
    {"$float": "nan"|"inf"|"-inf"}                          {"$complex": [re, im]}
    {"$dict": [[k, v], ...]}     (non-str keys, or str keys that start with "$")
    {"$odict": [[k, v], ...]}    (an OrderedDict, in its order)  {"$counter": [[k, v], ...]}
    {"$defaultdict": [{"$fn": ...} or null, [[k, v], ...]]}
    {"$sorted": ["SortedDict", key, [[k, v], ...]] | ["SortedList", key, [...]]}
                          (sortedcontainers' own, the key null or a $fn:
                          :mod:`lockstep.canon.sorted_containers`)
                          (any other dict subclass not the project's own is refused)
    {"$datetime": [iso, zone, fold]}  {"$date": iso}  {"$time": [iso, zone, fold]}
    {"$timedelta": [days, seconds, microseconds]}       {"$uuid": "..."}
    {"$path": [pathlib class name, str]}                {"$enum": ["mod:Qual", member]}
    {"$dataclass": ["mod:Qual", {field: value}]}        {"$namedtuple": ["mod:Qual", [...]]}
    {"$ext": [registered name, value]}                  {"$slice": [start, stop, step]}
    {"$range": [start, stop, step]}
    {"$enum": ["mod:Qual", [member, ...]]}              (a Flag combination, by member names)
    {"$const": "NotImplemented"|"Ellipsis"}
    {"$re": [pattern, flags]}    {"$partial": [{"$fn": ...}, [args...], {keywords}]}
    {"$regex": [pattern, flags]}  (a pattern of the regex module: :mod:`lockstep.canon.regex_patterns`)
    {"$match": [$re or $regex, string, pos, endpos]}  (a match, as the search that finds it:
                          :mod:`lockstep.canon.matches`)
    {"$timezone": [{"$timedelta": ...}, name or null]}
                          (:mod:`lockstep.canon.patterns`)
    {"$pytz": [zone name, null | [utc offset s, dst s, abbreviation]] | [null, minutes]}
                          (a pytz zone, by name: :mod:`lockstep.canon.pytz_zones`)
    {"$exc": [class, [args], {attributes}, null | [cause, context, suppress_context]]}
                          (an exception as a value: :mod:`lockstep.canon.exception_values`)
    {"$fraction": [n, d]}  {"$ip": ["IPv4Network", "10.0.0.0/8"]}  {"$deque": [[...], maxlen]}
    {"$namespace": {...}}  {"$chainmap": [{...}, ...]}  {"$array": [typecode, [...]]}
    {"$stringio": [text, newline, pos]}  {"$bytesio": [{"$bytes": ...}, pos]}
                          (the standard library's value classes: :mod:`lockstep.canon.stdlib_values`)
    {"$iterator": [items]}  (an iterator over a sequence, set or dict held in a value: the
                          items it has left: :mod:`lockstep.canon.sequence_iterators`)
    {"$module": "re"}     (a module, by the name sys.modules holds it under: :mod:`lockstep.canon.modules`)
    {"$zoneinfo": key}    (a zoneinfo.ZoneInfo, by its key: :mod:`lockstep.canon.zoneinfo_zones`)
    {"$struct_time": [9 ints, zone or null, gmtoff or null]}  {"$isocalendar": [y, w, d]}
                          (:mod:`lockstep.canon.time_tuples`)
    {"$obj": ["mod:Qual", {"base": ..., "new": [...], "state": ...}]}
                          (an object of the project's own class: :mod:`lockstep.canon.objects`)
    {"$graph": [value, [["mod:Qual", {"state": ...}], ...]]}  with {"$node": n} inside
                          (a value holding plain objects of other libraries, each once:
                          :mod:`lockstep.canon.graphs`, :mod:`lockstep.canon.library_classes`)
    {"$method": [self, "name"]}  (a bound method: :mod:`lockstep.canon.methods`)
    {"$sentinel": "mod:_absent"}  (a bare object() a module keeps as a marker:
                          :mod:`lockstep.canon.sentinels`)
    {"$default": ["mod:Qual.function", "parameter"]}  (a lambda that is a parameter's
                          default: :mod:`lockstep.canon.callables`)
    {"$held": ["mod:TABLE", key]}  (a lambda written in a module's body, kept in its
                          module-level dict, list or tuple TABLE under key:
                          :mod:`lockstep.canon.held_lambdas`)
    {"$lambda": ["mod:Qual.function", n]}  (a lambda without variables written in that
                          function, its n-th: :mod:`lockstep.canon.callables`)
    {"$ref": n}           (inside an object's state: a cycle back to the object n levels out)
    {"$same": n}          (inside an object: the n-th object written in full before, again:
                          :mod:`lockstep.canon.shared`)
    {"$weakref": target}  (a weakref.ref, by what it points at; null: dead:
                          :mod:`lockstep.canon.weak_references`)
    {"$kept": "mod:Name.attr"}  (an object its class's module keeps, met again inside its
                          own state: a token type; :mod:`lockstep.canon.kept`)
    a ``$datetime``/``$time`` zone is null, a zoneinfo key, a named ``$timezone``, a
    ``$pytz`` zone, or a tzinfo ``$obj``

Plain JSON objects are only ever produced for dicts whose keys are all strings
not starting with ``$``, so a user's dict can never be mistaken for a tag.
Set members and ``$dict``, ``$counter`` and ``$defaultdict`` pairs are sorted by their
canonical bytes, so equal values give equal bytes whatever their insertion order
(``$odict`` keeps its order: two OrderedDicts are equal only in the same order).

Loose mode (``loose=True``) freezes tuples as lists, for users who want the
weaker contract "same items, sequence type does not matter".  It is opt-in
per oracle because it gives up injectivity.

Values that cannot be frozen (open files, sockets, generators, locks, objects
with no registered encoder) raise :class:`~lockstep.errors.CanonError` naming
the path inside the value, e.g. ``args[1]["conn"]``.  Where a non-string dict
key is part of that path it is written with ``repr`` only for types whose
``repr`` is the same in every process (numbers, bytes, tuples of them, ...);
any other key is written as its type, ``value[<pkg.Key>]``, never with a memory
address.

Decoding is inert
-----------------
Oracle files arrive in pull requests, so :func:`decode` treats them as data and
never as instructions: it imports no module and calls nothing named in the data.

* ``$enum``, ``$dataclass`` and ``$namedtuple`` name a class as ``module:QualName``.
  The name resolves only to a class *of the tagged kind* (an :class:`enum.Enum`
  subclass; a dataclass; a tuple subclass with ``_fields``) that is either
  registered with :func:`register_type` or **already imported**: its module is
  in ``sys.modules`` and the name is found in the module's and classes'
  ``__dict__`` (no ``getattr``, so no module ``__getattr__`` runs).  Replay
  imports the configured target first, so the target's own types, and the types
  of the modules it imports, resolve.  Anything else -- a module not imported,
  ``os:system``, a class of another kind -- is a one-line :class:`CanonError`
  naming the path and the name, and nothing is imported or called.
* Building a value of such a class runs none of its code: an enum member is
  looked up in ``__members__``; a dataclass instance is made with
  ``object.__new__`` and its fields set with ``object.__setattr__`` (no
  ``__init__``, no ``__post_init__``); a named tuple with ``tuple.__new__``.  The
  only code of a decoded class that may run is its own ``__hash__``/``__eq__``,
  when an instance is a set member or a dict key.
* ``$ext`` resolves only to an encoder registered with :func:`register_encoder`
  in this process; its ``from_json`` is the user's own code.  ``$path`` names one
  of the six :mod:`pathlib` classes, nothing else.  A ``$datetime``/``$time``
  zone must be a key of :func:`zoneinfo.available_timezones`; a ``$pytz`` zone one of
  ``pytz.all_timezones_set`` (pytz is the one module a value may import, by that fixed name).

Limits
------
Both directions enforce the same limits, so whatever :func:`encode` accepts
:func:`decode` gives back, and neither lets anything but :class:`CanonError`
escape for bad input (no ``RecursionError``, ``OverflowError``,
``decimal.InvalidOperation`` or ``ValueError``):

* **nesting**: at most :data:`MAX_DEPTH` (200) levels of JSON arrays and objects
  in the frozen form.  A list of lists may nest 200 deep; a tuple of tuples 100
  (each tuple is a tag object around an array); a reference cycle is refused
  the same way.
* **integers**: at most :data:`MAX_INT_DIGITS` (4300) characters of decimal text,
  sign included (a negative int: 4299 digits) -- the most the JSON parser under
  :func:`loads` and every oracle reader reads, and Python's default
  ``int_max_str_digits``.
* **strings** holding a lone surrogate (``"\\udcff"``, what ``os.fsdecode`` makes of
  undecodable bytes) cannot be written as UTF-8: such a value is ``{"$str": escaped}``
  (:func:`~lockstep.canon._core.text_form`); as a dict key it is refused with the path.
* **enums** freeze by member name, so a :class:`enum.Flag` combination (no member
  of that name) is refused when it is frozen rather than failing at replay.
* **every tag checks its payload's shape** and accepts only the canonical form
  the encoder writes: ``{"$set": "ab"}``, ``{"$tuple": {"x": 1}}``, base64 with
  stray padding bits, ``{"$decimal": "1e3"}`` (the encoder writes ``"1E+3"``), a
  member given twice in a set, are all refused.  ``$decimal`` accepts what
  :class:`decimal.Decimal` accepts (exponents within ±999999999999999999);
  ``$timedelta`` parts must be in :class:`datetime.timedelta`'s normalized ranges.
* :func:`loads` of text that is not JSON is a :class:`CanonError`.

Where each part lives
---------------------
This module is the codec's one import point; the work is done in
:mod:`~lockstep.canon.registry` (registered encoders and types, the leaf table),
:mod:`~lockstep.canon.encoding`, :mod:`~lockstep.canon.decoding` (the tag table),
:mod:`~lockstep.canon.callables` (``$fn``, ``$default``, ``$iter``),
:mod:`~lockstep.canon.methods` (``$method``), :mod:`~lockstep.canon.sentinels`
(``$sentinel``), :mod:`~lockstep.canon.library_classes` (which other libraries' classes
freeze unnamed), :mod:`~lockstep.canon.graphs` (``$graph``, ``$node``) and :mod:`~lockstep.canon.exceptions`.  A new tag family is a module of this package that
adds its decoders to :data:`~lockstep.canon.decoding.TAG_DECODERS` (thawing the parts of a
payload with ``decode_at``/``decode_items`` after checking its shape with
``list_payload``/``str_payload``) and, for types no built-in rule freezes, a function to
:data:`~lockstep.canon.encoding.FALLBACK_ENCODERS` (freezing parts with the encoder's
``child``/``seq``, refusing with ``Unfreezable``); it is imported below, before
:data:`KNOWN_TAGS` is taken.
"""

from __future__ import annotations

from typing import Final

from lockstep.canon import callables as _callables  # noqa: F401 -- adds $fn, $default, $iter
from lockstep.canon import closures as _closures  # noqa: F401 -- adds $closure
from lockstep.canon import exception_values as _exception_values  # noqa: F401 -- adds $exc
from lockstep.canon import matches as _matches  # noqa: F401 -- adds $match
from lockstep.canon import methods as _methods  # noqa: F401 -- adds $method
from lockstep.canon import modules as _modules  # noqa: F401 -- adds $module
from lockstep.canon import objects as _objects  # noqa: F401 -- $obj $ref $same $kept $graph $node
from lockstep.canon import patterns as _patterns  # noqa: F401 -- adds $re and $partial
from lockstep.canon import pytz_zones as _pytz_zones  # noqa: F401 -- adds $pytz
from lockstep.canon import regex_patterns as _regex_patterns  # noqa: F401 -- adds $regex
from lockstep.canon import sentinels as _sentinels  # noqa: F401 -- adds $sentinel
from lockstep.canon import sequence_iterators as _sequence_iterators  # noqa: F401 -- $iterator
from lockstep.canon import sorted_containers as _sorted_containers  # noqa: F401 -- adds $sorted
from lockstep.canon import stdlib_values as _stdlib_values  # noqa: F401 -- $fraction, $ip ...
from lockstep.canon import thread_locals as _thread_locals  # noqa: F401 -- adds $local
from lockstep.canon import time_tuples as _time_tuples  # noqa: F401 -- $struct_time
from lockstep.canon import weak_references as _weak_references  # noqa: F401 -- $weakref
from lockstep.canon import xml_elements as _xml_elements  # noqa: F401 -- adds $element
from lockstep.canon import zoneinfo_zones as _zoneinfo_zones  # noqa: F401 -- adds $zoneinfo
from lockstep.canon._core import JSON, MAX_DEPTH, MAX_INT_DIGITS, qualified_name
from lockstep.canon.callables import (
    IterItems,
    IterPastRecorded,
    PastRecorded,
    allow_callables_from,
)
from lockstep.canon.callbacks import CalledBack, CallsPastRecorded  # adds $calls
from lockstep.canon.decoding import TAG_DECODERS, decode, loads, loads_json
from lockstep.canon.encoding import (
    canonical_json,
    dumps,
    encode,
    encode_call,
    encode_call_keyed,
    equal,
    same_form,
    scalar_call_key,
)
from lockstep.canon.exceptions import (
    DEFAULT_STEM,
    FrozenException,
    exception_type_name,
    freeze_exception,
    message_stem,
)
from lockstep.canon.objects import allow_classes_matching, object_key
from lockstep.canon.registry import (
    LEAF_ENCODERS,
    Extension,
    allow_imports_found_by,
    allow_imports_of,
    register_encoder,
    register_type,
    unregister_encoder,
    unregister_type,
)

KNOWN_TAGS: Final = frozenset(TAG_DECODERS)
"""Every tag the decoder reads."""

__all__ = [
    "DEFAULT_STEM",
    "JSON",
    "KNOWN_TAGS",
    "LEAF_ENCODERS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "CalledBack",
    "CallsPastRecorded",
    "Extension",
    "FrozenException",
    "IterItems",
    "IterPastRecorded",
    "PastRecorded",
    "allow_callables_from",
    "allow_classes_matching",
    "allow_imports_found_by",
    "allow_imports_of",
    "canonical_json",
    "decode",
    "dumps",
    "encode",
    "encode_call",
    "encode_call_keyed",
    "equal",
    "exception_type_name",
    "freeze_exception",
    "loads",
    "loads_json",
    "message_stem",
    "object_key",
    "qualified_name",
    "register_encoder",
    "register_type",
    "same_form",
    "scalar_call_key",
    "unregister_encoder",
    "unregister_type",
]
