"""The quick screen over ledger rows (``lockstep.secrets.screen``) never passes over a row
the full per-field scan would scrub or refuse: properties over generated rows (every
secret kind, environment secrets in every spelling, bytes, dict keys, nested tags,
escapes, text outside ASCII), and a recording spilled to disk that refuses and scrubs
the same rows as one kept in memory."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import run_cli, write_files
from lockstep.oracles.ledger.format import ROW_ENCODER, LedgerRow
from lockstep.secrets import SecretPolicy
from lockstep.secrets.detect import _open_gates, may_hold_secret, may_hold_secret_ascii
from lockstep.secrets.screen import Screen
from lockstep.secrets.scrub import NamedSecret, Scrubber, encoded_forms
from secret_vectors import vectors

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


VECTORS = vectors()
ENV_SECRET = "hunter2-" + "S3cr3t" + "-Xq9!"
AMBIENT_SECRET = "q7Lw-" + "pl41n" + "-v4lue"
FIELDS = ("args", "kwargs", "result", "mutated", "exc_stem", "exc_type")

SECRETISH = sorted(
    {value for value, _ in VECTORS.values()}
    | {line for _, line in VECTORS.values()}
    | {ENV_SECRET, AMBIENT_SECRET}
    | encoded_forms(ENV_SECRET)
    | encoded_forms(AMBIENT_SECRET)
)
KEYS = ["password", "api_key", "dsn", "token", "name", "n", "x", "$bytes", "$tuple"]


def _policy(*, enabled: bool = True) -> SecretPolicy:
    scrubber = Scrubber(
        (NamedSecret("DB_PASSWORD", "DB_PASSWORD"),),
        environ={"DB_PASSWORD": ENV_SECRET, "DEPLOY_TOKEN": AMBIENT_SECRET},
        ambient=(NamedSecret("DEPLOY_TOKEN", "DEPLOY_TOKEN"),),
    )
    return SecretPolicy(enabled=enabled, scrubber=scrubber, allowed=frozenset())


def _joined(parts: list[str]) -> str:
    return "".join(parts)


pieces = st.sampled_from(SECRETISH) | st.text(max_size=12) | st.sampled_from(KEYS)
texts = (
    st.text(max_size=40)
    | st.sampled_from(SECRETISH)
    | st.lists(pieces, min_size=1, max_size=4).map(_joined)
    # JSON documents, as a program renders them: escaped quotes, slashes and newlines
    | st.dictionaries(st.sampled_from(KEYS), pieces, max_size=3).map(json.dumps)
    | st.sampled_from(SECRETISH).map(lambda s: json.dumps({"u": s}).replace("/", "\\/"))
)


def _tagged_bytes(text: str, tag: str) -> dict[str, str]:
    return {tag: base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")}


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | texts
    | st.builds(_tagged_bytes, texts, st.sampled_from(["$bytes", "$bytearray"]))
    | st.binary(max_size=30).map(lambda b: {"$bytes": base64.b64encode(b).decode()})
    | st.sampled_from([{"$bytes": "not base64!"}, {"$bytes": "YQ"}, {"$bytes": "YWJj="}])
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(texts, inner, max_size=3)
        | inner.map(lambda v: {"$tuple": [v]})
        | st.builds(lambda v, w: {"$bytes": "YWJj", "k": v, "j": w}, inner, inner)
    ),
    max_leaves=8,
)
rows = st.builds(
    lambda args, kwargs, result, ok, stem: (
        LedgerRow(id="0" * 16, fn="m:f", args=args, kwargs=kwargs, ok=True, result=result)
        if ok
        else LedgerRow(
            id="0" * 16,
            fn="m:f",
            args=args,
            kwargs=kwargs,
            ok=False,
            exc_type="ValueError",
            exc_stem=stem,
        )
    ),
    st.lists(values, max_size=3),
    st.dictionaries(texts, values, max_size=3),
    values,
    st.booleans(),
    texts,
)


def _fields(row: LedgerRow) -> dict[str, Any]:
    every = {name: getattr(row, name) for name in FIELDS}
    return {k: v for k, v in every.items() if v is not msgspec.UNSET}


def _case(row: LedgerRow) -> list[Any]:
    return list(_fields(row).values())


def _full_scan_finds_or_scrubs(policy: SecretPolicy, row: LedgerRow) -> bool:
    fields = _fields(row)
    scrubbed = {k: policy.scrub_value(v, patterns=False) for k, v in fields.items()}
    return scrubbed != fields or bool(policy.findings(scrubbed))


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(batch=st.lists(rows, min_size=1, max_size=6), enabled=st.booleans())
def test_a_row_the_screen_passes_over_is_one_the_full_scan_keeps_as_it_is(
    batch: list[LedgerRow], enabled: bool
) -> None:
    policy = _policy(enabled=enabled)
    screen = Screen(policy, FIELDS)
    verdicts = screen.quiet([_case(row) for row in batch])
    for row, quiet in zip(batch, verdicts, strict=True):
        if quiet:
            assert not _full_scan_finds_or_scrubs(policy, row), row
    if screen.quiet_json([ROW_ENCODER.encode(row) for row in batch]):
        assert all(verdicts)
        assert not any(_full_scan_finds_or_scrubs(policy, row) for row in batch)


@settings(SETTINGS, max_examples=100)  # each example tries every secret in seven places
@given(row=rows)
def test_every_secret_kind_and_spelling_in_a_row_is_screened_in(row: LedgerRow) -> None:
    """Whatever else the row holds, a secret put in any field, key or bytes value is
    never passed over, nor is a row the full scan refuses."""
    policy = _policy()
    screen = Screen(policy, FIELDS)
    for secret in SECRETISH:
        for hidden in (
            [secret],
            json.dumps({"u": secret}).replace("/", "\\/"),  # a JSON document, slashes escaped
            f'\x01"{secret}"\n\\',  # quotes, a control character, a backslash around it
            {"k": secret},
            {secret: 1},
            _tagged_bytes(secret, "$bytes"),
            {"$tuple": [{"$bytearray": _tagged_bytes(secret, "$bytearray")["$bytearray"]}]},
        ):
            holding = msgspec.structs.replace(row, args=[*row.args, hidden])
            if _full_scan_finds_or_scrubs(policy, holding):
                assert screen.quiet([_case(holding)]) == [False]
                assert not screen.quiet_json([ROW_ENCODER.encode(holding)])


_GATE_WORDS = ("key", "api_key", "secret", "Password", "aws", "token", "xoxb-", "slack", "BEGIN")


@given(
    text=st.one_of(
        st.text(),
        st.builds(
            lambda before, word, after: before + word + after,
            st.text(),
            st.sampled_from(_GATE_WORDS),
            st.text(alphabet="abcXYZ0189_-/+.:=@ \n'\"", max_size=60),
        ),
    )
)
def test_the_byte_screen_is_never_narrower_than_the_gates(text: str) -> None:
    """Where some line opens a gate a finding needs, the byte screen opens too."""
    data = text.encode("utf-8", "surrogatepass")
    if data.isascii() and any(_open_gates(line) for line in text.split("\n")):
        assert may_hold_secret_ascii(data)


def test_a_word_such_as_key_opens_no_gate_alone() -> None:
    """An attribute such as ``precedence_key`` in an object's state is no keyword of the
    keyword plugin, and no value the token plugins need follows it: the row is quiet."""
    screen = Screen(_policy(), FIELDS)
    state = {"_cmp_precedence_key": {"$tuple": [1, 3, 7]}, "build": {"$tuple": ["b1"]}}
    row = [[{"$obj": ["semantic_version.base:Version", {"state": state}]}], {}, "1.3.7+b1"]
    assert screen.quiet([row]) == [True]
    assert may_hold_secret('"_cmp_precedence_key": 1')  # the wider gate opens
    for loud in ('"api_key": 1', "key=" + "a1" * 12, "password", "-----BEGIN"):
        assert screen.quiet([[[loud], {}, None]]) == [False], loud


def test_the_field_names_open_no_gate_and_plain_rows_pass() -> None:
    """What makes the bench's rows cheap: nothing in them opens a gate."""
    assert not any(may_hold_secret(name) for name in (*FIELDS, "fn", "id", "ok"))
    screen = Screen(_policy(), FIELDS)
    plain = [[[i, f"item-{i}"], {}, f"item-{i}: {i * 3 % 97} units"] for i in range(300)]
    assert all(screen.quiet(plain))
    as_bytes = [
        [[i, _tagged_bytes(f"item-{i}", "$bytes")], {}, _tagged_bytes("units", "$bytes")]
        for i in range(300)
    ]
    assert all(screen.quiet(as_bytes))
    github = VECTORS["github"][0]
    mixed = [*plain[:100], [[1, _tagged_bytes(github, "$bytes")], {}, "x"], *plain[100:]]
    assert screen.quiet(mixed) == [i != 100 for i in range(len(mixed))]


def test_a_pattern_secret_turns_the_screen_off() -> None:
    scrubber = Scrubber((NamedSecret("SESSION", pattern=r"sess-[0-9]+"),), environ={})
    policy = SecretPolicy(enabled=True, scrubber=scrubber, allowed=frozenset())
    assert Screen(policy, FIELDS).quiet([[[1], {}, "sess-1"]]) == [False]


# ------------------------------------------------------------- the whole record, spilled

TARGET = """
def handle(value, **kw):
    out = dict(kw.get("give", {}))
    out["value"] = value
    return out
"""


def _drive(github: str, aws: str) -> str:
    return (
        "import base64, os\n"
        "from svc import handle\n"
        "def main():\n"
        "    for i in range(400):\n"
        "        handle(f'item-{i}', give={'n': i, 'blob': f'b{i}'.encode()})\n"
        "        if i == 150:\n"
        f"            handle({github.encode()!r})\n"
        f"            handle('ba', give={{'blob': bytearray({aws.encode()!r})}})\n"
        f"            handle('key', give={{{github!r}: 1}})\n"
        "            handle(os.environ['DB_PASSWORD'])\n"
        "            handle(base64.b64encode(os.environ['DEPLOY_TOKEN'].encode()).decode())\n"
    )


def test_a_spilled_recording_refuses_and_scrubs_the_same_rows(tmp_path: Path) -> None:
    github, aws = VECTORS["github"][0], VECTORS["aws"][0]
    env = {"DB_PASSWORD": ENV_SECRET, "DEPLOY_TOKEN": AMBIENT_SECRET}
    outputs = []
    for spill_at in ("7", None):
        root = tmp_path / f"spill-{spill_at}"
        write_files(
            root,
            {
                "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
                'driver = "drive:main"\n',
                "svc.py": TARGET,
                "drive.py": _drive(github, aws),
            },
        )
        run_env = {**env, "TMPDIR": str(tmp_path)}
        if spill_at is not None:
            run_env["LOCKSTEP_SPILL_AT"] = spill_at
        result = run_cli("record", cwd=root, env=run_env, timeout=300)
        assert result.code == 1, result.stdout + result.stderr
        assert "4 case(s) refused because they hold a secret" in result.stdout
        assert "args[0]: GitHub Token" in result.stdout
        assert "result.blob: AWS Access Key" in result.stdout
        written = (root / "lockstep/handle.ledger.jsonl").read_text()
        assert written.count("\n") == 1 + 401
        assert '"<DB_PASSWORD>"' in written
        for secret in (github, aws, ENV_SECRET, AMBIENT_SECRET):
            for form in {secret, *encoded_forms(secret)}:
                assert form not in written and form not in result.stdout
        outputs.append((result.stdout, written))
    assert outputs[0] == outputs[1]


@given(text=st.text(alphabet="aApPiI_kKeEyYsSwWoOrRdDcCtTnN-1 ", max_size=40))
def test_the_screen_s_keyword_search_is_the_keyword_gate_s(text: str) -> None:
    """Searched in lowered bytes, the keywords match where the case-insensitive gate does."""
    from lockstep.secrets.detect import _KEYWORDS, _SCREEN_KEYWORDS

    found = _SCREEN_KEYWORDS.search(text.encode("ascii").lower()) is not None
    assert found == (_KEYWORDS.search(text) is not None)
