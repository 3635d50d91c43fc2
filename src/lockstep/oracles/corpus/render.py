"""Calling the user's render function and turning what it returns into normalized bytes.

A render that raises is behaviour like any other: the exception is frozen as
its type and message stem (and replayed as such), and one failing fixture never
stops the others.  A render that returns a value the codec cannot freeze is a
usage error (exit 2), because no honest oracle can be written for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.config import Project
from lockstep.errors import CanonError, UsageError
from lockstep.oracles.corpus.spec import CorpusSpec
from lockstep.rules import RuleRecord, RuleSet, ambient_rule, rules_from_records
from lockstep.targets import resolve_callable


class Rendered(msgspec.Struct, frozen=True):
    """The normalized bytes one fixture rendered to (or the exception it raised)."""

    data: bytes
    raised: canon.FrozenException | None = None
    fired: tuple[tuple[str, int], ...] = ()
    """Spans each rule replaced while normalizing this output."""


def _to_bytes(value: Any, *, loose: bool, fixture_id: str) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return canon.dumps(value, loose=loose, path=f"render({fixture_id!r})")
    except CanonError as e:
        raise UsageError(f"render returned a value that cannot be frozen: {e}") from None


class Renderer:
    """Calls the user's render function and turns what it returns into normalized bytes."""

    def __init__(
        self, func: Callable[[Path], Any], *, loose: bool, rules: RuleSet, stem_length: int
    ) -> None:
        self.func = func
        self.loose = loose
        self.rules = rules
        self.stem_length = stem_length

    def __call__(self, fixture_id: str, path: Path) -> Rendered:
        try:
            value = self.func(path)
        except (Exception, SystemExit) as exc:  # sys.exit(0) must not end a replay green
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
            text = f"raised {frozen.exc_type}: {frozen.exc_stem}\n"
            return Rendered(text.encode("utf-8"), frozen)
        data = _to_bytes(value, loose=self.loose, fixture_id=fixture_id)
        if not self.rules.active:
            return Rendered(data)
        local = self.rules.fresh()
        return Rendered(local.apply_bytes(data), fired=local.counts())


def renderer_for(project: Project, spec: CorpusSpec, rules: RuleSet, loose: bool) -> Renderer:
    """The configured render callable, imported once, behind a :class:`Renderer`."""
    func = resolve_callable(spec.render, project.root, where=project.where(spec, "render"))
    return Renderer(func, loose=loose, rules=rules, stem_length=project.config.lockstep.stem_length)


class _Worker:
    """Worker-side state for parallel replay: the renderer is built once per process."""

    renderer: Renderer | None = None


_WORKER: Final = _Worker()


def worker_init(
    root: str,
    render: str,
    loose: bool,
    rules: list[RuleRecord],
    stem_length: int,
    secret_env: tuple[list[str], list[str]] = ([], []),
) -> None:
    """Build this worker process's renderer once (parallel replay); ``secret_env``: the
    project's ``secret_env`` patterns and ``[[secret]] env`` names (see
    :func:`lockstep.rules.ambient_rule`)."""
    func = resolve_callable(render, Path(root), where="render")
    rule_set = rules_from_records(rules, where="lock", ambient=ambient_rule(*secret_env))
    _WORKER.renderer = Renderer(func, loose=loose, rules=rule_set, stem_length=stem_length)


def worker_render(batch: list[tuple[str, str]]) -> list[tuple[str, Rendered]]:
    """Render one batch of ``(fixture id, path)`` in a worker process."""
    renderer = _WORKER.renderer
    assert renderer is not None
    return [(fid, renderer(fid, Path(p))) for fid, p in batch]
