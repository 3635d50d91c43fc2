"""Which strings look like secrets: detect-secrets' plugins, behind a prefilter and a cache.

Why detect-secrets (Yelp): it is the maintained, widely used detector of committed
credentials, with one plugin per kind (cloud keys, private-key blocks, JWTs, service
tokens of GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, npm, PyPI, OpenAI...,
basic-auth URLs, ``password = ...`` keywords, high-entropy quoted strings) and heuristic
filters against the usual false positives (UUIDs, sequential strings, templates,
``$VAR`` references).  lockstep borrows those rules rather than writing its own: a new
token format is a detect-secrets upgrade away.

How it is called: each plugin's ``analyze_line`` on one line at a time, without
detect-secrets' *eager* search (which, for ad-hoc strings, calls any long word
high-entropy), then the heuristic filters.  Two choices differ from its defaults:

* ``Hex High Entropy String`` is left out and ``Public IP`` too: recorded behaviour is
  full of digests, ids and addresses that are not secrets (a hex key is still found by
  the keyword plugin when it is named as one, and by the service-token plugins).
* Each plugin runs behind a *gate*, a condition every one of its findings meets:
  the keyword plugin needs one of its keywords, the private-key plugin ``BEGIN``, basic
  auth a ``://...@`` URL, the entropy plugin a quoted base64-like string long enough to
  reach its limit, a token plugin a hit of one of :data:`TOKEN_ANCHORS` or
  :data:`TOKEN_WORDS` (a few fast literal searches for all token plugins at once) and
  then a search hit of one of its own patterns (much cheaper than its full analysis).  A line no gate opens for (numbers, prose, short words, ids
  like ``case_000123.json``: most recorded lines) skips detect-secrets entirely, and a
  text no gate opens for anywhere never imports it (see :func:`may_hold_secret`).

The anchors are written from the token plugins' patterns of the detect-secrets release
named in :data:`ANCHORED_RELEASE` (each found in every match of some pattern: its literal
prefix, or the pattern without its boundary conditions); a test checks the installed
release's patterns against :data:`ANCHORED_PATTERNS` and generates strings from each
pattern in which an anchor must be found.  With any other release installed, the token
gate falls back to the wider :data:`_RUN` (every token those plugins match is such a run).

Results are cached per line, so a value recorded again (``--force``, a ledger's 100,000th
call with the same argument) is not scanned again.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import importlib
import itertools
import re
import sys
import threading
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote_plus

_CACHE_SIZE: Final = 1 << 16
KEYWORD_PARTS: Final = ("key", "pass", "pwd", "secret", "contras")
"""Every keyword of detect-secrets' keyword plugin (its ``DENYLIST``) contains one of these
(a test checks it against the installed version)."""
_QUOTED_LONG: Final = re.compile(r"""(['"])[A-Za-z0-9+/=_\-]{23,}\1""")
"""The base64 entropy plugin's quoted strings (its charset) that can pass its limit: n
characters have at most log2(n) bits of entropy per character, and 4.5 needs n >= 23."""
_LONG_RUN: Final = re.compile(r"[A-Za-z\d+/=_\-]{23}")
"""23 token characters: in every Discord and Telegram token, and (without its quotes, which
JSON escapes may hide until undone) in every :data:`_QUOTED_LONG`."""
_RUN_BYTES: Final = bytes(
    0x61 if chr(b) in "+/=_-" or (chr(b).isalnum() and b < 0x80) else 0x20 for b in range(256)
)
"""For ASCII text: each byte of :data:`_LONG_RUN`'s characters to ``a``, any other to a space
(a C-speed translation, then one substring search)."""
_RUN: Final = re.compile(r"[A-Za-z0-9+/=_\-.~]{11,}")
"""A run of token characters as long as the shortest real token a token plugin matches
(Artifactory's ``AP`` keys: 11; AWS: 20; GitHub: 40...)."""
ANCHORED_RELEASE: Final = "1.5.0"
"""The detect-secrets release :data:`TOKEN_ANCHORS` were written from."""
ANCHORED_PATTERNS: Final = "36cf123b"
"""sha256 (first 8 hex digits) of that release's token-plugin patterns and flags
(:func:`token_patterns_digest`); a test compares it with the installed release."""
TOKEN_ANCHORS: Final = tuple(
    re.compile(pattern)
    for pattern in (
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",  # AWS key id
        r"AKC[a-zA-Z0-9]{10}",  # Artifactory
        r"AP[\dABCDEF][a-zA-Z0-9]{8}",  # Artifactory
        r"AccountKey=",  # Azure storage
        r"gh[pousr]_",  # GitHub
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-",  # GitLab
        r"GR1348941",  # GitLab
        r"eyJ",  # JWT
        r"-us[0-9]",  # Mailchimp
        r"_authToken=",  # npm
        r"T3BlbkFJ",  # OpenAI
        r"pypi-AgE",  # PyPI
        r"SG\.",  # SendGrid
        r"sq0csp-",  # Square
        r"k_live_",  # Stripe
        r"AC[a-z0-9]{32}",  # Twilio
        r"SK[a-z0-9]{32}",  # Twilio
    )
)
"""Each a literal or a pattern with a literal prefix: one fast search each.  Discord and
Telegram tokens have no literal: each holds a :data:`_LONG_RUN` instead."""
TOKEN_WORDS: Final = ("aws", "key", "pw", "pass", "token", "cloudant", "softlayer", "xox", "slack")
"""The anchors of the case-insensitive patterns (AWS secrets, Cloudant, IBM, SoftLayer,
Slack), searched in the lowered text (or by :data:`_TOKEN_WORDS_ANY_CASE` if not ASCII)."""
_TOKEN_WORDS_ANY_CASE: Final = re.compile("|".join(TOKEN_WORDS), re.IGNORECASE)
_KEYWORD_ANY_CASE: Final = re.compile("|".join(KEYWORD_PARTS), re.IGNORECASE)
_GATE_OF: Final = {
    "KeywordDetector": "keyword",
    "PrivateKeyDetector": "begin",
    "BasicAuthDetector": "basic",
    "Base64HighEntropyString": "quoted",
}
"""The gate of each plugin that is not a token plugin (those have ``run``)."""
_LEFT_OUT: Final = frozenset({"HexHighEntropyString", "IPPublicDetector"})
_BASE64_LIMIT: Final = 4.5
"""detect-secrets' own default entropy limit for base64-like quoted strings."""


_RUN_TOKENS: Final = re.compile(
    r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}"  # Discord
    r"|\d{8,10}:[0-9A-Za-z_-]{35}"  # Telegram
)
"""The patterns of the token plugins whose only anchor is a :data:`_LONG_RUN` (in the
release :data:`ANCHORED_PATTERNS` names; a test compares them with the installed ones)."""
_KEYWORDS: Final = re.compile(
    "api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key"
    "|private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd"
    "|secret|contraseña|contrasena",
    re.IGNORECASE,
)
"""The keyword plugin's keywords (its ``DENYLIST``, which every one of its patterns
holds, with its flags; a test compares them with the installed release's)."""
_BARE_TOKEN_WORDS: Final = ("xox", "slack")
"""The :data:`TOKEN_WORDS` of Slack's patterns, which require no long value."""
_WORD_VALUE: Final = re.compile(r"[a-z0-9_\-/+]{24}", re.IGNORECASE)
"""What every other case-insensitive token pattern (AWS secrets, Cloudant, IBM Cloud IAM
and COS HMAC, SoftLayer) requires besides its word: a value of at least 24 of these
characters (40, 64, 24, 44, 48 or 64 of a narrower class, case folded as they are)."""
_ENTROPY_RUN: Final = re.compile(r"[A-Za-z0-9+/\\\-_=]+")
"""A run of the base64 entropy plugin's characters (its ``charset``, the backslash
included; a test compares it with the installed release's)."""
_ENTROPY_DISTINCT: Final = 23
"""The fewest distinct characters a string needs to pass the entropy plugin's limit
(:data:`_BASE64_LIMIT`): log2(22) < 4.5 < log2(23)."""

_PRIVATE_KEY_MARKS: Final = ("BEGIN", "PuTTY-User-Key-File")
"""A literal in each of the private-key plugin's patterns."""


def token_patterns_digest(plugins: Iterable[Any]) -> str:
    """The first 8 hex digits of sha256 over the token plugins' names, patterns and flags
    (``plugins``: detect-secrets' plugin classes; see :data:`ANCHORED_PATTERNS`)."""
    parts = sorted(
        f"{cls.__name__}\0{p.pattern}\0{int(p.flags)}"
        for cls in plugins
        if cls.__name__ not in _GATE_OF and cls.__name__ not in _LEFT_OUT
        for p in getattr(cls, "denylist", ())
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:8]


@lru_cache(maxsize=1)
def _anchored() -> bool:
    """Whether the installed detect-secrets is the release :data:`TOKEN_ANCHORS` was
    written from, read without importing it: from the ``__version__.py`` the import would
    run, else from the installed distribution's metadata (``importlib.metadata`` imports
    the ``email`` package and searches every installed distribution: tens of
    milliseconds a recording spends at its end)."""
    found = _release_in_source()
    if found is not None:
        return found == ANCHORED_RELEASE
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("detect-secrets") == ANCHORED_RELEASE
    except PackageNotFoundError:
        return False


_VERSION_LINE: Final = re.compile(r"""^VERSION\s*=\s*['"]([^'"]+)['"]\s*$""", re.MULTILINE)


def _release_in_source() -> str | None:
    """The ``VERSION`` detect-secrets' own ``__version__.py`` states, or None when it is
    not found so (not installed, or laid out otherwise)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith("__init__.py"):
        return None
    try:
        text = Path(spec.origin).with_name("__version__.py").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _VERSION_LINE.search(text)
    return found.group(1) if found else None


def read_release() -> None:
    """Read which detect-secrets release is installed now (it is cached): a verifying
    server does, so its forks do not each import ``importlib.metadata`` and search the
    installed distributions the first time a row holds a token-like string."""
    _anchored()


def _has_keyword(text: str, lowered: str) -> bool:
    """Whether a keyword plugin keyword may be in ``text`` (``lowered``: ``text.lower()``);
    outside ASCII by the regular-expression engine's own case folding."""
    if text.isascii():
        return any(part in lowered for part in KEYWORD_PARTS)
    return any(part in lowered for part in KEYWORD_PARTS) or bool(_KEYWORD_ANY_CASE.search(text))


def _has_long_run(text: str) -> bool:
    """Whether :data:`_LONG_RUN` is found in ``text`` (ASCII text without the regex engine,
    whose search retries inside every shorter run)."""
    if text.isascii():
        return b"a" * 23 in text.encode("ascii").translate(_RUN_BYTES)
    return bool(_LONG_RUN.search(text))


def _token_found(text: str, lowered: str, *, narrow: bool = False) -> bool:
    """Whether some token plugin's anchor is in ``text`` (``lowered``: ``text.lower()``);
    with another detect-secrets release, whether a :data:`_RUN` is.  With ``narrow``, a
    :data:`_LONG_RUN` counts only where :data:`_RUN_TOKENS` (the plugins' own patterns it
    stands for) is found, and in ASCII text a word of :data:`TOKEN_WORDS` but ``xox`` and
    ``slack`` only where a :data:`_WORD_VALUE` is (the value each of those patterns
    requires)."""
    if not _anchored():
        return bool(_RUN.search(text))
    if any(anchor.search(text) for anchor in TOKEN_ANCHORS):
        return True
    if _has_long_run(text) and (not narrow or _RUN_TOKENS.search(text)):
        return True
    if not text.isascii():
        return bool(_TOKEN_WORDS_ANY_CASE.search(text))
    if not narrow:
        return any(word in lowered for word in TOKEN_WORDS)
    if any(word in lowered for word in _BARE_TOKEN_WORDS):
        return True
    return any(word in lowered for word in TOKEN_WORDS) and bool(_WORD_VALUE.search(text))


def _token_starts(text: str, lowered: str) -> list[int]:
    """Where :func:`_token_found` finds an anchor in ``text``."""
    if not _anchored():
        return [m.start() for m in _RUN.finditer(text)]
    anchors = (*TOKEN_ANCHORS, _LONG_RUN)
    starts = [m.start() for anchor in anchors for m in anchor.finditer(text)]
    if text.isascii():
        starts.extend(at for word in TOKEN_WORDS for at in _positions(lowered, word))
    else:
        starts.extend(m.start() for m in _TOKEN_WORDS_ANY_CASE.finditer(text))
    return starts


def _open_gates(text: str) -> set[str]:
    """Which plugin gates open for ``text`` (see :data:`_GATE_OF`); empty for most lines.

    Narrower than :func:`may_hold_secret`, each time by a condition every finding of the
    plugins concerned meets: a keyword part opens the keyword gate only where one of the
    keyword plugin's own keywords is found (``keyword`` in an error message is none); a
    long run of token characters opens the token gate only where the Discord or Telegram
    pattern (the token plugins it stands for) is found, a word such as ``key`` or
    ``token`` only with a value long enough for the patterns it anchors (see
    :func:`_token_found`); a quoted run opens the entropy gate only when some run of that
    plugin's characters holds at least 23 distinct ones (a string of n distinct
    characters has at most log2(n) bits of entropy per character, and the plugin reports
    more than 4.5)."""
    gates: set[str] = set()
    lowered = text.lower()
    if _has_keyword(text, lowered) and (not _anchored() or _KEYWORDS.search(text)):
        gates.add("keyword")
    if any(mark in text for mark in _PRIVATE_KEY_MARKS):
        gates.add("begin")
    if "://" in text and "@" in text:
        gates.add("basic")
    if _token_found(text, lowered, narrow=True):
        gates.add("run")
    if ('"' in text or "'" in text) and _QUOTED_LONG.search(text) and _varied_run(text):
        gates.add("quoted")
    return gates


def _varied_run(text: str) -> bool:
    """Whether some run of the entropy plugin's characters in ``text`` holds at least
    :data:`_ENTROPY_DISTINCT` distinct ones."""
    return any(
        len(set(run)) >= _ENTROPY_DISTINCT
        for run in _ENTROPY_RUN.findall(text)
        if len(run) >= _ENTROPY_DISTINCT
    )


class _DeferredModule(types.ModuleType):
    """Stands for a module not imported yet (see :func:`_requests_deferred`).

    While the module that imports it is being imported (by the thread doing so), a name
    looked up in it is a :class:`_NotLoaded` (detect-secrets 1.5.0 does so for two return
    annotations, ``-> requests.Response``); after that, the first name looked up imports
    the real module and every name is the real module's."""

    def __init__(self, name: str, window: threading.Lock, importer: int) -> None:
        super().__init__(name)
        self._window = window
        self._importer = importer

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if sys.modules.get(self.__name__) is self and threading.get_ident() == self._importer:
            return _NotLoaded(f"{self.__name__}.{attr}")
        with self._window:  # another thread waits for the import to end
            real = importlib.import_module(self.__name__)
        return getattr(real, attr)


class _NotLoaded:
    """A name of a :class:`_DeferredModule` looked up while its importer is imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}, not imported>"


@contextmanager
def _requests_deferred() -> Iterator[None]:
    """Import detect-secrets without importing ``requests`` (and ``urllib3``, ``idna``,
    ``charset_normalizer``...: more than half of detect-secrets' import time).

    detect-secrets imports ``requests`` in every plugin's module only to *verify* a
    finding against the service it belongs to, which lockstep never asks for.  While
    detect-secrets is imported, ``requests`` is a :class:`_DeferredModule` in
    ``sys.modules``; it is taken out again as soon as that import ends, so a later
    ``import requests`` (a test's, the program's) imports the real one, and
    detect-secrets' own use of it (never lockstep's) imports it then.  Only for the
    release whose module-level uses of ``requests`` were checked
    (:data:`ANCHORED_RELEASE`: two annotations); with another one, or with ``requests``
    already imported, detect-secrets is imported as it is."""
    if "requests" in sys.modules or not _anchored():
        yield
        return
    window = threading.Lock()
    with window:
        stand_in = _DeferredModule("requests", window, threading.get_ident())
        sys.modules["requests"] = stand_in
        try:
            yield
        finally:
            if sys.modules.get("requests") is stand_in:
                del sys.modules["requests"]


@dataclass(frozen=True, order=True)
class Hit:
    """One finding in one line: the detector's name, never the secret."""

    detector: str
    """detect-secrets' secret type (``AWS Access Key``, ``Secret Keyword``...)."""
    secret_digest: str
    """sha256 of the secret value: what an allow-list entry names."""


class Detector:
    """detect-secrets' plugin set, built on the first line a gate opens for (so a scan
    whose every line stays shut never imports detect-secrets), thread-safe to call."""

    def __init__(self) -> None:
        self._plugins: list[tuple[str, Any]] = []
        self._heuristic: Any = None
        self._lock = threading.Lock()
        self.scan_line = lru_cache(maxsize=_CACHE_SIZE)(self._scan_line)

    def _load(self) -> None:
        """Import detect-secrets and build its plugins (under ``self._lock``)."""
        with _requests_deferred():
            from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
            from detect_secrets.filters import heuristic
            from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

            classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
        plugins: list[tuple[str, Any]] = []
        for cls in sorted(classes, key=lambda c: str(c.__name__)):
            if cls.__name__ in _LEFT_OUT:
                continue
            plugin = cls(limit=_BASE64_LIMIT) if cls is Base64HighEntropyString else cls()
            plugins.append((_GATE_OF.get(cls.__name__, "run"), plugin))
        self._heuristic = heuristic
        self._plugins = plugins

    def _scan_line(self, line: str) -> tuple[Hit, ...]:
        hits = {
            Hit(kind, hashlib.sha256(value.encode("utf-8")).hexdigest())
            for kind, value in self.secrets_in(line)
        }
        return tuple(sorted(hits))

    def secrets_in(self, line: str) -> list[tuple[str, str]]:
        """Each finding of one line as (detector, the secret itself): for masking a text
        shown to a person, never to be written anywhere."""
        gates = _open_gates(line)
        if not gates:
            return []
        return [(kind, value) for kind, value, _ in self._found(line, gates)]

    def spans_in(self, line: str) -> list[tuple[str, str, str]]:
        """Each finding of one line as (detector, secret, the text to hide): the secret, or
        the whole match of the token pattern that found it where the plugin reports only
        a part (detect-secrets reports a GitHub token by its ``ghp`` group)."""
        gates = _open_gates(line)
        return self._found(line, gates) if gates else []

    def _found(self, line: str, gates: set[str]) -> list[tuple[str, str, str]]:
        found_values: list[tuple[str, str, str]] = []
        with self._lock:
            if self._heuristic is None:
                self._load()
            for gate, plugin in self._plugins:
                if gate not in gates:
                    continue
                if gate == "run" and not any(p.search(line) for p in plugin.denylist):
                    continue  # a token plugin finds only where one of its patterns matches
                for found in plugin.analyze_line(filename="lockstep", line=line):
                    value = found.secret_value or ""
                    if self._filtered(value, line, plugin, gate):
                        continue
                    shown = {value}
                    if gate == "run":  # every token the reported part stands for
                        shown.update(
                            whole
                            for pattern in plugin.denylist
                            for match in pattern.finditer(line)
                            if value in (whole := match.group(0).strip(" \t'\"=:["))
                        )
                        if len(shown) > 1:
                            shown.discard(value)
                    found_values.extend((str(found.type), value, s) for s in sorted(shown))
        return found_values

    def _filtered(self, secret: str, line: str, plugin: Any, gate: str) -> bool:
        """detect-secrets' heuristic filters (its defaults for ad-hoc strings).

        Its indirect-reference filter (``secret = get_secret_key()``: the keyword's value
        is a call, not a secret) is applied to the keyword plugin only: it drops *every*
        finding of a line shaped ``WORD: f(...)``, and a token printed in such a line
        (``note: connect('ghp_...')``, a code line ``added: print('AKIA...')``) is still
        the token."""
        h = self._heuristic
        return bool(
            h.is_sequential_string(secret)
            or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line, plugin)
            or h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret)
            or (gate == "keyword" and h.is_indirect_reference(line))
            or h.is_not_alphanumeric_string(secret)
        )

    def scan_text(self, text: str) -> list[tuple[int, Hit]]:
        """:func:`scan_text` (kept on the detector for callers that hold one)."""
        return scan_text(text)


def _positions(haystack: str, needle: str) -> Iterator[int]:
    at = haystack.find(needle)
    while at >= 0:
        yield at
        at = haystack.find(needle, at + 1)


def _line_indexes(text: str, lines: list[str], starts: Iterable[int]) -> set[int]:
    """The indexes in ``lines`` (``text.split("\\n")``) of the characters at ``starts``."""
    if len(lines) == 1:
        return {0} if any(True for _ in starts) else set()
    ends = list(itertools.accumulate(len(line) + 1 for line in lines))
    return {bisect.bisect_right(ends, start) for start in starts}


def candidate_lines(text: str, lines: list[str]) -> list[int]:
    """The lines of ``text`` in which some gate of :func:`_open_gates` may open."""
    lowered = text.lower()
    starts = _token_starts(text, lowered)
    for needle in (*_PRIVATE_KEY_MARKS, "://"):
        starts.extend(_positions(text, needle))
    found = _line_indexes(text, lines, starts)
    keyword_starts = [at for part in KEYWORD_PARTS for at in _positions(lowered, part)]
    if keyword_starts:  # lowering may change lengths: map through the lowered lines
        found |= _line_indexes(lowered, lowered.split("\n"), keyword_starts)
    if not text.isascii():  # what case folding finds that lowering does not
        found |= _line_indexes(text, lines, (m.start() for m in _KEYWORD_ANY_CASE.finditer(text)))
    return sorted(found)


def scan_text(text: str) -> list[tuple[int, Hit]]:
    """Every finding of a multi-line text, with its 1-based line number (lines split at
    ``\\n``).  Only lines where some gate may open are scanned; they are found by a few
    searches over the whole text, not one per line, and detect-secrets is imported only
    when there is one."""
    lines = text.split("\n")
    indexes = candidate_lines(text, lines)
    if not indexes:
        return []
    scan_line = detector().scan_line
    found: list[tuple[int, Hit]] = []
    for index in indexes:
        found.extend((index + 1, hit) for hit in scan_line(lines[index].rstrip("\r")))
    return found


def may_hold_secret(text: str) -> bool:
    """Whether ``text`` could hold a finding at all: the gates, checked over the whole text
    at once without importing detect-secrets (so a recording with nothing suspicious never
    pays for its import).  Wider than :func:`_candidate_lines` (a quote and a long run
    need not share a line), never narrower."""
    lowered = text.lower()
    return bool(
        _has_keyword(text, lowered)
        or any(mark in text for mark in _PRIVATE_KEY_MARKS)
        or ("://" in text and "@" in text)
        or _token_found(text, lowered)
        or (('"' in text or "'" in text) and _has_long_run(text))
    )


_SCREEN_WORDS: Final = tuple(
    word
    for words in [
        {w.lower().encode("ascii") for w in (*KEYWORD_PARTS, *TOKEN_WORDS, *_PRIVATE_KEY_MARKS)}
    ]
    for word in sorted(words)
    if not any(other != word and other in word for other in words)
)
"""Every literal of a case-insensitive gate, and the private-key marks (lowered: wider),
without those another one is found in (``pwd``: ``pw``)."""
_SCREEN_ANCHORS: Final = re.compile(
    b"|".join(anchor.pattern.encode("ascii") for anchor in TOKEN_ANCHORS)
)
_SCREEN_RUN: Final = re.compile(_RUN.pattern.encode("ascii"))
_LONG_RUN_MARK: Final = b"a" * 23


def may_hold_secret_ascii(data: bytes) -> bool:
    """Whether some gate of :func:`_open_gates` may open in ASCII ``data``, never narrower:
    the same conditions, searched in the bytes themselves (no decoding, a few C-speed
    searches), each over the whole of ``data`` rather than line by line (wider), a long
    run of token characters counted as a gate on its own (without a quote) and a
    private-key mark in any case.  For many texts at once, joined by a newline (no gate
    spans one).

    A word such as ``key`` opens nothing alone, as in :func:`_open_gates`: the keyword
    plugin needs one of its own keywords (``secret``, ``api_key``; not ``precedence_key``)
    and the other token plugins a value of 24 characters besides their word.  With
    another detect-secrets release than the one those conditions were checked against,
    every word and run counts, as in :func:`may_hold_secret`."""
    lowered = data.lower()
    if b"://" in data and b"@" in data:
        return True
    if not _anchored():  # every long run is also a run of this wider gate
        return any(word in lowered for word in _SCREEN_WORDS) or bool(_SCREEN_RUN.search(data))
    if any(mark in lowered for mark in _SCREEN_MARKS):
        return True
    if _SCREEN_KEYWORDS.search(lowered) or any(word in lowered for word in _SCREEN_BARE_WORDS):
        return True
    if any(word in lowered for word in _SCREEN_TOKEN_WORDS) and has_word_value_ascii(data):
        return True
    return bool(_SCREEN_ANCHORS.search(data)) or _LONG_RUN_MARK in data.translate(_RUN_BYTES)


_SCREEN_MARKS: Final = tuple(mark.lower().encode("ascii") for mark in _PRIVATE_KEY_MARKS)
_SCREEN_KEYWORDS: Final = re.compile(_KEYWORDS.pattern.lower().encode("utf-8"))
"""The keyword plugin's keywords, searched in the lowered bytes: for ASCII the same as
:data:`_KEYWORDS` (its non-ASCII ones never match), and nine times faster than a
case-insensitive search of the bytes."""
_SCREEN_BARE_WORDS: Final = tuple(word.encode("ascii") for word in _BARE_TOKEN_WORDS)
_SCREEN_TOKEN_WORDS: Final = tuple(word.encode("ascii") for word in TOKEN_WORDS)
_WORD_VALUE_BYTES: Final = bytes(
    0x61 if chr(b) in "_-/+" or (chr(b).isalnum() and b < 0x80) else 0x20 for b in range(256)
)
"""Each byte of :data:`_WORD_VALUE`'s characters to ``a``, any other to a space."""


def has_word_value_ascii(data: bytes) -> bool:
    """Whether :data:`_WORD_VALUE` is found in ASCII ``data``: a C-speed translation and
    one substring search, where the regular-expression engine retried at each of a long
    text's positions inside every shorter run (sqlparse's token trees: 118 ms of a
    recording's 129 ms of screening)."""
    return b"a" * 24 in data.translate(_WORD_VALUE_BYTES)


_DETECTOR: Detector | None = None
_BUILD_LOCK: Final = threading.Lock()


def detector() -> Detector:
    """The process's one detector (built on first use: importing detect-secrets costs)."""
    global _DETECTOR
    if _DETECTOR is None:
        with _BUILD_LOCK:
            if _DETECTOR is None:
                _DETECTOR = Detector()
    return _DETECTOR


_BASE64_RUN: Final = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_RUN: Final = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")


@lru_cache(maxsize=1)
def _printable() -> re.Pattern[str]:
    """Printable text (tabs and line ends too): compiled when a decoded run is first
    looked at, not at import (its ranges make it the slowest pattern to compile)."""
    return re.compile(r"[\t\n\r\x20-\x7e\u00a0-\uffff]*")


def _as_text(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 of printable characters, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if _printable().fullmatch(text) else None


def _from_base64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return None
    return _as_text(raw)


def decoded_views(line: str) -> list[tuple[str, str]]:
    """What a line holds under one layer of encoding, as ``(encoding, text)``: each base64
    or hex run that decodes to printable text, and the line URL-unquoted when it has
    ``%XX`` escapes -- where a token printed encoded shows itself to the detector."""
    views: list[tuple[str, str]] = []
    for match in _HEX_RUN.finditer(line):
        text = _as_text(bytes.fromhex(match.group()))
        if text is not None:
            views.append(("hex", text))
    for match in _BASE64_RUN.finditer(line):
        text = _from_base64(match.group())
        if text is not None and len(text) >= 8:
            views.append(("base64", text))
    if "%" in line:
        unquoted = unquote_plus(line)
        if unquoted != line:
            views.append(("URL-encoded", unquoted))
    return views
