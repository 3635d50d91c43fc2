"""``lockstep demo``: a bundled messy project, frozen, refactored safely, then unsafely.

The demo is a *script* of declarative steps (:mod:`lockstep.demo.steps`), one
chapter per oracle kind (:mod:`lockstep.demo.chapters`).  The runner
(:mod:`lockstep.demo.runner`) executes the steps in a fresh folder and yields
what happened; only the command layer prints.  Chapters are plain data, so the
tests can check each one and a new oracle kind adds a chapter without touching
the others.
"""
