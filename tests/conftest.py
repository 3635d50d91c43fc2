"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import GitRepo


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """A fresh, real git repository (``git init``) in a temp folder."""
    return GitRepo(tmp_path / "repo")
