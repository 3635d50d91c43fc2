"""root_on_path remembers a root's folders, and sees a ``src/`` created later."""

from __future__ import annotations

import sys
from pathlib import Path

from lockstep.targets import root_on_path


def test_root_on_path_sees_a_src_folder_created_after_the_first_use(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    before = list(sys.path)
    with root_on_path(root):
        assert sys.path[0] == str(root) and str(root / "src") not in sys.path
    assert sys.path == before
    (root / "src").mkdir()
    with root_on_path(root):
        assert sys.path[:2] == [str(root / "src"), str(root)]
        with root_on_path(root):  # already there: nothing added, nothing removed after
            assert sys.path[:2] == [str(root / "src"), str(root)]
        assert sys.path[:2] == [str(root / "src"), str(root)]
    assert sys.path == before
    with root_on_path(tmp_path / "missing"):
        assert sys.path == before
