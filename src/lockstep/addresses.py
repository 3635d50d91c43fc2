"""An object's address as its ``repr`` shows it (``<Foo object at 0x7f3a2c1d9e80>``).

It differs in every process, so a value holding one cannot replay.  One pattern serves
the built-in ``hex-address`` rule (:mod:`lockstep.rules`), recording's verification when
it names that cause (:mod:`lockstep.oracles.verify`) and an exception's kept attributes
(:mod:`lockstep.oracles.ledger.exc_state`), so the three never disagree on what an
address is: ``0x`` and 6 to 16 hex digits standing as a word of their own.
"""

from __future__ import annotations

import re
from typing import Final

HEX_ADDRESS: Final = r"\b0x[0-9a-fA-F]{6,16}\b"
HEX_ADDRESS_TEXT: Final = re.compile(HEX_ADDRESS)
HEX_ADDRESS_BYTES: Final = re.compile(HEX_ADDRESS.encode())

__all__ = ["HEX_ADDRESS", "HEX_ADDRESS_BYTES", "HEX_ADDRESS_TEXT"]
