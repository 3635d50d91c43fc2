"""What a change does to the production code, compared fact by fact between BASE and HEAD.

Comparisons are over the whole change, not file by file, where moving code is
legitimate: a clock read or a ``print`` moved into an extracted helper module
is not new.  Signatures are compared per module, because moving a public
function to another module breaks its importers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lockstep.config import Project
from lockstep.gates.ast_facts import ModuleFacts, Output, ParseFailure, Read, facts_of
from lockstep.gates.git import Change, Git, Head, Side
from lockstep.gates.scope import Scope


@dataclass(frozen=True)
class Located:
    """A fact with the file it was found in, ready to print as evidence."""

    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}" if self.line else f"{self.path}: {self.text}"


@dataclass(frozen=True)
class CodeChanges:
    files: tuple[str, ...]
    """The production Python files the change touches."""
    parse_failures: tuple[Located, ...]
    signature_changes: tuple[Located, ...]
    new_definitions: tuple[Located, ...]
    new_reads: tuple[Located, ...]
    output_changes: tuple[Located, ...]


def _side_name(head: Head, git: Git) -> str:
    if head is Side.INDEX:
        return "the index"
    if head is Side.WORKTREE:
        return "the working tree"
    return git.short(head)


def code_changes(project: Project, git: Git, change: Change) -> CodeChanges:
    scope = Scope(project, git)
    files = tuple(
        p
        for p in git.changed_files(change.base, change.head)
        if p.endswith(".py") and scope.is_production(p)
    )
    failures: list[Located] = []
    signatures: list[Located] = []
    definitions: list[Located] = []
    base_reads: list[tuple[str, Read]] = []
    head_reads: list[tuple[str, Read]] = []
    base_out: list[tuple[str, Output]] = []
    head_out: list[tuple[str, Output]] = []

    for path in files:
        sides: list[ModuleFacts | None] = []
        broken = False
        for at in (change.base, change.head):
            data = git.read(path, at)
            facts = None if data is None else facts_of(data)
            if isinstance(facts, ParseFailure):
                where = _side_name(at, git)
                failures.append(
                    Located(path, facts.line, f"does not parse at {where}: {facts.message}")
                )
                broken = True
                facts = None
            sides.append(facts)
        if broken:
            continue  # reported; nothing about this file can be compared
        before, after = sides
        if before is not None:
            base_reads += [(path, r) for r in before.reads]
            base_out += [(path, o) for o in before.outputs]
        if after is not None:
            head_reads += [(path, r) for r in after.reads]
            head_out += [(path, o) for o in after.outputs]
        signatures += _signature_changes(path, before, after)
        definitions += _new_definitions(path, before, after)

    return CodeChanges(
        files=files,
        parse_failures=tuple(failures),
        signature_changes=tuple(signatures),
        new_definitions=tuple(definitions),
        new_reads=tuple(_new_reads(base_reads, head_reads)),
        output_changes=tuple(_output_changes(base_out, head_out)),
    )


def _signature_changes(
    path: str, before: ModuleFacts | None, after: ModuleFacts | None
) -> list[Located]:
    if before is None:
        return []  # a new module has no frozen signatures
    old = {s.qualname: s for s in before.signatures}
    new = {s.qualname: s for s in (after.signatures if after else ())}
    out: list[Located] = []
    for qualname, sig in old.items():
        if qualname not in new:
            out.append(Located(path, sig.line, f"{sig.text} removed"))
        elif new[qualname].text != sig.text:
            out.append(Located(path, new[qualname].line, f"{sig.text} → {new[qualname].text}"))
    return out


def _new_definitions(
    path: str, before: ModuleFacts | None, after: ModuleFacts | None
) -> list[Located]:
    if after is None:
        return []
    if before is None:
        return [Located(path, 0, "new module")]
    added = after.definitions - before.definitions
    out = []
    for qualname in sorted(added):
        parent = qualname.rpartition(".")[0]
        if parent and parent in added:
            continue  # a method of a new class is part of that one seam
        line = next((s.line for s in after.signatures if s.qualname == qualname), 0)
        out.append(Located(path, line, f"new definition {qualname}"))
    return out


def _new_reads(base: list[tuple[str, Read]], head: list[tuple[str, Read]]) -> list[Located]:
    """Reads whose name occurs more often at HEAD than at BASE (across the change).

    The evidence is the HEAD occurrences whose source line is not one BASE
    already had, so an untouched old read is not blamed for a new one.
    """
    before = Counter(r.name for _, r in base)
    after = Counter(r.name for _, r in head)
    out: list[Located] = []
    for name, count in sorted(after.items()):
        extra = count - before.get(name, 0)
        if extra <= 0:
            continue
        old_lines = Counter((p, r.source) for p, r in base if r.name == name)
        candidates: list[tuple[str, Read]] = []
        for path, read in head:
            if read.name != name:
                continue
            if old_lines[(path, read.source)] > 0:
                old_lines[(path, read.source)] -= 1
            else:
                candidates.append((path, read))
        shown = candidates or [(p, r) for p, r in head if r.name == name][-extra:]
        out += [Located(p, r.line, f"{name} ({r.category}): {r.source}") for p, r in shown]
    return sorted(out, key=lambda loc: (loc.path, loc.line))  # in reading order


def _output_changes(
    base: list[tuple[str, Output]], head: list[tuple[str, Output]]
) -> list[Located]:
    before = Counter(o.key for _, o in base)
    after = Counter(o.key for _, o in head)
    out: list[Located] = []
    added = after - before
    removed = before - after
    for path, output in head:
        if added[output.key] > 0:
            added[output.key] -= 1
            out.append(Located(path, output.line, f"added: {output.source}"))
    for path, output in base:
        if removed[output.key] > 0:
            removed[output.key] -= 1
            out.append(Located(path, output.line, f"removed (line at BASE): {output.source}"))
    return out
