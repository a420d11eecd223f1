"""Task files of the ``mybench`` namespace: every ``*.yaml`` here is a task (``mybench/<stem>``).

This package holds no code; the ``harness.tasks`` entry point names it so the harness can find
its folder.
"""
