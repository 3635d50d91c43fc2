"""How lockstep renders one fixture: read the rows, run the transformer, return the lines."""
import json

from transform.rows import transform


def render(path):
    rows = json.loads(path.read_text(encoding="utf-8"))
    return transform(rows)
