"""Every command's --help at 80 columns: option names whole (rich's boxed help cut
``--limit-per-bucket`` to ``--limit-per-buc…``), lines within the width, and no reStructuredText
markup (double backticks) in help or in the building-block listings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.main import app


# typer may vendor its own click: commands are recognised by what they have, not their class
def _commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _command(path: tuple[str, ...]) -> Any:
    cmd: Any = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return cmd


PATHS = list(_commands(typer.main.get_command(app)))


def test_every_command_is_checked() -> None:
    assert len(PATHS) > 25 and ("eval",) in PATHS and ("tasks", "validate") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "harness")
def test_help_at_80_columns_keeps_option_names_whole(path: tuple[str, ...],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    r = CliRunner().invoke(app, [*path, "--help"])
    assert r.exit_code == 0, r.output
    assert "``" not in r.output and "…" not in r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80, r.output
    words = set(r.output.replace(",", " ").replace("/", " ").split())
    for param in _command(path).params:
        if param.param_type_name == "option" and not param.hidden:
            for name in param.opts + param.secondary_opts:
                assert name in words, f"{' '.join(path)}: {name} is not whole in:\n{r.output}"


@pytest.mark.parametrize("kind", ["generators", "metrics", "analyses", "gaps", "strategies",
                                  "extractors"])
def test_listings_are_plain_text(kind: str) -> None:
    for args in ([kind, "list"], [kind, "list", "--json"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, r.output
        assert "``" not in r.output, r.output
    assert json.loads(r.output)  # the descriptions are there, only the markup is gone
