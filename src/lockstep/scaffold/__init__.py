"""``lockstep init``: look at a repository, propose oracles, write a first ``lockstep.toml``.

:mod:`.survey` finds what is worth freezing (functions with mixed return types
and many callers, scripts with a ``__main__`` entry point, fixture-like
folders); :mod:`.pins_rules` probes a proposed script so its volatile output
gets rules before anything is recorded; :mod:`.config_text` writes the chosen
oracles as a commented configuration that ``lockstep record`` runs as is.
"""
