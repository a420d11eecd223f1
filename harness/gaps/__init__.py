"""Generalization gaps: the ``@gap`` registry with the context every gap gets, and the built-in
gaps with the per-report computation."""
