"""Before freezing, measure: run a case N times, name what varies, suggest rules for it.

:mod:`.runs` probes (distinct output signatures, raw and after rules),
:mod:`.envspy` discovers which environment keys a Python program reads, and
:mod:`.suggest` proposes rules for the fields that vary and verifies them.
"""

from __future__ import annotations

from lockstep.probe.runs import ProbeReport, ProbeTarget, Variant, normalize, probe, probe_many

__all__ = ["ProbeReport", "ProbeTarget", "Variant", "normalize", "probe", "probe_many"]
