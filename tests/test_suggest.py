"""Rule suggestions on given variants: recognised kinds by name, otherwise one minimal regex."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from lockstep.probe.suggest import suggest
from lockstep.process import RunResult


def runs(*stdouts: str) -> list[RunResult]:
    return [RunResult(0, text.encode("utf-8"), b"") for text in stdouts]


def by_name(variants: list[RunResult]) -> dict[str, str]:
    return {s.name: s.pattern for s in suggest(variants)}


def test_a_value_after_one_anchor_gets_one_regex_covering_every_variant() -> None:
    found = by_name(
        runs("batch 711931\ndone\n", "batch 42\ndone\n", "batch 9051\ndone\n", "batch 3\ndone\n")
    )
    assert found == {"batch": "batch [0-9]+"}


def test_the_character_class_is_the_narrowest_that_fits() -> None:
    assert by_name(runs("Run ID: K8S7X2Q9AB\n", "Run ID: 0ZZQ41MM7C\n")) == {
        "id": "ID: [0-9A-Z]{10}"
    }
    assert by_name(runs("job=ab12cd\n", "job=zz9q0x\n")) == {"job": "job=[0-9a-z]{6}"}
    assert by_name(runs("run-28b0c328\n", "run-6a2e30bc\n")) == {"run": "run-[0-9a-f]{8}"}


def test_known_kinds_are_recognised_by_name() -> None:
    a = (
        "id 30e52521-d7c6-4068-ad5b-81d21730bc49 at 2026-11-29T21:25:48.332069\n"
        "worker pid 2986 on localhost:35796\nat /tmp/tmpab12/x.csv obj 0x7f3a2b4c5d6e\n"
        "generated Sun Nov 29 21:25:50 2026\ntook 12.5 ms\n"
    )
    b = (
        "id 9d166980-81f8-4eed-b087-4cc353469a44 at 2026-11-29T21:25:49.419680\n"
        "worker pid 2995 on localhost:41022\nat /tmp/tmpzz98/x.csv obj 0x7f3a2b4c9999\n"
        "generated Sun Nov 29 21:25:51 2026\ntook 3.75 ms\n"
    )
    found = suggest(runs(a, b))
    kinds = {s.name: s.builtin for s in found}
    assert kinds == {
        "uuid": True,
        "iso-timestamp": True,
        "tmp-path": True,
        "hex-address": True,
        "pid": False,
        "port": False,
        "clock-time": False,
        "duration": False,
    }
    # Every suggested user rule compiles and rewrites both variants alike.
    for s in found:
        if not s.builtin:
            assert re.sub(s.pattern, s.replace, a, flags=re.I if s.ignore_case else 0) != a


def test_names_already_taken_are_not_reused() -> None:
    found = suggest(runs("run-1a\n", "run-2b\n"), taken=["run"])
    assert [s.name for s in found] == ["run-2"]
    assert (
        suggest(
            runs(
                "id 30e52521-d7c6-4068-ad5b-81d21730bc49\n",
                "id 9d166980-81f8-4eed-b087-4cc353469a44\n",
            ),
            taken=["uuid"],
        )
        == []
    )


def test_nothing_to_suggest_for_a_single_variant_or_unanchored_noise() -> None:
    assert suggest(runs("same\n")) == []
    assert suggest(runs("123\n", "456\n")) == []


_VARYING = (
    "job 30e52521-d7c6-4068-ad5b-81d21730bc49 at 2026-11-29T21:25:48\nrun-28b0c328 batch 17\n",
    "job 30e52521-d7c6-4068-ad5b-81d21730bc49 at 2026-11-29T21:25:49\nrun-28b0c328 batch 17\n",
    "job 9d514a07-da68-4fc7-a999-0e0f2f0d1650 at 2026-11-29T21:25:49\nrun-6a2e30bc batch 17\n",
    "job 9d514a07-da68-4fc7-a999-0e0f2f0d1650 at 2026-11-29T21:25:49\nrun-6a2e30bc batch 42\n",
)


@given(st.permutations(range(1, len(_VARYING))))
def test_suggestions_come_in_one_order_whichever_variant_shows_a_value_first(
    order: list[int],
) -> None:
    # Which pair of variants first shows a varying value depends on the runs' timing; the
    # list of rules (and so the TOML printed) must not.
    variants = runs(_VARYING[0], *(_VARYING[i] for i in order))
    found = [(s.name, s.pattern) for s in suggest(variants)]
    assert found == [(s.name, s.pattern) for s in suggest(runs(*_VARYING))]
    assert [name for name, _ in found] == ["uuid", "iso-timestamp", "batch", "run"]
