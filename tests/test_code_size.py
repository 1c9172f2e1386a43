"""Size limits of the source (issue 26): no function over 100 lines, no module of the embedded engine over 450.

Functions: every ``def`` and ``async def`` (methods and nested functions included) of the ``.py`` files of the
package folders (:data:`test_layers.FOLDERS`), measured from its ``def`` line to its last line, docstring included
(decorators excluded). Modules: every ``.py`` file of ``engine/``, the embedded engine (the real-Batsim launcher,
``realbatsim/``, is not part of it), in lines. A failure lists each offender as ``file:line``, its name and length.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO_ROOT
from test_layers import FOLDERS

MAX_FUNCTION_LINES = 100
MAX_ENGINE_MODULE_LINES = 450
#: The embedded engine's folder (``batreplay.engine``).
ENGINE_FOLDER = FOLDERS["batreplay.engine"]


def function_lengths(path: Path) -> list[tuple[int, str, int]]:
    """``(line, qualified name, length in lines)`` of every function and method of the file ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                found.append((child.lineno, name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def package_files() -> list[Path]:
    """The ``.py`` files of every package folder."""
    return [path for folder in sorted(set(FOLDERS.values())) for path in sorted((REPO_ROOT / folder).glob("*.py"))]


def long_functions(paths: list[Path], limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``file:line: name (N lines)`` of every function of ``paths`` longer than ``limit`` lines."""
    return [f"{_shown(path)}:{line}: {name} ({length} lines)"
            for path in paths for line, name, length in function_lengths(path) if length > limit]


def long_modules(paths: list[Path], limit: int = MAX_ENGINE_MODULE_LINES) -> list[str]:
    """``file:1: N lines`` of every file of ``paths`` longer than ``limit`` lines."""
    lengths = [(path, len(path.read_text(encoding="utf-8").splitlines())) for path in paths]
    return [f"{_shown(path)}:1: {length} lines" for path, length in lengths if length > limit]


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def test_no_function_is_over_100_lines():
    offenders = long_functions(package_files())
    assert offenders == [], (f"functions over {MAX_FUNCTION_LINES} lines (split them by meaning):\n"
                             + "\n".join(offenders))


def test_no_module_of_the_embedded_engine_is_over_450_lines():
    offenders = long_modules(sorted((REPO_ROOT / ENGINE_FOLDER).glob("*.py")))
    assert offenders == [], (f"modules of {ENGINE_FOLDER}/ over {MAX_ENGINE_MODULE_LINES} lines (split them by "
                             "meaning):\n" + "\n".join(offenders))


def test_the_checks_see_long_functions_methods_and_modules(tmp_path):
    """The checks are not vacuous: a long method, a long nested async function and a long module are reported,
    with their line and length; a function of exactly the limit is not."""
    lines = ["def fits():"] + ["    x = 0"] * 99  # lines 1-100: exactly the limit
    lines += ["class Holder:", "    @staticmethod", "    def method():"] + ["        x = 0"] * 100  # def on 103
    lines += ["def outer():", "    async def inner():"] + ["        y = 0"] * 100  # lines 204-305
    path = tmp_path / "long.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert long_functions([path]) == [f"{path}:103: Holder.method (101 lines)",
                                      f"{path}:204: outer (102 lines)", f"{path}:205: outer.inner (101 lines)"]
    assert long_modules([path], limit=304) == [f"{path}:1: 305 lines"]
    assert long_modules([path], limit=305) == []
    assert ENGINE_FOLDER == "engine" and "realbatsim" in FOLDERS.values()
