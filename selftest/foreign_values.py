"""A class of another package than the code under freeze (``codec_cases``): it has no
encoder and does not freeze by structure, so the codec must refuse it with its path."""


class Opaque:
    """An arbitrary object of a foreign class."""

    def __repr__(self) -> str:
        return "Opaque()"
