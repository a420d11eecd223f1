"""Example genharness task package (see ``pyproject.toml`` for its entry points).

Importing this package does not import the harness: each entry point names its own module,
and the harness imports a module only when one of its names is used.
"""

__version__ = "0.1.0"
