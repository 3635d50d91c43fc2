"""Classes of another package than the code under freeze (``codec_cases``).

``Opaque`` runs its own code on its state (``__getstate__``): it has no encoder and does
not freeze by structure, so the codec must refuse it with its path and say why.
``Link`` is plain data (written in Python, no state protocol of its own): its objects
freeze as one graph per value, identity kept, and ``END`` (a bare ``object()`` this
module keeps) as the marker it is."""

END = object()


class Opaque:
    """An object of a foreign class that reads its own state."""

    def __getstate__(self) -> dict[str, object]:
        raise TypeError("an Opaque has no state to give")

    def __repr__(self) -> str:
        return "Opaque()"


class Link:
    """A node of a ring: plain data."""

    def __init__(self, value: object = END) -> None:
        self.value = value
        self.next: Link = self


def ring(*values: object) -> Link:
    """A ring of links around a head holding ``END``."""
    head = Link()
    for value in reversed(values):
        link = Link(value)
        link.next, head.next = head.next, link
    return head
