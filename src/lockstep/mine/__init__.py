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
"""
