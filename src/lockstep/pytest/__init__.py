"""lockstep's pytest plugin: adapts pytest to the oracle API and holds no oracle logic.

:mod:`.plugin` is the entry point (hooks and options), :mod:`.items` the collected
cases, :mod:`.project` the one project loader, :mod:`.ledger_recording` the
``--lockstep-record`` run and :mod:`.tape_fixture` the ``tape`` fixture.
"""
