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
  reach its limit, a token plugin a run of at least 11 token characters (the shortest
  real token they match) and then a search hit of one of its own patterns (much
  cheaper than its full analysis).  A line no gate opens for (numbers, prose, short
  words: most recorded lines) skips detect-secrets entirely.

Results are cached per line, so a value recorded again (``--force``, a ledger's 100,000th
call with the same argument) is not scanned again.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

_CACHE_SIZE: Final = 1 << 16
KEYWORD_PARTS: Final = ("key", "pass", "pwd", "secret", "contras")
"""Every keyword of detect-secrets' keyword plugin (its ``DENYLIST``) contains one of these
(a test checks it against the installed version)."""
_QUOTED_LONG: Final = re.compile(r"""(['"])[A-Za-z0-9+/=_\-]{23,}\1""")
"""The base64 entropy plugin's quoted strings (its charset) that can pass its limit: n
characters have at most log2(n) bits of entropy per character, and 4.5 needs n >= 23."""
_RUN: Final = re.compile(r"[A-Za-z0-9+/=_\-.~]{11,}")
"""A run of token characters as long as the shortest real token a token plugin matches
(Artifactory's ``AP`` keys: 11; AWS: 20; GitHub: 40...)."""
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


def _open_gates(text: str) -> set[str]:
    """Which plugin gates open for ``text`` (see :data:`_GATE_OF`); empty for most lines."""
    gates: set[str] = set()
    lowered = text.lower()
    if any(part in lowered for part in KEYWORD_PARTS):
        gates.add("keyword")
    if "BEGIN" in text:
        gates.add("begin")
    if "://" in text and "@" in text:
        gates.add("basic")
    if _RUN.search(text):
        gates.add("run")
        if ('"' in text or "'" in text) and _QUOTED_LONG.search(text):
            gates.add("quoted")
    return gates


@dataclass(frozen=True, order=True)
class Hit:
    """One finding in one line: the detector's name, never the secret."""

    detector: str
    """detect-secrets' secret type (``AWS Access Key``, ``Secret Keyword``...)."""
    secret_digest: str
    """sha256 of the secret value: what an allow-list entry names."""


class Detector:
    """detect-secrets' plugin set, built once, thread-safe to call."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        self._plugins: list[tuple[str, Any]] = []
        classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
        for cls in sorted(classes, key=lambda c: str(c.__name__)):
            if cls.__name__ in _LEFT_OUT:
                continue
            plugin = cls(limit=_BASE64_LIMIT) if cls is Base64HighEntropyString else cls()
            self._plugins.append((_GATE_OF.get(cls.__name__, "run"), plugin))
        self._heuristic = heuristic
        self._lock = threading.Lock()
        self.scan_line = lru_cache(maxsize=_CACHE_SIZE)(self._scan_line)

    def _scan_line(self, line: str) -> tuple[Hit, ...]:
        gates = _open_gates(line)
        if not gates:
            return ()
        hits: set[Hit] = set()
        with self._lock:
            for gate, plugin in self._plugins:
                if gate not in gates:
                    continue
                if gate == "run" and not any(p.search(line) for p in plugin.denylist):
                    continue  # a token plugin finds only where one of its patterns matches
                for found in plugin.analyze_line(filename="lockstep", line=line):
                    value = found.secret_value or ""
                    if self._filtered(value, line, plugin):
                        continue
                    hits.add(Hit(found.type, hashlib.sha256(value.encode("utf-8")).hexdigest()))
        return tuple(sorted(hits))

    def _filtered(self, secret: str, line: str, plugin: Any) -> bool:
        """detect-secrets' heuristic filters (its defaults for ad-hoc strings)."""
        h = self._heuristic
        return bool(
            h.is_sequential_string(secret)
            or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line, plugin)
            or h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret)
            or h.is_indirect_reference(line)
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


def _candidate_lines(text: str, lines: list[str]) -> list[int]:
    """The lines of ``text`` in which some gate of :func:`_open_gates` may open."""
    starts = [m.start() for m in _RUN.finditer(text)]
    for needle in ("BEGIN", "://"):
        starts.extend(_positions(text, needle))
    found = _line_indexes(text, lines, starts)
    lowered = text.lower()
    keyword_starts = [at for part in KEYWORD_PARTS for at in _positions(lowered, part)]
    if keyword_starts:  # lowering may change lengths: map through the lowered lines
        found |= _line_indexes(lowered, lowered.split("\n"), keyword_starts)
    return sorted(found)


def scan_text(text: str) -> list[tuple[int, Hit]]:
    """Every finding of a multi-line text, with its 1-based line number (lines split at
    ``\\n``).  Only lines where some gate may open are scanned; they are found by a few
    searches over the whole text, not one per line, and detect-secrets is imported only
    when there is one."""
    lines = text.split("\n")
    indexes = _candidate_lines(text, lines)
    if not indexes:
        return []
    scan_line = detector().scan_line
    found: list[tuple[int, Hit]] = []
    for index in indexes:
        found.extend((index + 1, hit) for hit in scan_line(lines[index].rstrip("\r")))
    return found


def may_hold_secret(text: str) -> bool:
    """Whether ``text`` could hold a finding at all: the gates, checked without importing
    detect-secrets (so a recording with nothing suspicious never pays for its import)."""
    return bool(_candidate_lines(text, text.split("\n")))


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
