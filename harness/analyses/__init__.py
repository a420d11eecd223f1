"""Task-level analyses beyond the generic gaps: compositionality gap, SGR, critical complexity,
multi-prompt spread (CPS), effective length, … Each is a registered function over a task's
sample records; see ``harness.analyses.registry``."""
