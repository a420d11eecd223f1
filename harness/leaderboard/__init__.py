"""Leaderboards from many runs (tables, JSON, static site, PNG plots) and paired run comparison.

``collect.gather`` reads and merges results.json files and ``aggregate.board_from_runs`` ranks
them into a :class:`~harness.leaderboard.board_file.Leaderboard`; ``tables``, ``site`` and
``plots`` render it; ``build`` writes everything into one folder; ``check`` compares a committed
board with a rebuild; ``paired`` compares two runs item by item.
"""
