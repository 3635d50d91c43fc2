"""The environment's own table, copied: whether the environment changed, asked cheaply."""

from __future__ import annotations

import os


def raw_environ() -> dict[object, object] | None:
    """A copy of ``os.environ``'s own table (encoded names and values), None where it has
    none: two copies compare in C, where reading ``os.environ`` decodes every name."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else None
