"""The import graph of ``harness/`` points one way (issue 18): every module belongs to a layer, and
no import goes up a layer. Module-level imports are read from the source with ``ast`` (imports
under ``if TYPE_CHECKING:`` do not run and are skipped). An import inside a function may go down
a layer (it keeps start-up lazy: pydantic, numpy, jinja2 or a model library load only when the
function runs), never up, and never to a module that imports the importer back (that would only
hide a cycle). The task schema (spec, buckets, difficulty parsing, the regex compiler, chat
turns) is a leaf: it imports nothing of the harness but ``harness.errors``, checked on a fresh
interpreter too."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness"

# Bottom to top. An entry is a module, or ``pkg.*``: the package and everything under it; a
# module's layer is the entry naming it, else the longest ``pkg.*`` it falls under.
LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["harness", "harness.errors", "harness.seeding", "harness.cache_paths",
              "harness.process", "harness.plugins", "harness.registry", "harness.requests",
              "harness.filelock", "harness.board_info", "harness.bounds",
              "harness.hub_access"]),
    ("schema", ["harness.tasks", "harness.tasks.spec", "harness.tasks.buckets",
                "harness.tasks.difficulty", "harness.tasks.patterns", "harness.tasks.chat",
                "harness.schema.*"]),
    ("model contract", ["harness.models.base"]),
    ("blocks", ["harness.sources.*", "harness.generators.*", "harness.scoring.extract",
                "harness.scoring.metrics", "harness.scoring.math_equiv",
                "harness.tasks.templates", "harness.tasks.paths"]),
    ("items", ["harness.tasks.instances"]),
    ("scoring", ["harness.scoring.*"]),
    ("outputs", ["harness.outputs.*", "harness.tasks.prompts"]),
    ("analyses", ["harness.analyses.*"]),
    ("task files", ["harness.tasks.*"]),  # loader, checks, index, refs, providers, ...
    ("models", ["harness.models.*"]),
    ("strategies", ["harness.strategies.*"]),
    ("run", ["harness.config", "harness.rundir", "harness.results", "harness.runner",
             "harness.isolation", "harness.progress", "harness.evaluate", "harness.rescore",
             "harness.precision_rounds",
             "harness.data.*"]),
    ("leaderboard", ["harness.leaderboard.*"]),
    ("tools", ["harness.testing", "harness.fuzzing"]),
    ("cli", ["harness.cli.*", "harness.__main__"]),
]
SCHEMA_LEAF = ["harness.tasks.spec", "harness.tasks.buckets", "harness.tasks.difficulty",
               "harness.tasks.patterns", "harness.tasks.chat"]
# Function-level imports allowed to go up: the root package's lazy re-exports (PEP 562).
UPWARD_OK = {("harness", "__getattr__")}


@dataclass(frozen=True)
class Edge:
    src: str  # importing module
    dst: str  # imported harness module (or the package the name lives in)
    function: str | None  # the enclosing function, None at module level
    where: str  # file:line


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def layer_of(name: str) -> int:
    best, rank = -1, -1
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if n == name:
                return i
            pkg = n.removesuffix(".*")
            if n.endswith(".*") and (name == pkg or name.startswith(pkg + ".")) and len(pkg) > best:
                best, rank = len(pkg), i
    assert rank >= 0, f"{name} is in no layer: add it to LAYERS"
    return rank


def edges(mods: dict[str, Path]) -> list[Edge]:
    out: list[Edge] = []
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def target(base: str, alias: str) -> str:
            full = f"{base}.{alias}".rstrip(".")
            while full and full not in mods:  # a name in a module, or not of the harness
                full = full.rpartition(".")[0]
            return full

        def visit(node: ast.AST, func: str | None, name: str = name, pkg: str = pkg,
                  path: Path = path) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    visit(child, func or child.name)
                elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue
                elif isinstance(child, ast.Import | ast.ImportFrom):
                    if isinstance(child, ast.Import):
                        found = [target(a.name, "") for a in child.names]
                    else:
                        base = child.module or ""
                        if child.level:
                            up = pkg.split(".")[: len(pkg.split(".")) - child.level + 1]
                            base = ".".join([*up, base] if base else up)
                        found = [target(base, a.name) for a in child.names]
                    where = f"{path.relative_to(ROOT)}:{child.lineno}"
                    out.extend(Edge(name, d, func, where) for d in found if d and d != name)
                else:
                    visit(child, func)

        visit(ast.parse(path.read_text(encoding="utf-8")), None)
    return out


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_goes_up_a_layer() -> None:
    mods = modules()
    bad = [
        f"{e.where}: {e.src} ({LAYERS[layer_of(e.src)][0]}) imports {e.dst} "
        f"({LAYERS[layer_of(e.dst)][0]})" + (f" in {e.function}()" if e.function else "")
        for e in edges(mods)
        if layer_of(e.dst) > layer_of(e.src) and (e.src, e.function) not in UPWARD_OK
    ]
    assert not bad, "imports going up a layer:\n" + "\n".join(bad)


def _loads(mods: dict[str, Path], all_edges: list[Edge]) -> dict[str, set[str]]:
    """Each module → every harness module importing it loads (module-level imports, followed
    through, with the packages of each module imported)."""
    top: dict[str, set[str]] = {m: set() for m in mods}
    for e in all_edges:
        if e.function is None:
            top[e.src].add(e.dst)

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for dst in top[stack.pop()]:
                parts = dst.split(".")
                for d in [".".join(parts[:i]) for i in range(1, len(parts))] + [dst]:
                    if d in mods and d not in seen:
                        seen.add(d)
                        stack.append(d)
        return seen

    return {m: reach(m) for m in mods}


def test_function_level_imports_only_keep_start_up_lazy() -> None:
    """A function-level import of a module that imports the importer back only hides a cycle;
    one of a module the importer loads anyway keeps nothing lazy. Either is a module-level
    import in disguise."""
    mods = modules()
    all_edges = edges(mods)
    loads = _loads(mods, all_edges)
    bad = [f"{e.where}: {e.src} -> {e.dst} in {e.function}()"
           + (" (a cycle)" if e.src in loads[e.dst] else " (loaded anyway)")
           for e in all_edges
           if e.function is not None and (e.src, e.function) not in UPWARD_OK
           and (e.src in loads[e.dst] or e.dst in loads[e.src])]
    assert not bad, "function-level imports that keep nothing lazy:\n" + "\n".join(bad)


def test_schema_is_a_leaf() -> None:
    mods = modules()
    bad = [f"{e.where}: {e.src} imports {e.dst}" for e in edges(mods)
           if e.src in SCHEMA_LEAF and e.dst not in SCHEMA_LEAF
           and e.dst not in ("harness", "harness.errors", "harness.tasks")]
    assert not bad, "the task schema imports the rest of the harness:\n" + "\n".join(bad)
    code = (f"import sys; import {', '.join(SCHEMA_LEAF)}; "
            "print(sorted(m for m in sys.modules if m.startswith('harness')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout
    assert set(eval(loaded)) <= {*SCHEMA_LEAF, "harness", "harness.errors", "harness.tasks"}


def test_architecture_page_names_every_module() -> None:
    """docs/architecture.md has one line per module (its path under harness/; a package whose
    ``__init__.py`` is only a docstring needs none)."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

    def bare(path: Path) -> bool:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        return path.name == "__init__.py" and all(
            isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)

    missing = [str(path.relative_to(PACKAGE)) for path in modules().values()
               if f"`{path.relative_to(PACKAGE).as_posix()}`" not in page and not bare(path)]
    assert not missing, f"docs/architecture.md does not name: {missing}"
