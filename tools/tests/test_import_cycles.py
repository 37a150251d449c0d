"""The tools' modules import one another one way only: a cycle makes a module's meaning depend on which
one happens to be imported first. Imports under `if TYPE_CHECKING:` are for annotations and never run.

The subpackages are layers, from the bottom up: a module imports from its own subpackage and the ones below
it, never from one above, so reading needs nothing of the statistics, compare nothing of the history, and
only cli/ knows every other."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gpu_bench_tools"
LAYERS = ("reading", "stats", "compare", "plot", "history", "fleet", "report", "aa", "cli")


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST):
    """Every import node that runs: at module level, in functions, in classes; not under TYPE_CHECKING."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                graph[mod].update(a.name for a in node.names if a.name in files)
                continue
            base = here.split(".")[: len(here.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in files:
                    graph[mod].add(sub)
                elif target in files and target != mod:
                    graph[mod].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward_imports(graph: dict[str, set[str]], layers: tuple[str, ...] = LAYERS) -> list[str]:
    """'module -> module' for each import of a subpackage above the importer's own; the package's own
    __init__ (the version) belongs to no layer and anyone may import it."""
    def layer(mod: str) -> int:
        parts = mod.split(".")
        return -1 if len(parts) == 1 else layers.index(parts[1])

    return sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if layer(t) > layer(m))


def test_the_tools_have_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_check_finds_a_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("def f():\n    from .c import y\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import f\n"
                              "from . import a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_every_module_is_in_a_layer():
    """A module outside the layers, or a subpackage not named in LAYERS, would escape the check below."""
    outside = [m for m in import_graph() if m.count(".") < 2 and m != PACKAGE.name and m.split(".")[1] not in LAYERS]
    assert outside == []
    assert sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()) == sorted(LAYERS)


def test_no_module_imports_a_subpackage_above_its_own():
    assert upward_imports(import_graph()) == []


def test_the_check_finds_an_upward_import(tmp_path):
    pkg = tmp_path / "pkg"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("VERSION = 1\n")
    (pkg / "high" / "a.py").write_text("from ..low.b import x\nfrom .. import VERSION\n")
    (pkg / "low" / "b.py").write_text("x = 1\n\ndef f():\n    from ..high import a\n")
    assert upward_imports(import_graph(pkg), ("low", "high")) == ["pkg.low.b -> pkg.high.a"]
