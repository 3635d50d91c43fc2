"""Secrets never reach an oracle file: detection by default, scrubbing by value, allow-lists.

* :mod:`.detect` -- which strings look like secrets (detect-secrets' plugins, cached);
* :mod:`.scrub` -- configured values replaced by ``<NAME>`` and put back at replay;
* :mod:`.policy` -- the one check each oracle kind makes before writing a case;
* :mod:`.screen` -- a quick, sure "nothing here" for many ledger rows at once;
* :mod:`.files` -- ``lockstep scan``: existing oracle files and fixtures.
"""

from lockstep.secrets.policy import (
    Finding,
    SecretPolicy,
    policy_for,
    policy_near,
    scrubber_for,
)
from lockstep.secrets.scrub import Scrubber, SecretMissing

__all__ = [
    "Finding",
    "Scrubber",
    "SecretMissing",
    "SecretPolicy",
    "policy_for",
    "policy_near",
    "scrubber_for",
]
