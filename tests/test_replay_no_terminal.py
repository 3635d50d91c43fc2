"""A ledger replayed by ``lockstep replay`` typed in a terminal reads no terminal, as the
interpreter that verified its rows read none (a recording runs under pytest, and in CI)."""

from __future__ import annotations

import json
from pathlib import Path

TTY_FILES = {
    "lockstep.toml": '[[ledger]]\nname = "terminal"\ntarget = "term:terminal"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "term.py": (
        "import os\n\n\n"
        "def terminal(name):\n"
        "    try:\n"
        "        os.close(os.open('/dev/tty', os.O_RDWR | os.O_NOCTTY))\n"
        "    except OSError:\n"
        "        return name + ': none'\n"
        "    return name + ': a terminal to read'\n"
    ),
    "tests/test_term.py": "import term\n\n\ndef test_term():\n    assert term.terminal('x')\n",
}


def test_a_replay_typed_in_a_terminal_hands_its_calls_none(tmp_path: Path) -> None:
    """Verified where no terminal could be read (as in CI), a row replayed by ``lockstep
    replay`` typed in a terminal reads none either: click's ``prompt(hide_input=True)``
    read its password from ``/dev/tty`` and waited out the ledger's timeout."""
    import os
    import pty
    import subprocess
    import sys

    from helpers import write_files

    root = tmp_path / "project"
    write_files(root, TTY_FILES)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("LOCKSTEP_CONFIG", None)
    recording = subprocess.run(  # a session of its own: no terminal, as in CI
        [sys.executable, "-m", "pytest", "--lockstep-record", "-q", "-p", "no:randomly", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=300,
    )
    assert recording.returncode == 0, recording.stdout + recording.stderr
    assert (
        json.loads((root / "lockstep/terminal.ledger.jsonl").read_text().splitlines()[1])["result"]
        == "x: none"
    )
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child: lockstep replay in a terminal
        os.chdir(root)
        os.execve(sys.executable, [sys.executable, "-m", "lockstep", "replay"], env)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, output.decode(errors="replace")
