"""Answers: taking the answer out of a model's output (extractors) and scoring it against the
target (metrics, MATH-style equivalence)."""
