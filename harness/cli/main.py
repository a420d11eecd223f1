"""``harness`` command line: one module per command group; errors become one line, exit 2."""

from __future__ import annotations

import sys

import typer

from harness.cli import (
    blocks_cmd,
    cache_cmd,
    compare_cmd,
    data_cmd,
    eval_cmd,
    leaderboard_cmd,
    plugins_cmd,
    rescore_cmd,
    tasks_cmd,
)
from harness.errors import HarnessError, Interrupted, print_stack
from harness.process import end_process

# typer may vendor its own click: find its ClickException through a class we know it exports
_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)

app = typer.Typer(
    name="harness", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Measure how language models generalize: longer inputs, new combinations, harder "
         "problems, rephrased instructions.",
)
app.add_typer(tasks_cmd.app, name="tasks")
app.add_typer(plugins_cmd.app, name="plugins")
app.add_typer(blocks_cmd.generators_app, name="generators")
app.add_typer(blocks_cmd.metrics_app, name="metrics")
app.add_typer(blocks_cmd.analyses_app, name="analyses")
app.add_typer(blocks_cmd.strategies_app, name="strategies")
app.add_typer(blocks_cmd.extractors_app, name="extractors")
app.add_typer(blocks_cmd.gaps_app, name="gaps")
app.add_typer(cache_cmd.app, name="cache")
app.command("eval")(eval_cmd.eval_command)
app.add_typer(leaderboard_cmd.app, name="leaderboard")
app.command("compare")(compare_cmd.compare_command)
app.command("rescore")(rescore_cmd.rescore_command)
app.add_typer(data_cmd.app, name="data")


def _plain_help(t: typer.Typer) -> None:
    """Help in click's plain layout for ``t`` and its groups: option names are never cut and
    descriptions wrap at any width (rich's boxed help cut names such as --limit-per-bucket at
    80 columns)."""
    t.rich_markup_mode = None
    for group in t.registered_groups:
        if group.typer_instance is not None:
            _plain_help(group.typer_instance)


_plain_help(app)


def _message(e: Exception) -> str:
    fmt = getattr(e, "format_message", None)
    return str(fmt()) if callable(fmt) else str(e)


def _run() -> int:
    """Run the command; its exit status."""
    try:
        rv = app(standalone_mode=False)
    except _CLICK_ERROR as e:  # bad arguments: one line, no usage box
        if type(e).__name__ == "NoArgsIsHelpError":
            print(_message(e))
            return 0
        print(f"error: {_message(e)}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 1
    except Interrupted as e:  # Ctrl-C in a run: how far it got, and that a rerun resumes
        print(e, file=sys.stderr)
        return 130
    except HarnessError as e:  # several problems (e.g. of one task file): one line each
        for line in str(e).splitlines() or [""]:
            print(f"error: {line}", file=sys.stderr)
        if e.__cause__ is not None:
            print_stack(e)  # asked for with GENHARNESS_TRACEBACK=1 or --traceback
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if rv == 130:  # typer turns Ctrl-C into Exit(130) before we see it
        print("interrupted", file=sys.stderr)
    return rv if isinstance(rv, int) else 0


def main() -> None:
    """Console-script entry point."""
    code = _run()
    end_process(code)  # a model ran: no interpreter teardown (harness/process.py)


if __name__ == "__main__":
    main()
