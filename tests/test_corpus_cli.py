"""The corpus oracle through the real command line, on a legacy-style transformer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import Result, invoke_cli, run_cli, run_pytest, snapshot_tree, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CONFIG = """
[[corpus]]
name = "rows"
fixtures = "fixtures/rows/*.json"
render = "legacy.harness:render"
"""

TRANSFORM = """
from decimal import Decimal, ROUND_HALF_UP


def transform_row(row):
    if row.get("boom"):
        raise ValueError("cannot   price row\\n" + row["boom"])
    total = Decimal(row["price"]) * row.get("qty", 1)
    return {
        "name": row.get("name", "UNKNOWN").title(),
        "total": str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)),
        "tags": tuple(row.get("tags", [])),
    }
"""

HARNESS = """
import json
from legacy.transform import transform_row


def render(path):
    return transform_row(json.loads(path.read_text(encoding="utf-8")))
"""


def make_project(root: Path, *, config: str = CONFIG) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": config,
            "legacy/__init__.py": "",
            "legacy/transform.py": TRANSFORM,
            "legacy/harness.py": HARNESS,
            "fixtures/rows/a_basic.json": '{"name": "ada", "price": "1.005", "qty": 2}',
            "fixtures/rows/b_unicode.json": '{"name": "zoë", "price": "0.125", "tags": ["x"]}',
            "fixtures/rows/c_missing_name.json": '{"price": "3"}',
            "fixtures/rows/d_raises.json": '{"price": "1", "boom": "row 4"}',
        },
    )
    return root


def lock(root: Path) -> dict[str, object]:
    return json.loads((root / "lockstep" / "rows.lock.json").read_text())  # type: ignore[no-any-return]


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, recorded once per test process (record verifies in a fresh interpreter);
    each test works on a copy of it."""
    root = make_project(tmp_path_factory.mktemp("recorded") / "proj")
    result = invoke_cli("record", "rows", cwd=root)
    assert result.code == 0, result.output
    return root


@pytest.fixture
def project(recorded_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(recorded_template, root)
    return root


def test_record_writes_a_sorted_versioned_lock_and_blobs(project: Path) -> None:
    data = lock(project)
    assert data["version"] == 1
    entries = data["entries"]
    assert isinstance(entries, list)
    assert [e["id"] for e in entries] == [
        "a_basic.json",
        "b_unicode.json",
        "c_missing_name.json",
        "d_raises.json",
    ]
    for entry in entries:
        assert len(entry["sha256"]) == 64 and entry["nbytes"] > 0
        blob = project / "lockstep" / "blobs" / entry["sha256"][:2] / entry["sha256"][2:]
        assert blob.stat().st_size == entry["nbytes"]
    assert entries[3]["raised"] == {"exc_type": "ValueError", "exc_stem": "cannot price row row 4"}
    assert json.loads(
        (
            project / "lockstep" / "blobs" / entries[1]["sha256"][:2] / entries[1]["sha256"][2:]
        ).read_text()
    ) == {"name": "Zoë", "tags": {"$tuple": ["x"]}, "total": "0.13"}


def test_replay_is_green_when_nothing_moved(project: Path) -> None:
    result = invoke_cli("replay", cwd=project)
    assert result.code == 0, result.output
    assert "green: 4 cases: 4 passed" in result.stdout


def test_a_changed_byte_is_drift_with_a_readable_json_diff(project: Path) -> None:
    edit(project, "legacy/transform.py", "rounding=ROUND_HALF_UP", "")
    result = invoke_cli("replay", "rows", cwd=project)
    assert result.code == 1
    assert "DRIFT rows::b_unicode.json" in result.stdout
    assert '-  "total": "0.13"' in result.stdout
    assert '+  "total": "0.12"' in result.stdout
    assert "a_basic.json" not in result.stdout.split("DRIFT")[1]  # only the moved fixture
    assert "1 drifted" in result.stdout


def test_a_tuple_becoming_a_list_is_drift(project: Path) -> None:
    edit(project, "legacy/transform.py", 'tuple(row.get("tags", []))', 'list(row.get("tags", []))')
    result = invoke_cli("replay", cwd=project)
    assert result.code == 1
    assert '"$tuple"' in result.stdout


def test_diff_prints_one_fixture(project: Path) -> None:
    edit(project, "legacy/transform.py", ".title()", ".upper()")
    result = invoke_cli("diff", "rows", "b_unicode.json", cwd=project)
    assert result.code == 1
    assert '+  "name": "ZOË"' in result.stdout
    assert "a_basic" not in result.stdout
    assert invoke_cli("diff", "rows", "nope.json", cwd=project).code == 2


def test_a_render_that_raises_is_an_outcome_and_never_stops_the_others(project: Path) -> None:
    edit(project, "legacy/transform.py", "raise ValueError", "raise KeyError")
    edit(project, "legacy/transform.py", ".title()", ".lower()")
    result = invoke_cli("replay", cwd=project)
    assert result.code == 1
    assert "DRIFT rows::d_raises.json" in result.stdout
    assert "exception: expected raised ValueError: cannot price row row 4" in result.stdout
    assert "got raised KeyError" in result.stdout
    assert "DRIFT rows::a_basic.json" in result.stdout


def test_new_and_vanished_fixtures_are_their_own_kinds_of_drift(project: Path) -> None:
    (project / "fixtures/rows/a_basic.json").unlink()
    write_files(project, {"fixtures/rows/e_new.json": '{"price": "2"}'})
    result = invoke_cli("replay", cwd=project)
    assert result.code == 1
    assert "MISSING rows::a_basic.json" in result.stdout
    assert "NEW rows::e_new.json" in result.stdout
    assert "1 new, 1 missing" in result.stdout


def test_plain_record_over_an_oracle_refuses_and_names_the_modes(project: Path) -> None:
    before = snapshot_tree(project)
    result = invoke_cli("record", "rows", cwd=project)
    assert result.code == 2
    assert (
        "--new-only" in result.stderr and "--force" in result.stderr and "--trim" in result.stderr
    )
    assert snapshot_tree(project) == before


def test_new_only_adds_new_fixtures_and_keeps_existing_entries(project: Path) -> None:
    old = lock(project)
    edit(project, "legacy/transform.py", ".title()", ".upper()")  # would change existing entries
    write_files(project, {"fixtures/rows/e_new.json": '{"price": "2"}'})
    result = invoke_cli("record", "rows", "--new-only", cwd=project)
    assert result.code == 0, result.output
    assert "added 1: e_new.json" in result.stdout
    assert "unchanged 4" in result.stdout
    new = lock(project)
    assert new["entries"][:4] == old["entries"]  # type: ignore[index]


def test_force_rerecords_and_says_what_it_replaced(project: Path) -> None:
    edit(project, "legacy/transform.py", ".title()", ".upper()")
    result = invoke_cli("record", "rows", "--force", cwd=project)
    assert result.code == 0
    assert "replaced 3: a_basic.json, b_unicode.json, c_missing_name.json" in result.stdout
    assert invoke_cli("replay", cwd=project).code == 0


def test_trim_drops_only_vanished_entries(project: Path) -> None:
    (project / "fixtures/rows/c_missing_name.json").unlink()
    result = invoke_cli("record", "rows", "--trim", cwd=project)
    assert result.code == 0
    assert "trimmed 1: c_missing_name.json" in result.stdout
    assert [e["id"] for e in lock(project)["entries"]] == [  # type: ignore[union-attr]
        "a_basic.json",
        "b_unicode.json",
        "d_raises.json",
    ]


def _blobs(root: Path) -> set[str]:
    return {p.parent.name + p.name for p in (root / "lockstep/blobs").glob("*/*") if p.is_file()}


def test_the_blobs_of_trimmed_and_re_recorded_fixtures_are_removed(project: Path) -> None:
    """A blob stays while some lock refers to it (every corpus shares the folder)."""
    before = {e["id"]: e["sha256"] for e in lock(project)["entries"]}  # type: ignore[union-attr]
    assert _blobs(project) == set(before.values())
    (project / "fixtures/rows/c_missing_name.json").unlink()
    assert invoke_cli("record", "rows", "--trim", cwd=project).code == 0
    del before["c_missing_name.json"]
    assert _blobs(project) == set(before.values())
    edit(project, "fixtures/rows/a_basic.json", '"qty": 2', '"qty": 3')
    assert invoke_cli("record", "rows", "--force", cwd=project).code == 0
    after = {e["id"]: e["sha256"] for e in lock(project)["entries"]}  # type: ignore[union-attr]
    assert after["a_basic.json"] != before["a_basic.json"]
    assert _blobs(project) == set(after.values())


def test_status_lists_oracles_and_their_state(project: Path) -> None:
    result = invoke_cli("status", cwd=project)
    assert result.code == 0
    assert "rows" in result.stdout and "corpus" in result.stdout and " 4 " in result.stdout
    (project / "lockstep/rows.lock.json").write_text("{not json")
    result = invoke_cli("status", cwd=project)
    assert result.code == 2  # a corrupt oracle file, as replay says it
    assert "unreadable" in result.stdout
    assert result.stderr.startswith("lockstep: error: ") and result.stderr.count("\n") == 1
    assert invoke_cli("replay", cwd=project).code == 2


def test_shards_partition_the_cases(project: Path) -> None:
    counts = []
    for k in (1, 2, 3):
        result = invoke_cli("replay", "--shard", f"{k}/3", cwd=project)
        assert result.code == 0
        counts.append(int(result.stdout.split("green: ")[1].split(" case")[0]))
    assert sum(counts) == 4
    assert invoke_cli("replay", "--shard", "4/3", cwd=project).code == 2


def test_parallel_replay_matches_serial(tmp_path: Path) -> None:
    root = make_project(tmp_path / "many")
    for i in range(600):
        write_files(root, {f"fixtures/rows/n{i:04}.json": json.dumps({"price": str(i), "qty": 3})})
    assert invoke_cli("record", "rows", cwd=root).code == 0
    edit(
        root, "legacy/transform.py", '* row.get("qty", 1)', '* row.get("qty", 1) + (total_bug := 0)'
    )
    assert run_cli("replay", "--jobs", "2", cwd=root).code == 0  # real worker processes
    edit(
        root,
        "legacy/transform.py",
        "+ (total_bug := 0)",
        "+ (1 if row.get('price') == '599' else 0)",
    )
    serial = invoke_cli("replay", "--jobs", "1", cwd=root)
    parallel = run_cli("replay", "--jobs", "2", cwd=root)
    assert serial.code == parallel.code == 1
    assert "DRIFT rows::n0599.json" in parallel.stdout
    assert serial.stdout == parallel.stdout


def test_rules_normalize_before_hashing_and_are_recorded(tmp_path: Path) -> None:
    root = tmp_path / "ids"
    write_files(
        root,
        {
            "lockstep.toml": """
            [[corpus]]
            name = "ids"
            fixtures = "f/*.txt"
            render = "gen:render"
            rules = ["uuid", "run-id"]

            [[rule]]
            name = "run-id"
            pattern = 'run-[0-9]+'
            replace = "<RUN>"
            """,
            "gen.py": """
            import uuid, random
            def render(path):
                return f"{path.stem} {uuid.uuid4()} run-{random.randint(1, 10**9)}\\n"
            """,
            "f/one.txt": "",
        },
    )
    assert invoke_cli("record", cwd=root).code == 0
    data = json.loads((root / "lockstep/ids.lock.json").read_text())
    assert [r["name"] for r in data["rules"]] == ["uuid", "run-id"]
    result = invoke_cli("replay", cwd=root)
    assert result.code == 0
    assert "rules fired in ids: uuid×1, run-id×1" in result.stdout


def test_text_and_binary_outputs_diff_readably(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write_files(
        root,
        {
            "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "f/*"\nrender = "r:render"\n',
            "r.py": """
            MODE = "v1"
            def render(path):
                if path.suffix == ".bin":
                    return bytes([0, 1, 2, 255]) + MODE.encode() + b"\\xff"
                return "line one\\nline two " + MODE + "\\nline three\\n"
            """,
            "f/a.txt": "",
            "f/b.bin": "",
        },
    )
    assert invoke_cli("record", cwd=root).code == 0
    edit(root, "r.py", 'MODE = "v1"', 'MODE = "v2"')
    result = invoke_cli("replay", cwd=root)
    assert result.code == 1
    assert "-line two v1" in result.stdout and "+line two v2" in result.stdout
    assert "binary output differs at byte 5" in result.stdout


# ------------------------------------------------------------------ bad input


def assert_refused(result: Result, *fragments: str) -> None:
    assert result.code == 2, result.output
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1, result.stderr
    for fragment in fragments:
        assert fragment in line, line


@pytest.mark.parametrize(
    ("config_edit", "fragments"),
    [
        (
            ("fixtures/rows/*.json", "nowhere/*.json"),
            ("corpus[0].fixtures", "folder 'nowhere' does not exist"),
        ),
        (
            ("fixtures/rows/*.json", "fixtures/rows/*.yaml"),
            ("corpus[0].fixtures", "matches no files"),
        ),
        (
            ("legacy.harness:render", "legacy.nothere:render"),
            ("corpus[0].render", "cannot import module 'legacy.nothere'"),
        ),
        (
            ("legacy.harness:render", "legacy.harness:renderer"),
            ("corpus[0].render", "has no attribute 'renderer'"),
        ),
        (("legacy.harness:render", "legacy.harness:json"), ("corpus[0].render", "not a callable")),
        (("legacy.harness:render", "legacy.harness"), ("corpus[0].render", "pkg.module:function")),
        (
            ("fixtures/rows/*.json", "../outside/*.json"),
            ("corpus[0].fixtures", "escapes the project root"),
        ),
    ],
)
def test_bad_configuration_is_refused_and_nothing_is_written(
    tmp_path: Path, config_edit: tuple[str, str], fragments: tuple[str, ...]
) -> None:
    root = make_project(tmp_path / "proj")
    write_files(tmp_path, {"outside/x.json": "{}"})
    edit(root, "lockstep.toml", *config_edit)
    before = snapshot_tree(root)
    assert_refused(invoke_cli("record", "rows", cwd=root), *fragments)
    assert snapshot_tree(root) == before


def test_a_render_returning_an_unfreezable_value_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    edit(
        root,
        "legacy/transform.py",
        '"tags": tuple(',
        '"conn": open(__import__("os").devnull, "w"), "tags": tuple(',
    )
    before = snapshot_tree(root)
    assert_refused(
        invoke_cli("record", "rows", cwd=root),
        "cannot be frozen",
        "render('a_basic.json')[\"conn\"]",
    )
    assert snapshot_tree(root) == before


def test_a_refusal_on_a_later_fixture_leaves_no_blob_or_folder_behind(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    edit(
        root,
        "legacy/transform.py",
        '"tags": tuple(',
        '"conn": open(__import__("os").devnull, "w") if row.get("name") == "zoë" else 1, "tags": tuple(',
    )
    before = snapshot_tree(root)
    assert_refused(invoke_cli("record", "rows", cwd=root), "render('b_unicode.json')[\"conn\"]")
    assert snapshot_tree(root) == before
    assert not (root / "lockstep").exists()


def test_a_refused_force_keeps_the_old_lock_and_blobs(project: Path) -> None:
    write_files(project, {"fixtures/rows/e_new.json": '{"name": "zoë", "price": "9"}'})
    edit(project, "legacy/transform.py", ".title()", ".upper()")
    edit(
        project,
        "legacy/transform.py",
        '"tags": tuple(',
        '"conn": open(__import__("os").devnull, "w") if row.get("price") == "9" else 1, "tags": tuple(',
    )
    before = snapshot_tree(project)
    assert_refused(invoke_cli("record", "rows", "--force", cwd=project), "render('e_new.json')")
    assert snapshot_tree(project) == before


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("{not json", ("lockstep/rows.lock.json", "not valid JSON")),
        ('{"version": 99, "entries": []}', ("lockstep/rows.lock.json", "unknown lock version 99")),
        ("[1, 2]", ("lockstep/rows.lock.json",)),
    ],
)
def test_a_corrupt_lock_is_refused(project: Path, content: str, fragments: tuple[str, ...]) -> None:
    (project / "lockstep/rows.lock.json").write_text(content)
    before = snapshot_tree(project)
    for command in (("replay",), ("record", "rows", "--new-only")):
        assert_refused(invoke_cli(*command, cwd=project), *fragments)
    assert snapshot_tree(project) == before


def test_a_lock_with_duplicate_ids_is_refused(project: Path) -> None:
    data = lock(project)
    entries = data["entries"]
    assert isinstance(entries, list)
    data["entries"] = [*entries, entries[0]]
    (project / "lockstep/rows.lock.json").write_text(json.dumps(data))
    assert_refused(invoke_cli("replay", cwd=project), "duplicate fixture id 'a_basic.json'")


def test_a_lock_with_an_unknown_field_is_refused(project: Path) -> None:
    data = lock(project)
    data["colour"] = "red"
    (project / "lockstep/rows.lock.json").write_text(json.dumps(data))
    assert_refused(invoke_cli("replay", cwd=project), "unknown field `colour`")


def test_replay_before_record_says_what_to_do(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    result = invoke_cli("replay", cwd=root)
    assert result.code == 1, result.output  # not green, and the same for every kind
    assert "ERROR rows::(not recorded)" in result.stdout
    assert "run 'lockstep record rows' on the trusted commit" in result.stdout


def test_unknown_oracle_name(project: Path) -> None:
    assert_refused(invoke_cli("replay", "nope", cwd=project), "no oracle named 'nope'", "rows")


# ------------------------------------------------------------------ pytest

# The first and the last test below load every installed plugin (lockstep's by its entry
# point); the one between loads only the plugins it uses.
PLUGIN_ONLY = ("lockstep.pytest.plugin",)
PLUGIN_AND_XDIST = ("lockstep.pytest.plugin", "xdist.plugin")


def test_pytest_collects_each_locked_fixture_and_fails_with_the_same_diff(project: Path) -> None:
    result = run_pytest("--lockstep", "-v", cwd=project)
    assert result.code == 0, result.output
    assert "lockstep/rows.lock.json::a_basic.json PASSED" in result.stdout
    assert "4 passed" in result.stdout
    edit(project, "legacy/transform.py", ".title()", ".upper()")
    result = run_pytest("--lockstep", cwd=project)
    assert result.code == 1
    assert "DRIFT rows::a_basic.json" in result.stdout
    assert '+  "name": "ADA"' in result.stdout
    assert "3 failed, 1 passed" in result.stdout


def test_pytest_selects_one_case_by_node_id_and_runs_under_xdist(project: Path) -> None:
    result = run_pytest(
        "--lockstep",
        "lockstep/rows.lock.json::b_unicode.json",
        "-q",
        cwd=project,
        plugins=PLUGIN_ONLY,
    )
    assert result.code == 0, result.output
    assert "1 passed" in result.stdout
    result = run_pytest("--lockstep", "-n", "2", "-q", cwd=project, plugins=PLUGIN_AND_XDIST)
    assert result.code == 0, result.output
    assert "4 passed" in result.stdout


def test_pytest_without_the_switch_collects_no_oracle_items(project: Path) -> None:
    write_files(project, {"tests/test_x.py": "def test_x():\n    assert 1 + 1 == 2\n"})
    result = run_pytest("-q", cwd=project)
    assert result.code == 0
    assert "1 passed" in result.stdout


def test_record_takes_one_mode(project: Path) -> None:
    before = snapshot_tree(project)
    result = invoke_cli("record", "rows", "--force", "--trim", cwd=project)
    assert_refused(result, "record takes one mode, not --force and --trim")
    assert snapshot_tree(project) == before


def test_a_render_that_exits_the_process_is_red_not_a_silent_green(project: Path) -> None:
    """``sys.exit(0)`` in today's code ended ``lockstep replay`` with status 0 and no
    output: a green gate on a change that breaks every call."""
    edit(
        project,
        "legacy/transform.py",
        '    if row.get("boom"):',
        '    raise SystemExit(0)\n    if row.get("boom"):',
    )
    result = invoke_cli("replay", "rows", cwd=project)
    assert result.code == 1, result.output
    assert "raised SystemExit" in result.stdout, result.stdout
