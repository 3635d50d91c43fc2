"""Gates for the change itself, beyond replay: guard, budget, review, step and brief.

Replay proves the recorded outputs did not move.  The gates judge the change
that claims to be a refactor: the oracle was not re-recorded alongside the
code (:mod:`~lockstep.gates.guard`), the change is small for how much depends
on the module (:mod:`~lockstep.gates.budget`), and the decision table of
:mod:`~lockstep.gates.review` holds — signatures frozen, one seam, no new
reads of the world, output unchanged.  Everything here returns values; the
command layer prints them.
"""
