"""Keywords replay in the order they were passed, scalars or not.

A call made of scalars only takes the recorder's shortest path, which kept the input's
canonical bytes alone: ``order(b=1, a=2)`` was written as ``{"a": 2, "b": 1}``, so a
function returning ``list(kwargs)`` was refused, and cachetools-style ``hashkey`` that
dropped its ``sorted()`` replayed green while the suite failed."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import recorded, red_after_change, run_cli

FILES = {
    "lockstep.toml": (
        '[[ledger]]\nname = "order"\ntarget = "kw:order"\n\n'
        '[[ledger]]\nname = "key"\ntarget = "kw:key"\n'
    ),
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "kw.py": (
        "def order(**kwargs):\n    return list(kwargs)\n\n\n"
        "def key(*args, **kwargs):\n    return args + sum(sorted(kwargs.items()), ())\n"
    ),
    "tests/test_kw.py": (
        "import kw\n\n\n"
        "def test_kw():\n"
        "    assert kw.order(b=1, a=2) == ['b', 'a']\n"
        "    assert kw.order(a=1, b=2) == ['a', 'b']\n"
        "    assert kw.key(1, b=1, a=2) == (1, 'a', 2, 'b', 1)\n"
    ),
}


def test_keywords_keep_the_order_they_were_passed_in(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "refused 0" in run.output and "refused 1" not in run.output, run.output
    lines = (root / "lockstep/order.ledger.jsonl").read_text().splitlines()[1:]
    assert sorted(list(json.loads(line)["kwargs"]) for line in lines) == [["a", "b"], ["b", "a"]]
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(
        root, "kw.py", "sum(sorted(kwargs.items()), ())", "sum(kwargs.items(), ())", "key"
    )
    assert "DRIFT key::" in red.stdout, red.output
