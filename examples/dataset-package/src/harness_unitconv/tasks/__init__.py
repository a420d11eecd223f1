"""The package's task files and their data file (found through the ``harness.tasks`` entry
point)."""
