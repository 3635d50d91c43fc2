"""What every recording and every verifying fork does once, it does once.

A recording's fixed costs are paid again in each verifying fork (one per ledger), so the
little things add up: the oracle folder resolved for every file named, the codec's
per-class plans dropped each time a package already allowed is allowed again, a walk of
every module's names to rebind a wrapped function.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from helpers import write_files
from lockstep import canon
from lockstep.canon import registry
from lockstep.config import Project, load_project


def test_the_oracle_folder_is_resolved_once_per_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(tmp_path, {"lockstep.toml": '[lockstep]\ndir = "oracles"\n'})
    project = load_project(config_path=tmp_path / "lockstep.toml")
    calls: list[str] = []
    real = Project.resolve

    def counted(self: Project, rel: str, *, key: str) -> Path:
        calls.append(rel)
        return real(self, rel, key=key)

    monkeypatch.setattr(Project, "resolve", counted)
    assert project.oracle_dir == (tmp_path / "oracles").resolve()
    assert project.oracle_dir is project.oracle_dir
    assert calls == ["oracles"]


def test_allowing_what_is_allowed_keeps_the_codecs_plans() -> None:
    canon.encode(datetime.timedelta(days=1))
    canon.allow_callables_from("lockstep_fixed_costs_pkg")
    canon.allow_classes_matching("lockstep_fixed_costs_pkg.*")
    registry._CLASS_FACTS[int] = ("builtins", False, False)  # a plan made since
    canon.allow_callables_from("lockstep_fixed_costs_pkg.sub")  # the same top package
    canon.allow_classes_matching("lockstep_fixed_costs_pkg.*")  # the same pattern
    assert int in registry._CLASS_FACTS
    canon.allow_callables_from("lockstep_fixed_costs_other")  # a new one: plans dropped
    assert int not in registry._CLASS_FACTS
    registry._CLASS_FACTS[int] = ("builtins", False, False)
    canon.allow_classes_matching("lockstep_fixed_costs_other.*")
    assert int not in registry._CLASS_FACTS
