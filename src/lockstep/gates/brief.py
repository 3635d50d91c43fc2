"""The brief: the constraints to hand a coding assistant before it touches frozen code.

An assistant asked to "clean up" a module will happily change three things,
re-record the oracle so the tests pass, and rename a public function.  The
brief states, in text the assistant reads, the one seam it may change, the
files it must not edit, the signatures that are frozen, how many lines it
may touch, and the commands whose green is the price of returning a diff.

One sentence, one seam: a sentence that asks for two changes is refused,
because two changes need two freezes and two reviews.  What counts is the
sentence's *actions*, not the letters "and": "extract the search-and-replace
loop" and "extract the pre and post loop" are one change, "extract the loop
and rename the class" two.  :func:`seam_actions` splits the sentence into
clauses at coordinators (``and``, ``&``, ``then``, ``plus``, ``as well as``,
commas, semicolons) and counts the clauses that begin with a refactoring verb
of a small lexicon — deterministic, no language model.  A verb that also names
what code does (``replace``, ``split``, ``merge`` ...) only starts an action
when an object follows it (``the``, ``it``, a code name): "the search and
replace loop" is one noun phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from lockstep.config import PYPROJECT, Project
from lockstep.errors import TargetError, UsageError
from lockstep.gates.ast_facts import ModuleFacts, facts_of
from lockstep.gates.budget import ImportGraph, allowance, module_file, resolve_target
from lockstep.gates.git import Git
from lockstep.gates.scope import oracle_inputs

_CLAUSE_BREAK: Final = re.compile(
    r"[;,]|\s(?:and|&|\+|then|plus|as\s+well\s+as)(?=\s)",
    re.IGNORECASE,
)
"""Where one clause of the seam sentence ends and the next may begin. Words inside a
hyphenated compound (``search-and-replace``) are not separated by spaces, so they never
split a clause."""

_FILLER: Final = frozenset(
    {"also", "then", "please", "and", "finally", "afterwards", "next", "just", "so", "to"}
)
"""Words skipped at the start of a clause before looking for its verb."""

_ACTIONS: Final = frozenset(
    {
        "add", "adopt", "annotate", "collapse", "combine", "consolidate", "convert",
        "decompose", "deduplicate", "delete", "document", "drop", "encapsulate", "extract",
        "factor", "flatten", "generalize", "hoist", "inline", "introduce", "isolate",
        "memoize", "migrate", "modernize", "optimize", "parameterize", "pull", "push",
        "refactor", "remove", "rename", "reorder", "reorganize", "restructure", "rewrite",
        "simplify", "substitute", "swap", "tidy", "type", "unify", "unwrap", "vectorize",
    }
)  # fmt: skip
"""Refactoring actions that start a change whatever follows them."""

_NOUN_LIKE_ACTIONS: Final = frozenset(
    {
        "cache", "change", "clean", "copy", "fix", "format", "join", "lift", "merge",
        "move", "replace", "sort", "split", "update", "wrap",
    }
)  # fmt: skip
"""Actions that also name what code does ("the search and replace loop", "the split and
join helpers"): they start a change only when an object follows them."""

_OBJECT_START: Final = frozenset(
    {
        "a", "all", "an", "any", "both", "each", "every", "it", "its", "my", "one", "our",
        "some", "that", "the", "their", "them", "these", "this", "those", "your",
    }
)  # fmt: skip
"""Words that open a verb's object: after one of these, a noun-like action is a verb."""

_CODE_NAME: Final = re.compile(r"[`'\"(]|\w[._:]\w|\(\)|^_|[a-z][A-Z]")
"""A word that is code (``_money()``, ``shop.prices``, ``camelCase``): an object."""

_MODULE_WORD: Final = re.compile(r"[A-Za-z_][\w./]*(?:\.py)?(?::[\w.]+)?")


@dataclass(frozen=True)
class Brief:
    seam: str
    module: str
    module_file: str
    frozen: tuple[str, ...]
    """Public signatures of the target module, as ``def f(a, b=1)`` lines."""
    forbidden: tuple[str, ...]
    """Paths and config tables the assistant must not edit."""
    fan_in: int
    allowed_lines: int
    seam_limit: int
    """New functions, classes or modules the change may add (``[gates] seam_limit``)."""
    base: str
    """The commit the brief was written against (the review's BASE)."""

    def text(self) -> str:
        budget = (
            f"at most {self.allowed_lines} changed lines in production code "
            f"({self.module} is imported by {self.fan_in} module(s))"
            if self.allowed_lines
            else f"0 changed lines: {self.module} is imported by {self.fan_in} modules; "
            "propose an adapter seam instead of editing it"
        )
        new = (
            "one new function, class or module"
            if self.seam_limit == 1
            else f"{self.seam_limit} new functions, classes or modules"
        )
        out = [
            "# Refactoring brief (lockstep)",
            "",
            f"Seam (the ONE change to make): {self.seam}",
            f"Target module: {self.module} ({self.module_file})",
            "",
            "Behaviour is frozen: the change must be a pure refactor. Every recorded case must",
            "replay byte for byte.",
            "",
            "Do not edit these files (oracle files, fixtures, rules, configuration):",
            *(f"  - {f}" for f in self.forbidden),
            "",
            f"Frozen public signatures of {self.module} (names, parameters, kinds, defaults):",
            *(f"  - {s}" for s in self.frozen),
            *(["  - (none)"] if not self.frozen else []),
            "",
            f"Change budget: {budget}.",
            f"Add at most {new}. Add no new reads of the clock, randomness,",
            "the environment, the network, the locale or the time zone. Do not add, remove or",
            "change print, logging or sys.stdout/sys.stderr output.",
            "",
            "Before returning, run exactly these commands from the project root:",
            "  lockstep replay",
            "  lockstep guard",
            f"  lockstep budget {self.module}",
            "and, after committing your change,",
            f"  lockstep review {self.base[:12]}..HEAD",
            "If any of them exits non-zero (red), return NO diff: report which command was red",
            "and its output instead.",
        ]
        return "\n".join(out) + "\n"


def _words(clause: str) -> list[str]:
    return [w.strip(".:!?") for w in clause.split()]


def _is_action(clause: str) -> bool:
    """Whether a clause starts with a refactoring verb in the imperative."""
    words = _words(clause)
    while words and words[0].lower() in _FILLER:
        words = words[1:]
    if not words:
        return False
    verb = words[0].lower()
    if verb in _ACTIONS:
        return True
    if verb not in _NOUN_LIKE_ACTIONS:
        return False
    following = words[1] if len(words) > 1 else ""
    return following.lower() in _OBJECT_START or bool(_CODE_NAME.search(following))


def seam_actions(sentence: str) -> list[str]:
    """The changes a seam sentence asks for: each clause that starts with an action.

    The sentence's first clause counts when it starts with any verb of the
    lexicon (an imperative sentence opens with its verb); the clauses after a
    coordinator count only as :func:`_is_action` says.
    """
    clauses = [c.strip() for c in _CLAUSE_BREAK.split(sentence)]
    clauses = [c for c in clauses if c]
    actions: list[str] = []
    for i, clause in enumerate(clauses):
        words = _words(clause)
        first = words[0].lower() if words else ""
        opening = i == 0 and first in _ACTIONS | _NOUN_LIKE_ACTIONS
        if opening or _is_action(clause):
            actions.append(clause)
    return actions


def check_one_seam(sentence: str) -> str:
    """The sentence, stripped; refused when empty or asking for two changes or more."""
    seam = " ".join(sentence.split())
    if not seam:
        raise UsageError("name the seam in one sentence, e.g. 'extract the tax rounding helper'")
    actions = seam_actions(seam)
    if len(actions) > 1:
        named = ", ".join(repr(a) for a in actions[:-1]) + f" and {actions[-1]!r}"
        count = "two" if len(actions) == 2 else str(len(actions))
        raise UsageError(
            f"the seam asks for {count} changes: {named}; two changes need two freezes:"
            " brief one seam, review it, then brief the next"
        )
    return seam


def _guess_target(project: Project, seam: str) -> str:
    for word in _MODULE_WORD.findall(seam):
        candidate = word.rstrip(".")
        if "." not in candidate and "/" not in candidate:
            continue
        try:
            return resolve_target(project, candidate)
        except TargetError:
            continue
    raise UsageError(
        "cannot tell the target module from the sentence; name it with --target pkg.module"
    )


def forbidden_paths(project: Project) -> tuple[str, ...]:
    root = project.root.resolve()
    oracle_dir = project.oracle_dir.relative_to(root).as_posix()
    out = [f"{oracle_dir}/ (oracle files and their blobs)"]
    out += [f"{pattern} ({reason})" for pattern, reason in oracle_inputs(project)]
    if project.config_name == PYPROJECT:
        out.append(
            f"the [tool.lockstep] tables of {project.config_name} (configuration: oracles, "
            "[[rule]] tables, [gates]); the rest of the file is not lockstep's"
        )
    else:
        out.append(f"{project.config_name} (configuration: oracles, [[rule]] tables, [gates])")
    return tuple(out)


def make_brief(project: Project, git: Git, sentence: str, target: str | None) -> Brief:
    seam = check_one_seam(sentence)
    module = resolve_target(project, target) if target else _guess_target(project, seam)
    rel = module_file(project, module)
    assert rel is not None  # resolve_target checked it exists
    facts = facts_of((project.root / rel).read_bytes())
    if not isinstance(facts, ModuleFacts):
        raise TargetError(f"{rel}:{facts.line}: does not parse: {facts.message}")
    importers = ImportGraph(project).importers(module)
    allowed = allowance(project.config.gates.budget, len(importers), project.config_name)
    return Brief(
        seam=seam,
        module=module,
        module_file=rel,
        frozen=tuple(
            s.text if "." not in s.qualname else f"{s.qualname}: {s.text}" for s in facts.signatures
        ),
        forbidden=forbidden_paths(project),
        fan_in=len(importers),
        allowed_lines=allowed,
        seam_limit=project.config.gates.seam_limit,
        base=git.resolve("HEAD"),
    )
