"""Running one case of a program: a controlled environment, pinned stdin, a hard timeout.

A pin is only worth something if the run it freezes can be repeated, so a
case never sees the user's shell:

* **Environment.** The child gets a minimal documented base (:data:`ENV_BASE`:
  a fixed locale ``LC_ALL=LANG=C.UTF-8``, ``TZ=UTC`` and ``PYTHONHASHSEED=0`` so
  a legacy script that prints a set of strings prints it in one order), the
  value of ``PATH`` inherited (:data:`ENV_INHERIT`, so programs are found), and
  the case's own keys.  Nothing else leaks in (lockstep adds no marker of its
  own either).  The base is written into the oracle file, so a replay uses
  exactly the environment the freeze used.
* **stdin** is the pinned bytes, or empty: never the terminal.
* **Large output.** stdout and stderr are spooled to anonymous temporary files
  rather than pipes: no pipe can fill and deadlock, and a killed run's partial
  output is simply what the files hold.  Each stream has a cap
  (:data:`DEFAULT_OUTPUT_CAP`, 32 MiB, or ``max_output`` of a ``[[pins]]``
  table): a case whose stdout or stderr grows past it is killed, the result
  says which stream (:attr:`RunResult.truncated_stream`) and holds the first
  ``cap`` bytes.  Sizes are checked while the case runs (at most every 25 ms),
  and lockstep never reads more than the cap, so its memory is bounded by the
  cap, not by the output.

**The process tree is the case.**  Everything a case starts belongs to it, and
nothing outlives it:

* Each case runs in a new session (its own process group).  At the timeout, or
  past the output cap, the whole tree is killed — the group, and every
  descendant, including ones that left the group or session with ``setsid`` or
  ``setpgid``; the output produced so far is returned.
* When the main process exits normally, descendants it left running are killed
  too, and counted (:attr:`RunResult.leftovers`, with a note).
* To find descendants that left the session and whose parent died, lockstep
  makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux)
  while any case runs: such orphans are re-parented to lockstep instead of to
  init, so they stay findable, and lockstep reaps them.  Cases run in parallel
  threads (:func:`lockstep.parallel.run_parallel`) share the one lockstep
  process, so each orphan is attributed to its case: by having been seen in that
  case's tree (the tree of each running case is walked through
  ``/proc/PID/task/*/children`` every few milliseconds), by its session or
  process group (a descendant that did not call ``setsid`` keeps the case's), or
  by its environment (``/proc/PID/environ`` holding exactly one running case's
  keys).  An orphan none of those places is killed when the last case that
  was running when it appeared has finished: late rather than early, never one
  case's process killed while its own case still runs.  lockstep never kills or
  reaps a process it cannot attribute to a case (one that is in lockstep's own
  session, or older than every running case).  One limit: a child that other
  code in lockstep's own process starts in a *new session* while a case runs
  (another thread of a test run) looks like an orphan of that case.  Mains are
  started one at a time (under the tracker's lock), so a main just started is
  never taken for an orphan.
* Fallbacks: without the ``children`` files (a kernel built without them),
  trees are not walked while cases run; orphans re-parented to lockstep are
  found by scanning ``/proc`` when a case ends.  Where ``prctl`` is refused,
  orphans go to init and are found by scanning ``/proc`` for the sessions and
  processes seen in the case's tree (a descendant that left the session before
  it was seen survives).  Where there is no ``/proc`` (not Linux), only the
  case's process group is killed — a descendant that left it survives.

A command whose first word is ``python`` or ``python3`` runs under the
interpreter that runs lockstep, so a pin does not depend on which Python
happens to be first on ``PATH`` (and the oracle still reads ``python``).
"""

from __future__ import annotations

from lockstep.process.env import (
    ENV_BASE,
    ENV_INHERIT,
    PYTHON_NAMES,
    build_env,
    is_python,
    resolve_argv,
)
from lockstep.process.runner import (
    DEFAULT_OUTPUT_CAP,
    MainProcess,
    RunResult,
    Starter,
    format_size,
    run,
)

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "ENV_BASE",
    "ENV_INHERIT",
    "PYTHON_NAMES",
    "MainProcess",
    "RunResult",
    "Starter",
    "build_env",
    "format_size",
    "is_python",
    "resolve_argv",
    "run",
]
