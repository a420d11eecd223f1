"""``python -m harness.schema``: rewrite the shipped schema files and, in a checkout,
docs/task-files.md and the example package's copy of the schema, from the models."""

from __future__ import annotations

from harness.schema import TASK_SCHEMA, shipped_dir, shipped_texts
from harness.schema.reference import reference_markdown


def main() -> None:
    """Write ``task.schema.json``, ``task-base.schema.json`` (and the checkout's copies)."""
    texts = shipped_texts()
    written = []
    for name, text in texts.items():
        (shipped_dir() / name).write_text(text, encoding="utf-8")
        written.append(f"harness/schema/{name}")
    root = shipped_dir().parent.parent  # the checkout, when run from one
    targets = {root / "docs" / "task-files.md": reference_markdown(),
               root / "examples" / "plugin-package" / TASK_SCHEMA: texts[TASK_SCHEMA]}
    for path, text in targets.items():
        if path.parent.is_dir():
            path.write_text(text, encoding="utf-8")
            written.append(str(path.relative_to(root)))
    print("wrote", ", ".join(written))


if __name__ == "__main__":
    main()
