"""A secret the detector finds in one row refuses every row that holds it in another form.

hyperlink's ``URL.from_text("http://someuser:somepassword@host")`` was refused (the
detector reads the credentials in the URL), and the same ``"someuser:somepassword"``
kept in the ``URL`` state of every other ledger of the run, where no detector sees it.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, run_cli, write_files

PASSWORD = "Zq8vN3kPx7Lm"  # pragma: allowlist secret

NET = """
class Url:
    def __init__(self, host, auth=""):
        self.host = host
        self.auth = auth

    def credentials(self):
        return self.auth


def parse(text):
    scheme, _, rest = text.partition("://")
    auth, _, host = rest.rpartition("@")
    return Url(host.split("/")[0], auth)


def login_line(user, token):
    return user + ":" + token
"""

TESTS = f'''
from net import Url, login_line, parse


def test_all():
    url = parse("https://alice:{PASSWORD}@example.com/x")
    assert url.credentials() == "alice:{PASSWORD}"
    assert Url("example.org").credentials() == ""
    assert login_line("alice", "{PASSWORD}") == "alice:{PASSWORD}"
    assert login_line("bob", "short") == "bob:short"
'''


def test_a_secret_found_in_one_ledger_refuses_its_other_forms_in_all(tmp_path: Path) -> None:
    root = tmp_path / "net"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "net"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/net/__init__.py": NET,
            "tests/test_net.py": TESTS,
        },
    )
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 1, run.output  # a secret refused fails the run, as `record` exits 1
    assert "refused for a secret" in run.output and "the run fails" in run.output
    written = {p.name: p.read_text() for p in (root / "lockstep").glob("*.jsonl")}
    assert written, run.output
    assert not [name for name, text in written.items() if PASSWORD in text], run.output
    assert "found in another row" in run.output, run.output
    # the rows without it are kept
    assert '"example.org"' in written["net.Url.credentials.ledger.jsonl"]
    assert '"bob"' in written["net.login_line.ledger.jsonl"]
    assert run_cli("replay", cwd=root).code == 0


def test_a_percent_encoded_secret_is_refused_decoded_too(tmp_path: Path) -> None:
    """``http://alice:hunter%202xyz@host``: the URL's object holds ``hunter 2xyz``."""
    root = tmp_path / "net"
    encoded = "Zq8v%20N3kPx7Lm"  # pragma: allowlist secret
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "net"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/net/__init__.py": NET.replace(
                'return Url(host.split("/")[0], auth)',
                'from urllib.parse import unquote\n    return Url(host.split("/")[0], unquote(auth))',
            ),
            "tests/test_net.py": (
                "from net import parse\n\n\ndef test_decoded():\n"
                f"    url = parse('https://alice:{encoded}@example.com/x')\n"
                "    assert url.credentials().startswith('alice:')\n"
            ),
        },
    )
    assert "unquote(auth)" in (root / "src/net/__init__.py").read_text()
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 1, run.output  # a secret refused fails the run, as `record` exits 1
    assert "refused for a secret" in run.output and "the run fails" in run.output
    written = "".join(p.read_text() for p in (root / "lockstep").glob("*.jsonl"))
    assert "Zq8v N3kPx7Lm" not in written and encoded not in written, run.output


CHECKER = (
    NET
    + """

class Checker:
    def __init__(self):
        self.allow_password = False

    def check(self, text):
        return "@" in text
"""
)


def test_a_secret_refuses_rows_where_it_stands_whole_not_inside_a_longer_name(
    tmp_path: Path,
) -> None:
    """rfc3986's tests put ``password`` in a URL's credentials; every ``Validator`` row,
    whose state names ``allow_password``, was refused as holding it (95 rows)."""
    root = tmp_path / "net"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "net"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/net/__init__.py": CHECKER,
            "tests/test_net.py": (
                "from net import Checker, login_line, parse\n\n\ndef test_all():\n"
                "    assert parse('https://alice:password@example.com/x').host == 'example.com'\n"
                "    assert login_line('alice', 'password') == 'alice:password'\n"
                "    assert Checker().check('a@b')\n"
            ),
        },
    )
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 1, run.output  # the URL's credentials are a secret: refused
    assert "found in another row" in run.output, run.output  # "alice:password" echoed
    written = {p.name: p.read_text() for p in (root / "lockstep").glob("*.jsonl")}
    assert not [n for n, text in written.items() if ":password" in text], run.output
    check = written.get("net.Checker.check.ledger.jsonl", "")
    assert '"allow_password"' in check and '"a@b"' in check, run.output
