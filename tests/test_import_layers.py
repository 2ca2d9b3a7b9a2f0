"""No import circle in app code (issue 43 Must 4): every ``import`` of app.py, backend/, components/ and web/,
at the top of a module or deferred inside a function, is an arrow from the module to the one it imports; the
strongly connected components of that graph (Tarjan) must all be single modules.

An import under ``if TYPE_CHECKING:`` is not an arrow: it never runs, so it cannot load a module half-initialised,
and the types of an aggregate and of the services it holds name each other by nature (``AppContext`` holds the
``ModelRegistry`` whose methods take an ``AppContext``). docs/decisions.md ("Import circles") says why. Modules
named by a string and loaded with ``importlib`` (``BENCHMARK_MODULES``, a spec's ``compare``) are plug-ins, not
arrows either.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_CODE = ("app.py", "backend", "components", "web")


def module_files(root: Path, parts: tuple[str, ...] = APP_CODE) -> dict[str, Path]:
    """Module name -> file, for every .py file of ``parts`` under ``root`` (a package is its ``__init__``)."""
    files: list[Path] = []
    for part in parts:
        path = root / part
        files += [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    modules = {}
    for file in files:
        names = list(file.relative_to(root).with_suffix("").parts)
        if names[-1] == "__init__":
            names.pop()
        modules[".".join(names)] = file
    return modules


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).split(".")[-1] == "TYPE_CHECKING":
            for statement in node.body:
                inside.update(id(n) for n in ast.walk(statement))
    return inside


def _imported(node: ast.Import | ast.ImportFrom, package: str, modules: dict[str, Path]) -> list[str]:
    """The names ``node`` imports, as modules: ``from p import m`` is ``p.m`` when that is a module, else ``p``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parents = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join([*parents, base] if base else parents)
    submodules = [f"{base}.{alias.name}" for alias in node.names]
    found = [name for name in submodules if name in modules]
    return found if len(found) == len(submodules) else [*found, base]


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The app module ``name`` is or lies in (``backend.x.y`` when ``backend.x.y.z`` is no module), or None."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the app modules it imports at run time (top-level and deferred; not under TYPE_CHECKING)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                for target in _imported(node, package, modules):
                    owner = _owner(target, modules)
                    if owner is not None and owner != name:
                        graph[name].add(owner)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted.

    >>> circles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    >>> circles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def test_app_code_has_no_import_circle():
    modules = module_files(ROOT)
    assert len(modules) > 200  # the whole app is read (274 modules on 2026-12-04), not an empty folder
    assert circles(import_graph(modules)) == []


def test_deferred_imports_count_and_type_checking_imports_do_not(tmp_path):
    """The checker on a small made-up package: a circle closed by an import inside a function is found, through
    ``from . import`` too; one closed only under ``if TYPE_CHECKING:`` is not."""
    pkg = tmp_path / "backend"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from backend.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from backend import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from backend.d import D\n")
    (pkg / "d.py").write_text("from backend.c import TYPE_CHECKING as D\n")
    (pkg / "sub" / "e.py").write_text("from . import f\n")
    (pkg / "sub" / "f.py").write_text("def g():\n    from .e import f\n")
    graph = import_graph(module_files(tmp_path, ("backend",)))
    assert graph["backend.c"] == set() and graph["backend.d"] == {"backend.c"}
    assert circles(graph) == [["backend.a", "backend.b"], ["backend.sub.e", "backend.sub.f"]]
