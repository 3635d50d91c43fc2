"""The canonical value codec: Python values ⇄ tagged JSON that no two different values share.

:mod:`lockstep.canon.codec` encodes and decodes; :mod:`lockstep.canon.text` renders a
frozen value (and a frozen call) as Python-like text for reports.  This package
re-exports the codec, the one vocabulary every oracle kind freezes values with.
Decoding imports no module and calls nothing named in the data; the limits on
nesting and number sizes are in :mod:`lockstep.canon.codec`'s docstring.
"""

from __future__ import annotations

# The codec's public names, listed once (its ``__all__``).
from lockstep.canon.codec import *  # noqa: F403
from lockstep.canon.codec import __all__ as __all__
