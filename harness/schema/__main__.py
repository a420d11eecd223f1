"""``python -m harness.schema``: rewrite the shipped schema files and docs/task-files.md from
the models (the repository's docs folder is found from this checkout)."""

from __future__ import annotations

from harness.schema import shipped_dir, shipped_texts
from harness.schema.reference import reference_markdown


def main() -> None:
    """Write ``task.schema.json``, ``task-base.schema.json`` and docs/task-files.md."""
    for name, text in shipped_texts().items():
        (shipped_dir() / name).write_text(text, encoding="utf-8")
    docs = shipped_dir().parent.parent / "docs"
    if docs.is_dir():
        (docs / "task-files.md").write_text(reference_markdown(), encoding="utf-8")
    print("wrote", ", ".join([*shipped_texts(), *(["docs/task-files.md"] if docs.is_dir()
                                                  else [])]))


if __name__ == "__main__":
    main()
