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


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _runtime_imports(tree: ast.AST, annotations: bool = False):
    """Every import node that runs: at module level, in functions, in classes; not under TYPE_CHECKING
    unless `annotations`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking(node) and not annotations:
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(package: Path = PACKAGE, annotations: bool = False) -> dict[str, set[str]]:
    """Module -> the package's modules it imports; with `annotations`, also those under TYPE_CHECKING."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _runtime_imports(ast.parse(path.read_text()), annotations):
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


def deferred_imports(package: Path, subpackage: str) -> list[str]:
    """'module:line' for each import of one of the package's own modules inside a function or under
    TYPE_CHECKING, in `subpackage`: the ways a cycle hides from the check above."""
    found = []
    for path in sorted((package / subpackage).rglob("*.py")):
        def visit(node: ast.AST, deferred: bool) -> None:
            if isinstance(node, ast.ImportFrom):
                own = node.level > 0 or (node.module or "").startswith(package.name)
            else:
                own = isinstance(node, ast.Import) and any(a.name.startswith(package.name) for a in node.names)
            if deferred and own:
                found.append(f"{_module_name(path, package)}:{node.lineno}")
            inner = deferred or _is_type_checking(node) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for child in ast.iter_child_nodes(node):
                visit(child, inner)

        visit(ast.parse(path.read_text()), False)
    return found


def test_reading_imports_its_own_modules_at_the_top_only():
    """reading/ is the bottom layer: the modules that read its record (results.py) import it, and the record
    imports none of them. An import put off into a function, or kept for annotations, is how a cycle hides."""
    assert deferred_imports(PACKAGE, "reading") == []
    reading = f"{PACKAGE.name}.reading"
    assert cycles({m: t for m, t in import_graph(annotations=True).items() if m.startswith(reading)}) == []


def test_the_check_finds_a_deferred_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "low" / "__init__.py"):
        init.write_text("")
    (pkg / "low" / "record.py").write_text("import math\n\n\ndef f():\n    import numpy\n    from .rules import g\n")
    (pkg / "low" / "rules.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                          "    from .record import f\n")
    assert deferred_imports(pkg, "low") == ["pkg.low.record:6", "pkg.low.rules:3"]
    assert cycles(import_graph(pkg)) == []
    assert cycles(import_graph(pkg, annotations=True)) == [["pkg.low.record", "pkg.low.rules"]]



MOST_LINES = 450


def test_every_module_is_a_room_a_reader_can_hold():
    """A module of more than MOST_LINES lines does several things; one named after its subpackage
    (compare/compare.py) says nothing its path does not."""
    modules = sorted(PACKAGE.rglob("*.py"))
    lines = {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines()) for p in modules}
    assert {m: n for m, n in lines.items() if n > MOST_LINES} == {}
    assert [p.relative_to(PACKAGE).as_posix() for p in modules if p.stem == p.parent.name] == []


def test_every_cpp_source_is_a_room_a_reader_can_hold():
    """The same bound for gpu_bench's C++: the families (benchmarks/) and the harness, main.cpp a thin runner."""
    root = PACKAGE.parent.parent
    sources = [p for d in ("benchmarks", "harness") for p in sorted((root / d).rglob("*"))
               if p.suffix in (".cpp", ".hpp", ".cu", ".cuh")]
    assert sources
    lines = {p.relative_to(root).as_posix(): len(p.read_text().splitlines()) for p in sources}
    assert {f: n for f, n in lines.items() if n > MOST_LINES} == {}
    assert lines["benchmarks/main.cpp"] < 150
