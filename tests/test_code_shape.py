"""Size discipline in app code (issue 43 §5): no function over 80 lines, none in components/ over 60.

A builder that reads as a layout and a handler that does one thing fit in a screen; ruff's complexity rule (C901,
pyproject.toml) bounds the paths through each function. Tables of data are module-level constants, not functions,
so nothing is excepted here. Lengths count every line of the ``def`` (decorators excluded), docstring included.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_CODE = ("app.py", "backend", "components", "web")
LIMITS = {"components": 60}  # by top folder; the rest of app code: DEFAULT
DEFAULT = 80


def functions(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """Every function of ``path`` (nested ones too) with its length in lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [
        (f"{path.relative_to(root)}:{node.lineno} {node.name}", node.end_lineno - node.lineno + 1) for node in found
    ]


def app_files() -> list[Path]:
    return [p for name in APP_CODE for p in ([ROOT / name] if name.endswith(".py") else (ROOT / name).rglob("*.py"))]


def test_no_function_in_app_code_is_longer_than_its_limit():
    too_long = []
    for path in app_files():
        limit = LIMITS.get(path.relative_to(ROOT).parts[0], DEFAULT)
        too_long += [
            f"{where} is {length} lines (limit {limit})" for where, length in functions(path) if length > limit
        ]
    assert not too_long, "split these into named steps:\n" + "\n".join(sorted(too_long))


def test_the_measure_counts_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def outer():\n    def inner():\n        return 1\n\n    return inner\n", encoding="utf-8")
    assert functions(sample, tmp_path) == [("sample.py:1 outer", 5), ("sample.py:2 inner", 2)]
