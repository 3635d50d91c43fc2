"""Print how long the gates take on a synthetic repository: N modules importing one core module.

Usage: python bench/bench_gates.py [N]   (default 300)

Figures: the import graph (budget) and the syntax-tree comparison (review rows
3-6) on a one-line change to the core module. No peer tool does these checks
as commands; the reference figure is `git diff --stat` on the same change.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lockstep.config import load_project
from lockstep.gates.budget import check_budget
from lockstep.gates.code_changes import code_changes
from lockstep.gates.git import Git
from lockstep.gates.guard import local_change


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lockstep.toml").write_text("[gates]\n")
        pkg = root / "app"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "core.py").write_text("def f(a, b=1):\n    return a + b\n")
        for i in range(n):
            (pkg / f"m{i}.py").write_text(
                f"from app.core import f\n\ndef g{i}(x):\n    return f(x)\n"
            )
        git(root, "init", "-q", "-b", "main")
        git(root, "-c", "user.email=b@x", "-c", "user.name=b", "add", "-A")
        git(root, "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-q", "-m", "init")
        (pkg / "core.py").write_text("def f(a, b=1):\n    return b + a\n")

        project = load_project(root)
        repo = Git(root)
        change = local_change(repo, staged=False)

        t = time.perf_counter()
        subprocess.run(["git", "diff", "--stat"], cwd=root, check=True, capture_output=True)
        print(f"git diff --stat                    {time.perf_counter() - t:8.3f} s")
        t = time.perf_counter()
        report = check_budget(project, repo, change)
        print(
            f"budget ({n + 2} modules, grimp)      {time.perf_counter() - t:8.3f} s  {report.summary()}"
        )
        t = time.perf_counter()
        facts = code_changes(project, repo, change)
        print(
            f"review code rows ({len(facts.files)} file)          {time.perf_counter() - t:8.3f} s  "
            f"{len(facts.signature_changes)} signature change(s)"
        )


if __name__ == "__main__":
    main()
