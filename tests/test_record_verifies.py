"""Record proves each new case reproduces before writing it: the next replay is green.

Example projects whose recording context differs from a clean replay: a test that
patches a collaborator, a registry a test fills and empties, a render and a driver
that iterate a set of strings (order depends on the hash seed), a pins program
printing set order.  Record refuses exactly those cases, names them with what
differed, writes the rest, and the replay right after is green.
"""

from __future__ import annotations

from pathlib import Path

from helpers import invoke_cli, run_cli, run_pytest, write_files

SHOP = {
    "shop/__init__.py": "",
    "shop/rates.py": "def rate(cur):\n    return {'EUR': 1.0, 'USD': 0.5}[cur]\n",
    "shop/words.py": "EXTRA = set()\n",
    "shop/total.py": (
        "from shop import rates, words\n\n"
        "TAGS = {'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'}\n\n\n"
        "def total(lines):\n    return round(sum(a * rates.rate(c) for a, c in lines), 2)\n\n\n"
        "def label(prefix):\n    return prefix + ':' + ','.join(TAGS)\n\n\n"
        "def known(word):\n    return word in words.EXTRA or word == 'base'\n"
    ),
}

TESTS = """
from unittest import mock

from shop import total, words


def test_total():
    assert total.total([(10, "EUR"), (4, "USD")]) == 12.0


def test_total_with_a_patched_rate():
    with mock.patch("shop.rates.rate", return_value=2.0):
        assert total.total([(1, "EUR")]) == 2.0


def test_label():
    assert total.label("x").startswith("x:")


def test_registry():
    words.EXTRA.add("temp")
    try:
        assert total.known("temp")
    finally:
        words.EXTRA.discard("temp")
    assert total.known("base")
"""

CONFIG = """
[[ledger]]
name = "total"
target = "shop.total:total"

[[ledger]]
name = "label"
target = "shop.total:label"

[[ledger]]
name = "known"
target = "shop.total:known"
"""


def test_rows_from_a_test_suite_that_do_not_reproduce_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(root, {**SHOP, "tests/test_shop.py": TESTS, "lockstep.toml": CONFIG})
    args = ["--lockstep-record=total", "--lockstep-record=label", "--lockstep-record=known"]
    result = run_pytest("-q", *args, "tests", cwd=root, plugins=("lockstep.pytest.plugin",))
    assert result.code == 0, result.output
    out = result.stdout
    assert "total([(1, 'EUR')])" in out and "recorded returned 2.0" in out
    assert "label('x')" in out and "does not reproduce in a fresh interpreter" in out
    assert "known('temp')" in out and "recorded returned True" in out
    assert "verified 1 of 2 new case(s) in a fresh interpreter" in out
    replay = run_cli("replay", cwd=root)
    assert replay.code == 1, replay.output  # every label row was refused: nothing guards it
    assert "label::(no rows)" in replay.stdout, replay.output
    assert (
        "0 rows, so nothing guards the target (no call was recorded, or each was skipped or refused"
        in (replay.stdout)
    ), replay.output
    assert "2 passed" in replay.stdout  # total([(10..)]) and known('base')
    status = run_cli("status", cwd=root)
    label = next(line for line in status.stdout.splitlines() if line.startswith("label "))
    assert label.split()[2] == "0" and "no rows: it guards nothing" in label, status.output


def test_a_driver_recording_refuses_set_order_and_writes_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    driver = (
        "from shop import total\n\n\ndef main():\n"
        "    total.label('x')\n    total.total([(2, 'EUR')])\n"
    )
    config = CONFIG.replace(
        'target = "shop.total:label"\n', 'target = "shop.total:label"\ndriver = "drive:main"\n'
    ).replace(
        'target = "shop.total:total"\n', 'target = "shop.total:total"\ndriver = "drive:main"\n'
    )
    write_files(root, {**SHOP, "drive.py": driver, "lockstep.toml": config})
    label = invoke_cli("record", "label", cwd=root)
    assert label.code == 1, label.output  # a refusal is a finding
    assert "label('x')" in label.stdout and "does not reproduce" in label.stdout
    total = invoke_cli("record", "total", cwd=root)
    assert total.code == 0, total.output
    assert "verified 1 new case(s) in a fresh interpreter" in total.stdout
    assert run_cli("replay", "total", cwd=root).code == 0
    assert run_cli("replay", "label", cwd=root).code == 1  # its only row was refused: 0 rows


def test_a_corpus_render_that_iterates_a_set_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    render = (
        "import json\n\n\ndef render(path):\n    data = json.loads(path.read_text())\n"
        "    if data.get('tags'):\n        return ' '.join(set(data['tags']))\n"
        "    return data\n"
    )
    tags = ", ".join(f'"t{i}"' for i in range(12))
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[corpus]]\nname = "docs"\nfixtures = "fixtures/*.json"\nrender = "harness:render"\n'
            ),
            "harness.py": render,
            "fixtures/plain.json": '{"a": 1}',
            "fixtures/tagged.json": f'{{"tags": [{tags}]}}',
        },
    )
    result = invoke_cli("record", "docs", cwd=root)
    assert result.code == 1, result.output
    assert "tagged.json: does not reproduce" in result.stdout
    assert "verified 1 of 2 new case(s)" in result.stdout
    assert run_cli("replay", "docs", cwd=root).code == 1  # tagged.json is new: not green
    lock = (root / "lockstep/docs.lock.json").read_text()
    assert "plain.json" in lock and "tagged.json" not in lock


def test_a_tape_whose_calls_follow_set_order_is_not_written(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    driver = (
        "from shop import rates\n\n\ndef drive(tape):\n"
        "    rate = tape.spy('rate', rates.rate)\n"
        "    return sum(rate(c) for c in {'EUR', 'USD', 'EUR '.strip()} | {'USD'})\n"
    )
    spread = (
        "from shop import total\n\n\ndef drive(tape):\n"
        "    emit = tape.spy('emit', lambda word: word)\n"
        "    for tag in total.TAGS:\n        emit(tag)\n    return len(total.TAGS)\n"
    )
    write_files(
        root,
        {
            **SHOP,
            "drive.py": driver,
            "spread.py": spread,
            "lockstep.toml": (
                '[[tape]]\nname = "rates"\ndriver = "drive:drive"\nmode = "multiset"\n\n'
                '[[tape]]\nname = "tags"\ndriver = "spread:drive"\n'
            ),
        },
    )
    ok = invoke_cli("record", "rates", cwd=root)
    assert ok.code == 0, ok.output
    assert "verified 1 new case(s) in a fresh interpreter" in ok.stdout
    refused = invoke_cli("record", "tags", cwd=root)
    assert refused.code == 1, refused.output
    assert "tags: does not reproduce" in refused.stdout
    assert not (root / "lockstep/tags.tape.json").exists()


def test_pins_runs_after_the_first_use_another_hash_seed(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    program = "print(' '.join({'a%d' % i for i in range(12)}))\n"
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[pins]]\nname = "tags"\ncommand = ["python", "tags.py"]\ncases = "cases.toml"\n'
            ),
            "tags.py": program,
            "cases.toml": '[[case]]\nid = "free"\n\n[[case]]\nid = "pinned"\nenv = { PYTHONHASHSEED = "7" }\n',
        },
    )
    result = run_cli("record", "tags", cwd=root)
    assert result.code == 1, result.output
    assert "case 'free' is not deterministic" in result.stderr
    assert "PYTHONHASHSEED" in result.stderr
    cases = root / "cases.toml"
    cases.write_text('[[case]]\nid = "pinned"\nenv = { PYTHONHASHSEED = "7" }\n')
    assert run_cli("record", "tags", cwd=root).code == 0
    assert run_cli("replay", "tags", cwd=root).code == 0


def test_probe_works_for_every_kind_and_names_a_flaky_case(tmp_path: Path) -> None:
    """``lockstep probe NAME`` of an in-process oracle: fresh interpreters, other hash seeds."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            **SHOP,
            "drive.py": "from shop import total\n\n\ndef main():\n    total.total([(2, 'EUR')])\n",
            "lockstep.toml": '[[ledger]]\nname = "total"\ntarget = "shop.total:total"\n'
            'driver = "drive:main"\n',
        },
    )
    assert invoke_cli("probe", "total", "--runs", "3", cwd=root).code == 2  # not recorded yet
    assert invoke_cli("record", "total", cwd=root).code == 0
    steady = run_cli("probe", "total", "--runs", "3", cwd=root)
    assert steady.code == 0, steady.output
    assert "1 signature" in steady.stdout
    # Now the body depends on set order: the probe finds it before any replay does.
    (root / "shop/total.py").write_text(
        (root / "shop/total.py")
        .read_text()
        .replace(
            "return round(sum(a * rates.rate(c) for a, c in lines), 2)",
            "return round(sum(a * rates.rate(c) for a, c in lines), 2)"
            " + sorted(TAGS).index(next(iter(TAGS)))",
        )
    )
    flaky = run_cli("probe", "total", "--runs", "6", cwd=root)
    assert flaky.code == 1, flaky.output
    assert "after rules [none]:" in flaky.stdout
    assert '"id": "' in flaky.stdout  # the differing line names the case that did not reproduce


# Each test below does one of the things that make a row owe its outcome to the test's
# context; the report must name the test and the cause, and the next replay be green.
CONTEXT_SHOP = {
    "clerk/__init__.py": "",
    "clerk/rates.py": "def rate(cur):\n    return {'EUR': 1.0, 'USD': 0.5}[cur]\n",
    "clerk/words.py": "EXTRA = set()\n",
    "clerk/i18n.py": (
        "import threading\n\n_CURRENT = threading.local()\n\n\n"
        "def activate(lang):\n    _CURRENT.lang = lang\n\n\n"
        "def deactivate():\n    del _CURRENT.lang\n"
    ),
    "clerk/desk.py": (
        "import datetime\nimport locale\n\nfrom clerk import i18n, rates, words\n\n"
        "TAGS = {'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'}\n\n\n"
        "def desk(kind, value):\n"
        "    if kind == 'price':\n        return value * rates.rate('USD')\n"
        "    if kind == 'word':\n        return value in words.EXTRA or value == 'base'\n"
        "    if kind == 'stamp':\n        return f'{value}@{datetime.datetime.now().year}'\n"
        "    if kind == 'charset':\n        return value + locale.nl_langinfo(locale.CODESET)\n"
        "    if kind == 'greet':\n"
        "        return {'fr': 'bonjour'}.get(getattr(i18n._CURRENT, 'lang', ''), 'hello') + value\n"
        "    return value + ':' + ','.join(TAGS)\n"
    ),
    "tests/freeze.py": (
        '"""A tiny freezegun: datetime.datetime and time.time replaced for a block."""\n'
        "import contextlib\nimport datetime\nimport time\n\n\n"
        "class FrozenDatetime(datetime.datetime):\n"
        "    @classmethod\n    def now(cls, tz=None):\n"
        "        return cls(2000, 1, 1, tzinfo=tz)\n\n\n"
        "@contextlib.contextmanager\ndef frozen():\n"
        "    real_dt, real_time = datetime.datetime, time.time\n"
        "    datetime.datetime, time.time = FrozenDatetime, lambda: 946684800.0\n"
        "    try:\n        yield\n    finally:\n"
        "        datetime.datetime, time.time = real_dt, real_time\n"
    ),
    "tests/test_desk.py": (
        "import locale\nfrom unittest import mock\n\nfrom clerk import words\n"
        "from clerk.desk import desk\nfrom freeze import frozen\n\n\n"
        "def test_plain():\n    assert desk('price', 4) == 2.0\n    assert desk('word', 'base')\n\n\n"
        "def test_patched_rate():\n"
        "    with mock.patch('clerk.rates.rate', return_value=3.0):\n"
        "        assert desk('price', 1) == 3.0\n\n\n"
        "def test_registry():\n    words.EXTRA.add('temp')\n    try:\n"
        "        assert desk('word', 'temp')\n    finally:\n        words.EXTRA.discard('temp')\n\n\n"
        "def test_frozen_clock():\n    with frozen():\n"
        "        assert desk('stamp', 'x') == 'x@2000'\n\n\n"
        "def test_locale():\n    before = locale.setlocale(locale.LC_ALL)\n"
        "    locale.setlocale(locale.LC_ALL, 'C')\n    try:\n"
        "        assert desk('charset', 'cs=')\n    finally:\n"
        "        locale.setlocale(locale.LC_ALL, before)\n\n\n"
        "def test_tags():\n    assert desk('tags', 't').startswith('t:')\n\n\n"
        "def test_translation():\n    from clerk import i18n\n\n    i18n.activate('fr')\n"
        "    try:\n        assert desk('greet', '!') == 'bonjour!'\n    finally:\n"
        "        i18n.deactivate()\n"
    ),
    # as pytest-mock does for its assertion messages: a patch of mock's own class, started
    # for the whole run, is no cause of anything a target does
    "tests/conftest.py": (
        "from unittest import mock\n\n"
        "mock.patch.object(\n"
        "    mock.NonCallableMock, 'assert_called', mock.NonCallableMock.assert_called\n"
        ").start()\n"
    ),
    "lockstep.toml": '[[ledger]]\nname = "desk"\ntarget = "clerk.desk:desk"\n',
}


def test_refused_rows_name_their_test_and_likely_cause(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(root, CONTEXT_SHOP)
    result = run_pytest(
        "-q", "--lockstep-record=desk", "tests", "-n", "2",
        cwd=root, plugins=("lockstep.pytest.plugin", "xdist.plugin"),
    )  # fmt: skip
    assert result.code == 0, result.output
    out = result.stdout
    expected = {
        "test_patched_rate": "mock.patch active on clerk.rates.rate",
        "test_registry": "module global clerk.words.EXTRA changed (1 items, 0 at the start)",
        "test_frozen_clock": "frozen clock (time.time, datetime.datetime replaced)",
        "test_locale": "locale switched (",
        "test_tags": "hash-seed dependence",
        "test_translation": "module global clerk.i18n._CURRENT changed (lang set)",
    }
    for test, cause in expected.items():
        line = next((x for x in out.splitlines() if f"from tests/test_desk.py::{test} " in x), "")
        assert line.startswith("  refused 1 row(s) from"), out
        assert f"(cause: {cause}" in line, line
    assert "test_plain" not in out
    assert "NonCallableMock" not in out
    assert "verified 2 of 8 new case(s)" in out
    replay = run_cli("replay", cwd=root)
    assert replay.code == 0, replay.output
    assert "green: 2 cases: 2 passed" in replay.stdout


REPORT = (
    "def summary(rows, key=None):\n"
    "    if isinstance(rows, list):\n        return 'list:' + ','.join(rows)\n"
    "    rows = list(rows)\n"
    "    if key is not None:\n        rows = sorted(rows, key=key)\n"
    "    return 'iter:' + ','.join(str(r) for r in rows)\n\n\n"
    "def by_len(word):\n    return len(word)\n"
)
ITER_DRIVER = (
    "from book.report import by_len, summary\n\n\ndef main():\n"
    "    summary(['b', 'a'])\n"
    "    summary(iter(['bb', 'a']))\n"
    "    summary(map(str.upper, ['x', 'y']))\n"
    "    summary((w for w in ['ccc', 'dd']), key=by_len)\n"
    "    summary(iter(range(3)), key=str)\n"
    "    summary(map(''.join, zip('ab', 'cd')), key=str.lower)\n"
    "    summary(['q'], key=lambda w: w)\n"
    "    summary(iter(['q', 'pp']), key=lambda w: -len(w))\n"
)


def test_iterator_and_callback_arguments_are_frozen_and_guard_their_branch(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "book/__init__.py": "",
            "book/report.py": REPORT,
            "drive.py": ITER_DRIVER,
            "lockstep.toml": (
                '[[ledger]]\nname = "summary"\ntarget = "book.report:summary"\n'
                'driver = "drive:main"\n'
            ),
        },
    )
    result = invoke_cli("record", "summary", cwd=root)
    assert result.code == 0, result.output
    out = result.stdout
    assert "verified 7 new case(s) in a fresh interpreter" in out, out
    # Only the first call given a lambda is skipped (looked at: does the target keep it?),
    # and said prominently with its call site; the second freezes the lambda's calls.
    assert "SKIPPED 1 of 8 call(s) (12%)" in out, out
    assert "a callable argument on the first call given one" in out
    assert "drive.py:" in out
    ledger = (root / "lockstep/summary.ledger.jsonl").read_text()
    assert '{"$iter":["bb","a"]}' in ledger and '{"$fn":"book.report:by_len"}' in ledger
    assert '{"$fn":"builtins:str.lower"}' in ledger
    assert '{"$calls":[{"args":["q"],"returned":-1},{"args":["pp"],"returned":-2}]}' in ledger
    green = run_cli("replay", "summary", cwd=root)
    assert green.code == 0, green.output
    # A change only the iterator calls reach is caught.
    report = root / "book/report.py"
    report.write_text(REPORT.replace("rows = sorted(rows, key=key)", "rows = sorted(rows)"))
    red = run_cli("replay", "summary", cwd=root)
    assert red.code == 1, red.output
    assert "summary((w for w" not in red.stdout  # the call is shown as frozen
    assert "summary(iter(['ccc', 'dd']), key=by_len)" in red.stdout, red.stdout


def test_record_io_rows_are_verified_before_the_process_writes_them(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "proj"
    job = (
        "from lockstep import record_io\n\nRATE = {'v': 1}\n\n\n"
        "@record_io\ndef price(n):\n    return n * RATE['v']\n\n\n"
        "if __name__ == '__main__':\n    price(2)\n    RATE['v'] = 5\n    price(3)\n"
    )
    write_files(
        root,
        {
            "app/__init__.py": "",
            "app/job.py": job,
            "lockstep.toml": '[[ledger]]\nname = "price"\ntarget = "app.job:price"\n',
            "script.py": job.replace("if __name__ == '__main__':\n", "if True:\n"),
        },
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("LOCKSTEP")}
    run = subprocess.run(
        [sys.executable, "-m", "app.job"], cwd=root, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert "price(3) [" in run.stderr
    assert "does not reproduce in a fresh interpreter (result: recorded returned 15" in run.stderr
    assert "1 did not reproduce in a fresh interpreter and were not written" in run.stderr
    ledger = (root / "lockstep/price.ledger.jsonl").read_text()
    assert '"args":[2]' in ledger and '"args":[3]' not in ledger
    replay = run_cli("replay", "price", cwd=root)
    assert replay.code == 0, replay.output
    # A script without a main guard would run again if imported: written, and said so.
    (root / "lockstep/price.ledger.jsonl").unlink()
    unguarded = subprocess.run(
        [sys.executable, "script.py"], cwd=root, capture_output=True, text=True, env=env
    )
    assert unguarded.returncode == 0, unguarded.stderr
    assert "rows written without verification: the script has no" in unguarded.stderr


CACHED_SHOP = {
    "fmt/__init__.py": "",
    "fmt/stamp.py": (
        "import datetime\nimport re\n\n_PATTERNS = {}\n\n\n"
        "def stamp(pattern, text):\n"
        "    if pattern not in _PATTERNS:\n        _PATTERNS[pattern] = re.compile(pattern)\n"
        "    found = _PATTERNS[pattern].search(text)\n"
        "    return f'{found and found.group(0)}@{datetime.datetime.now().year}'\n"
    ),
    "tests/test_stamp.py": (
        "import datetime\n\nfrom fmt.stamp import stamp\n\n\n"
        "class Frozen(datetime.datetime):\n    @classmethod\n    def now(cls, tz=None):\n"
        "        return cls(2000, 1, 1)\n\n\n"
        "def test_frozen():\n    real = datetime.datetime\n    datetime.datetime = Frozen\n"
        "    try:\n        assert stamp('[0-9]+', 'a12') == '12@2000'\n"
        "    finally:\n        datetime.datetime = real\n"
    ),
    "lockstep.toml": '[[ledger]]\nname = "stamp"\ntarget = "fmt.stamp:stamp"\n',
}


def test_a_cache_that_only_fills_up_is_not_named_as_the_cause(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(root, CACHED_SHOP)
    result = run_pytest("-q", "--lockstep-record=stamp", "tests", cwd=root)
    assert result.code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "refused 1 row(s) from" in x)
    assert "(cause: frozen clock (datetime.datetime replaced))" in line, line
    assert "_PATTERNS" not in result.stdout


PARSER = {
    "iso/__init__.py": "",
    "iso/build.py": "def duration(days, hours):\n    return days * 24 + hours\n",
    "iso/parse.py": (
        "from iso import build\n\n\n"
        "def parse(text):\n"
        "    if 'D' not in text:\n"
        "        raise ValueError('no days in ' + text)\n"
        "    days, hours = text.rstrip('H').split('D')\n"
        "    return build.duration(int(days), int(hours))\n"
    ),
    "tests/test_parse.py": (
        "from unittest import mock\n\nimport pytest\n\nfrom iso import parse\n\n\n"
        "def test_parse_hands_the_builder_its_parts():\n"
        "    with mock.patch('iso.build.duration', return_value='built') as built:\n"
        "        assert parse.parse('1D2H') == 'built'\n"
        "        assert parse.parse('3D0H') == 'built'\n"
        "    built.assert_called_with(3, 0)\n\n\n"
        "def test_parse_refuses_no_days():\n"
        "    with pytest.raises(ValueError):\n"
        "        parse.parse('2H')\n"
    ),
    "lockstep.toml": '[[ledger]]\nname = "parse"\ntarget = "iso.parse:parse"\n',
}


def test_a_ledger_left_with_only_raising_rows_says_so(tmp_path: Path) -> None:
    """aniso8601's parser tests patch the builder: every parse that returned was refused,
    and the ledgers kept only their error rows, which the recording's counts did not
    show; a change dropping a duration's days replayed green."""
    root = tmp_path / "proj"
    write_files(root, PARSER)
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert (
        "every row that returned was refused (2): the ledger keeps only calls that raised, "
        "so nothing guards what the target returns"
    ) in result.stdout, result.output
    assert "mock.patch" in result.stdout, result.output  # the refusals' cause
