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
* Each plugin runs behind a cheap *gate*, a condition every one of its findings meets:
  the keyword plugin needs one of its own keywords, the private-key plugin ``BEGIN``,
  basic auth a ``user:password@`` URL, the token plugins a run of at least 10 token
  characters (the shortest token they match).  A line no gate opens for (numbers,
  prose, short words: most recorded lines) skips detect-secrets entirely.

Results are cached per line, so a value recorded again (``--force``, a ledger's 100,000th
call with the same argument) is not scanned again.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

_CACHE_SIZE: Final = 1 << 16
_LEFT_OUT: Final = frozenset({"HexHighEntropyString", "IPPublicDetector"})
_BASE64_LIMIT: Final = 4.5
"""detect-secrets' own default entropy limit for base64-like quoted strings."""


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
        from detect_secrets.plugins.keyword import DENYLIST

        keywords = re.compile("|".join(DENYLIST), re.IGNORECASE)
        long_run = re.compile(r"[A-Za-z0-9+/=_\-.~]{10,}")
        longer_run = re.compile(r"[A-Za-z0-9+/=_\-.~]{20,}")
        gates: dict[str, re.Pattern[str]] = {
            "KeywordDetector": keywords,
            "PrivateKeyDetector": re.compile("BEGIN"),
            "BasicAuthDetector": re.compile(r"://[^\s@]*:[^\s@]*@"),
            "CloudantDetector": longer_run,
            "SendGridDetector": longer_run,
        }
        self._plugins: list[tuple[re.Pattern[str], Any]] = []
        classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
        for cls in sorted(classes, key=lambda c: str(c.__name__)):
            if cls.__name__ in _LEFT_OUT:
                continue
            plugin = cls(limit=_BASE64_LIMIT) if cls is Base64HighEntropyString else cls()
            self._plugins.append((gates.get(cls.__name__, long_run), plugin))
        self._heuristic = heuristic
        self._prefilter = re.compile(
            "|".join(f"(?:{g.pattern})" for g in (long_run, *gates.values())), re.IGNORECASE
        )
        self._lock = threading.Lock()
        self.scan_line = lru_cache(maxsize=_CACHE_SIZE)(self._scan_line)

    def maybe(self, text: str) -> bool:
        """Whether ``text`` could hold a finding at all (the cheap necessary condition)."""
        return self._prefilter.search(text) is not None

    def _scan_line(self, line: str) -> tuple[Hit, ...]:
        if self._prefilter.search(line) is None:
            return ()
        hits: set[Hit] = set()
        with self._lock:
            for gate, plugin in self._plugins:
                if gate.search(line) is None:
                    continue
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
        """Every finding of a multi-line text, with its 1-based line number."""
        if not self.maybe(text):
            return []
        found: list[tuple[int, Hit]] = []
        for lineno, line in enumerate(text.splitlines() or [""], start=1):
            found.extend((lineno, hit) for hit in self.scan_line(line))
        return found


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
