"""Growing an oracle until it saturates, and comparing two versions of the code directly.

* :mod:`.constants` -- the literals in the target's source (``"%"``, ``{"n/a", "-"}``), so
  generated inputs reach the branches they guard in seconds, not by luck;
* :mod:`.strategies` -- Hypothesis strategies shaped like the recorded inputs (types,
  container shapes, string alphabets, numeric ranges) and the target's type hints;
* :mod:`.coverage` -- which line-to-line arcs of the target's module an input runs;
* :mod:`.miner` -- ``lockstep mine``: keep an input when it reaches a new arc or a new
  outcome class, stop at the budget or at saturation, add the rows through the record path;
* :mod:`.differential` -- ``lockstep replay --against REV``: the old and the new code in
  two fresh interpreters, the same inputs, the oracle's own comparison, the smallest
  difference (shrunk by Hypothesis).

The kinds take part only through :class:`lockstep.oracles.mining.MiningSubject`.

Hypothesis is the ``mine`` extra (``pip install 'lockstep[mine]'``), not a dependency:
installed, it loads its own pytest plugin into every test run of the project, so only the
two commands that generate inputs import it, and :func:`require_hypothesis` says in one
line how to install it when it is missing.
"""

from __future__ import annotations

import importlib.util

from lockstep.errors import UsageError


def require_hypothesis(command: str) -> None:
    """Refuse ``command`` in one line when Hypothesis is not installed."""
    if importlib.util.find_spec("hypothesis") is None:
        raise UsageError(
            f"{command} generates inputs with Hypothesis, which is not installed: "
            "pip install 'lockstep[mine]'"
        )
