"""``harness cache info|clear``: look at or empty the response cache."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from harness.models.cache import ResponseCache

app = typer.Typer(help="The response cache (what lets interrupted runs resume).",
                  no_args_is_help=True)

_DIR = typer.Option(
    help="Cache folder (default: $GENHARNESS_RESPONSE_CACHE, else responses/ in the harness cache)."
)


def _open(cache_dir: Path | None) -> ResponseCache:
    from harness.cache_paths import responses_dir
    from harness.models.cache import ResponseCache

    return ResponseCache(cache_dir or responses_dir())


@app.command("info")
def info(cache_dir: Annotated[Path | None, _DIR] = None) -> None:  # noqa: UP007
    """Where the cache is, its size, responses per model and method, and damaged cache files
    that were moved aside."""
    cache = _open(cache_dir)
    try:
        data = cache.info()
    finally:
        cache.close()
    typer.echo(f"{data['path']}  ({data['bytes'] / 1e6:.1f} MB)")
    if not data["entries"]:
        typer.echo("  empty")
    for e in data["entries"]:
        typer.echo(f"  {e['model']}  {e['method']}  {e['count']}")
    for aside in data["moved_aside"]:
        typer.echo(f"  damaged file moved aside (delete it when done): {aside}")


@app.command("clear")
def clear(
    cache_dir: Annotated[Path | None, _DIR] = None,  # noqa: UP007
    model: Annotated[  # noqa: UP007
        str | None, typer.Option(help="Only responses of models whose key contains this text.")
    ] = None,
) -> None:
    """Delete cached responses (all, or one model's)."""
    cache = _open(cache_dir)
    try:
        n = cache.clear(model)
    finally:
        cache.close()
    typer.echo(f"deleted {n} responses from {cache.path}")
