"""Projects whose red replay the report tests read: the demo's rounding drift, and a
legacy renderer whose fixtures, ids and output carry markup an attacker would write."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import invoke_cli, write_files

HOSTILE_ID = "<svg onload=window.__pwned=1>.json"
HOSTILE_LABEL = (
    '</td></table><script>window.__pwned=2;alert("pwned")</script>'
    "<img src=x onerror=\"window.__pwned=3\"><a href='javascript:alert(4)'>click</a>"
)

CONFIG = """
[[corpus]]
name = "ledger_lines"
fixtures = "fixtures/*.json"
render = "legacy.harness:render"
"""

HARNESS = """
import json


def render(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"line {i:02d}: {doc['label']}" for i in range(40)]
    lines[20] = "total: " + ROUND(doc["total"])
    return "\\n".join(lines) + "\\n"


def ROUND(text):
    return text
"""

LONG_LINES = 40
"""Lines each rendered document has; one (line 21) changes, so two long equal stretches fold."""


def hostile_red_project(root: Path) -> Path:
    """Record a corpus, then change one line of its output: a red replay to report on."""
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "legacy/__init__.py": "",
            "legacy/harness.py": HARNESS,
            "fixtures/basic.json": '{"label": "plain row", "total": "12.35"}',
            f"fixtures/{HOSTILE_ID}": (
                '{"label": ' + _json_string(HOSTILE_LABEL) + ', "total": "<b>0.05</b>"}'
            ),
        },
    )
    recorded = invoke_cli("record", cwd=root)
    assert recorded.code == 0, recorded.output
    legacy = root / "legacy" / "harness.py"
    legacy.write_text(
        HARNESS.replace("    return text\n", "    return text + '0'\n"), encoding="utf-8"
    )
    return root


def _json_string(text: str) -> str:
    import json

    return json.dumps(text)


def demo_red_project(root: Path) -> Path:
    """The demo's corpus chapter up to its red step: freeze the transformer, then apply the
    tidy-looking refactor that changes rounding."""
    from lockstep.demo import runner
    from lockstep.demo.chapters import corpus

    runner.prepare(root, [corpus.CHAPTER])
    recorded = invoke_cli("record", "transform", cwd=root)
    assert recorded.code == 0, recorded.output
    variant = Path(runner.__file__).parent / "variants" / "rows_tidy_rounding.py"
    shutil.copyfile(variant, root / "transform" / "rows.py")
    return root
