"""The import graph of ``harness/`` points one way (issues 18 and 27): every module belongs to a
layer, every package sits on one layer, and no import goes up a layer. Module-level imports are
read from the source with ``ast`` (imports under ``if TYPE_CHECKING:`` do not run and are
skipped); a name imported from a package face that re-exports it lazily (``harness``,
``harness.api``: a ``_EXPORTS`` table read by ``__getattr__``) counts as an import of the module
that defines it. An import inside a function may go down a layer (it keeps start-up lazy:
pydantic, numpy, jinja2 or a model library load only when the function runs), never up, and never
to a module that imports the importer back (that would only hide a cycle). The task-file format
(``harness.spec``: spec, buckets, difficulty parsing, the regex compiler, chat turns) is a leaf:
it imports nothing of the harness but ``harness.errors``, checked on a fresh interpreter too.

docs/architecture.md lists every module under the heading of its layer; a module listed under
another layer's heading fails as a missing one does."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness"

# Bottom to top. An entry is a top-level module, or ``pkg.*``: a package and everything under it
# (every package sits on exactly one layer).
LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["harness", "harness.api", "harness.errors", "harness.seeding",
              "harness.cache_paths", "harness.process", "harness.plugins", "harness.registry",
              "harness.requests", "harness.filelock", "harness.files", "harness.board_info",
              "harness.bounds", "harness.hub_access"]),
    ("task-file format", ["harness.spec.*", "harness.schema.*"]),
    ("model contract", ["harness.lm"]),
    ("blocks", ["harness.sources.*", "harness.generators.*", "harness.answers.*",
                "harness.templates"]),
    ("items", ["harness.items"]),
    ("scoring", ["harness.scoring.*", "harness.gaps.*"]),
    ("outputs", ["harness.outputs.*"]),
    ("analyses", ["harness.analyses.*"]),
    ("task files", ["harness.tasks.*"]),
    ("models", ["harness.models.*"]),
    ("strategies", ["harness.strategies.*"]),
    ("run", ["harness.config", "harness.run.*", "harness.data.*"]),
    ("leaderboard", ["harness.leaderboard.*"]),
    ("tools", ["harness.testing"]),
    ("cli", ["harness.cli.*", "harness.__main__"]),
]
SCHEMA_LEAF = ["harness.spec.task", "harness.spec.sources", "harness.spec.base",
               "harness.spec.buckets", "harness.spec.difficulty", "harness.spec.patterns",
               "harness.spec.chat", "harness.spec.horizon", "harness.spec.scoring"]
# Function-level imports allowed to go up: the package faces' lazy re-exports (PEP 562).
UPWARD_OK = {("harness", "__getattr__"), ("harness.api", "__getattr__")}


@dataclass(frozen=True)
class Edge:
    src: str  # importing module
    dst: str  # imported harness module (a lazily re-exported name: its defining module)
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
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            pkg = n.removesuffix(".*")
            if n == name or (n.endswith(".*") and (name == pkg or name.startswith(pkg + "."))):
                return i
    raise AssertionError(f"{name} is in no layer: add it to LAYERS")


def lazy_exports(source: str) -> dict[str, str]:
    """A package face's ``_EXPORTS`` table (public name → defining module), or {}."""
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and node.value is not None:
            table = ast.literal_eval(node.value)
            assert isinstance(table, dict)
            return {str(k): str(v) for k, v in table.items()}
    return {}


def edges(sources: dict[str, str], kinds: dict[str, bool] | None = None) -> list[Edge]:
    """The harness imports of each module; ``sources``: module name → its source text;
    ``kinds``: module name → whether it is a package (``__init__.py``; default: none is)."""
    kinds = kinds or {}
    lazy = {name: table for name, src in sources.items() if (table := lazy_exports(src))}
    out: list[Edge] = []
    for name, text in sources.items():
        pkg = name if kinds.get(name) else name.rpartition(".")[0]

        def target(base: str, alias: str) -> str:
            if alias and alias in lazy.get(base, {}):  # a lazy name: where it really lives
                return lazy[base][alias]
            full = f"{base}.{alias}".rstrip(".")
            while full and full not in sources:  # a name in a module, or not of the harness
                full = full.rpartition(".")[0]
            return full

        def visit(node: ast.AST, func: str | None, name: str = name, pkg: str = pkg) -> None:
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
                    where = f"{name}:{child.lineno}"
                    out.extend(Edge(name, d, func, where) for d in found if d and d != name)
                else:
                    visit(child, func)

        visit(ast.parse(text), None)
    return out


def _real() -> tuple[dict[str, str], dict[str, bool]]:
    mods = modules()
    return ({m: p.read_text(encoding="utf-8") for m, p in mods.items()},
            {m: p.name == "__init__.py" for m, p in mods.items()})


def upward(all_edges: list[Edge]) -> list[str]:
    """The imports that go up a layer, one line each."""
    return [
        f"{e.where}: {e.src} ({LAYERS[layer_of(e.src)][0]}) imports {e.dst} "
        f"({LAYERS[layer_of(e.dst)][0]})" + (f" in {e.function}()" if e.function else "")
        for e in all_edges
        if layer_of(e.dst) > layer_of(e.src) and (e.src, e.function) not in UPWARD_OK
    ]


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_every_package_sits_on_one_layer() -> None:
    """A sub-package or module never sits on another layer than its package (``harness`` itself
    is the face, whose top-level modules each name their layer)."""
    mods = modules()
    packages = {m for m, p in mods.items() if p.name == "__init__.py" and m != "harness"}
    bad = [f"{m} ({LAYERS[layer_of(m)][0]}) in {pkg} ({LAYERS[layer_of(pkg)][0]})"
           for pkg in packages for m in mods
           if m.startswith(pkg + ".") and layer_of(m) != layer_of(pkg)]
    assert not bad, "packages spanning layers:\n" + "\n".join(bad)


def test_no_import_goes_up_a_layer() -> None:
    bad = upward(edges(*_real()))
    assert not bad, "imports going up a layer:\n" + "\n".join(bad)


def test_a_lazy_name_counts_where_it_is_defined() -> None:
    """Hole 1 of issue 27: ``from harness import RunConfig`` in a generator used to count as an
    import of the package face (core) and pass; it is an import of the run layer's config."""
    sources, kinds = _real()
    sources["harness.generators.sneaky"] = "from harness import RunConfig\n"
    sources["harness.answers.sneaky"] = "from harness.api import load_spec\n"
    bad = upward(edges(sources, kinds))
    assert [line.partition(": ")[2] for line in bad] == [
        "harness.generators.sneaky (blocks) imports harness.config (run)",
        "harness.answers.sneaky (blocks) imports harness.tasks.loader (task files)"]


def _loads(mods: set[str], all_edges: list[Edge]) -> dict[str, set[str]]:
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
    sources, kinds = _real()
    all_edges = edges(sources, kinds)
    loads = _loads(set(sources), all_edges)
    bad = [f"{e.where}: {e.src} -> {e.dst} in {e.function}()"
           + (" (a cycle)" if e.src in loads[e.dst] else " (loaded anyway)")
           for e in all_edges
           if e.function is not None and (e.src, e.function) not in UPWARD_OK
           and (e.src in loads[e.dst] or e.dst in loads[e.src])]
    assert not bad, "function-level imports that keep nothing lazy:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    """No module reaches itself through its imports, at module level or inside functions (the
    leaderboard's old circle aggregate → check → build → aggregate was all function-level); the
    package faces' lazy re-exports are no cycle."""
    sources, kinds = _real()
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for e in edges(sources, kinds):
        if (e.src, e.function) not in UPWARD_OK:
            graph[e.src].add(e.dst)
    cyclic = []
    for start in sources:
        seen, stack = set(), list(graph[start])
        while stack:
            m = stack.pop()
            if m not in seen:
                seen.add(m)
                stack += graph[m]
        if start in seen:
            cyclic.append(start)
    assert not cyclic, f"modules in a module-level import cycle: {sorted(cyclic)}"


def test_schema_is_a_leaf() -> None:
    allowed = {"harness", "harness.errors", "harness.spec"}
    bad = [f"{e.where}: {e.src} imports {e.dst}" for e in edges(*_real())
           if e.src in SCHEMA_LEAF and e.dst not in SCHEMA_LEAF and e.dst not in allowed]
    assert not bad, "the task-file format imports the rest of the harness:\n" + "\n".join(bad)
    code = (f"import sys; import {', '.join(SCHEMA_LEAF)}; "
            "print(sorted(m for m in sys.modules if m.startswith('harness')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout
    assert set(eval(loaded)) <= {*SCHEMA_LEAF, *allowed}


_HEADING = re.compile(r"^### (\d+) (.+)$")
_ITEM = re.compile(r"^- `([^`]+\.py)`")


def misplaced(page: str, mods: dict[str, Path]) -> list[str]:
    """Problems with the architecture page's module list: a module (a file under harness/; a
    package whose ``__init__.py`` is only a docstring needs no line) missing, or listed under
    another layer's heading than its own (``### <n> <layer>``, numbered as ``LAYERS``)."""

    def bare(path: Path) -> bool:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        return path.name == "__init__.py" and all(
            isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)

    by_path = {p.relative_to(PACKAGE).as_posix(): m for m, p in mods.items()}
    listed: dict[str, str] = {}
    heading: str | None = None
    for line in page.splitlines():
        if line.startswith("## "):
            heading = None
        if (h := _HEADING.match(line)) is not None:
            heading = f"{h[1]} {h[2]}"
        elif heading is not None and (item := _ITEM.match(line)) is not None:
            listed[item[1]] = heading
    out = []
    for path, mod in by_path.items():
        want = f"{layer_of(mod)} {LAYERS[layer_of(mod)][0]}"
        if path not in listed:
            if not bare(mods[mod]):
                out.append(f"{path}: not listed (under ### {want})")
        elif listed[path] != want:
            out.append(f"{path}: listed under ### {listed[path]}, its layer is ### {want}")
    out += [f"{path}: listed, but there is no such module" for path in listed
            if path not in by_path]
    return out


def test_architecture_page_lists_every_module_under_its_layer() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    bad = misplaced(page, modules())
    assert not bad, "docs/architecture.md:\n" + "\n".join(bad)


def test_a_module_under_another_layers_heading_fails() -> None:
    """Hole 2 of issue 27: only the presence of a module's line used to be checked."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    line = next(ln for ln in page.splitlines() if ln.startswith("- `run/execute.py`"))
    moved = page.replace(line + "\n", "").replace("### 0 core\n", f"### 0 core\n\n{line}\n")
    new = set(misplaced(moved, modules())) - set(misplaced(page, modules()))
    assert new == {"run/execute.py: listed under ### 0 core, its layer is ### 11 run"}
