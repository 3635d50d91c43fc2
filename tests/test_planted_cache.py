"""What arrives in a commit under ``.lockstep-cache/`` changes no verdict: a forged
``strength.json`` does not raise the mutation score in a fresh clone, a forged ``against.json``
does not vouch for a differential run, and ``guard`` names tracked cache files."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


FEES = """
def fee(amount, member=False):
    value = amount * 20 // 100
    if member:
        value = value // 2
    if amount > 100:
        value = value + 1
    return value
"""
DRIVER = "from shop.fees import fee\n\nfor amount in [10, 99, 150]:\n    fee(amount)\n"
CONFIG = '[[ledger]]\nname = "fee"\ntarget = "shop.fees:fee"\ndriver = "shop/drive.py"\n'


def _strength(root: Path, cache_home: Path) -> dict[str, Any]:
    result = run_cli(
        "strength", "--mutants", "--json", cwd=root, env={"XDG_CACHE_HOME": str(cache_home)}
    )
    assert result.code == 0, result.output
    assert "Traceback" not in result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _forge(path: Path, key: bytes) -> None:
    """Every verdict set to killed, sealed again with the attacker's own key."""
    _, _, body = path.read_bytes().partition(b"\n")
    entries = json.loads(body)
    for verdict in entries.values():
        verdict[0] = "killed"
    forged = json.dumps(entries).encode()
    mac = hmac.new(key, forged, hashlib.sha256).hexdigest().encode()
    path.write_bytes(b"lockstep-sealed " + mac + b"\n" + forged)


def test_a_forged_strength_cache_changes_no_score_in_a_fresh_clone(tmp_path: Path) -> None:
    attacker = GitRepo(tmp_path / "attacker")
    attacker.commit(
        "shop",
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/drive.py": DRIVER,
            "lockstep.toml": CONFIG,
        },
    )
    assert run_cli("record", cwd=attacker.root).code == 0
    attacker.commit("record")
    honest = _strength(attacker.root, tmp_path / "attacker-home")["mutants"]
    assert 0 < honest["score"] < 1
    cached = attacker.root / ".lockstep-cache/strength.json"
    _forge(cached, (tmp_path / "attacker-home/lockstep/key").read_bytes())
    forged_there = _strength(attacker.root, tmp_path / "attacker-home")["mutants"]
    assert forged_there["score"] > honest["score"]  # good on its author's own machine
    attacker.git("add", "-f", ".lockstep-cache/strength.json")
    attacker.commit("a perfect score")

    clone = tmp_path / "clone"
    attacker.git("clone", "-q", str(attacker.root), str(clone))
    victim_home = tmp_path / "victim-home"
    mutants = _strength(clone, victim_home)["mutants"]
    assert mutants["score"] == honest["score"]
    assert mutants["counts"] == honest["counts"]
    notes = " ".join(mutants["notes"])
    assert ".lockstep-cache/strength.json: not written by lockstep for this user" in notes
    assert "tracked by git (.lockstep-cache/strength.json)" in notes

    text = run_cli("strength", "--mutants", cwd=clone, env={"XDG_CACHE_HOME": str(victim_home)})
    assert text.code == 0 and "Traceback" not in text.output

    guard = run_cli("guard", cwd=clone)
    assert guard.code == 1, guard.output
    assert "git tracks lockstep's scratch files (.lockstep-cache/strength.json)" in guard.stdout


def test_a_plain_forged_cache_is_ignored_with_one_note(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    repo.commit(
        "shop",
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/drive.py": DRIVER,
            "lockstep.toml": CONFIG,
        },
    )
    assert run_cli("record", cwd=repo.root).code == 0
    home = tmp_path / "home"
    honest = _strength(repo.root, home)["mutants"]
    for planted in (b'{"0": ["killed"]}', b"\x00\xff not json", b"lockstep-sealed 00\n{}"):
        (repo.root / ".lockstep-cache/strength.json").write_bytes(planted)
        mutants = _strength(repo.root, home)["mutants"]
        assert mutants["counts"] == honest["counts"]
        assert not any(r["cached"] for r in mutants["results"])
        assert sum("strength.json" in n for n in mutants["notes"]) == 1


def test_a_forged_differential_result_vouches_for_nothing(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    repo.commit(
        "shop",
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/drive.py": DRIVER,
            "lockstep.toml": CONFIG,
        },
    )
    assert run_cli("record", cwd=repo.root).code == 0
    repo.commit("record")
    head = repo.commit("change", {"shop/fees.py": FEES.replace("// 2", "// 3")})
    stored = {
        "rev": "HEAD~1", "base": head, "head": head, "oracles": ["fee"],
        "inputs": 1000, "differences": 0, "smallest": "",
    }  # fmt: skip
    (repo.root / ".lockstep-cache").mkdir()
    (repo.root / ".lockstep-cache/against.json").write_text(json.dumps(stored))
    review = run_cli("review", "HEAD~1..HEAD", "--format", "md", cwd=repo.root)
    assert "differential" not in review.stdout, review.output
