"""Leaderboards from many runs (tables, JSON, static site, PNG plots) and paired run comparison.

``collect`` merges results.json files into a :class:`~harness.leaderboard.schema.Leaderboard`;
``tables``, ``site`` and ``plots`` render it; ``build`` writes everything into one folder;
``compare`` pairs two runs item by item.
"""
