"""Fixtures of the plugin tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness import plugins


@pytest.fixture(autouse=True)
def _fresh_plugin_state() -> Iterator[None]:
    """Each test discovers plugins afresh and sees its own warnings."""
    plugins.refresh()
    yield
    plugins.refresh()
