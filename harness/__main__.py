"""``python -m harness`` (also what ``accelerate launch -m harness`` runs)."""

from harness.cli.main import main

main()
