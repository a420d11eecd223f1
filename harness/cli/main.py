"""``harness`` command line: one module per command group; errors become one line, exit 2."""

from __future__ import annotations

import sys

import typer

from harness.cli import eval_cmd, tasks_cmd
from harness.errors import HarnessError

app = typer.Typer(
    name="harness", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Measure how language models generalize: longer inputs, new combinations, harder "
         "problems, rephrased instructions.",
)
app.add_typer(tasks_cmd.app, name="tasks")
app.command("eval")(eval_cmd.eval_command)


def main() -> None:
    """Console-script entry point."""
    try:
        app(standalone_mode=True)
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
