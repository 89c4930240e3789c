"""The test suite's own shape (README, Tests): one folder per layer, no test module importing another (shared code
is in conftest.py fixtures and plain modules), and the order the workers take the files in."""

from __future__ import annotations

import ast
from pathlib import Path

from layers import BROWSER_LAYERS, TESTS, file_order, is_browser_file


def python_files():
    return sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts)


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every module `path` imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_of_the_tests_imports_a_test_module_or_a_conftest():
    offenders = [f"{path.relative_to(TESTS)}: {name}" for path in python_files() for name in sorted(imported_modules(path))
                 if name.startswith("test_") or name == "conftest"]
    assert offenders == [], "shared code belongs in a conftest.py fixture or a plain module (tests/support/)"


def test_browser_tests_are_in_the_browser_layers_and_nowhere_else():
    for path in TESTS.rglob("test_*.py"):
        assert path.name.endswith("_browser.py") == is_browser_file(path), path.relative_to(TESTS)


def test_browser_files_by_size_go_first_then_the_rest_then_long_files():
    engine, page, widgets, unit = (BROWSER_LAYERS[1] / "test_e_browser.py", BROWSER_LAYERS[0] / "test_p_browser.py",
                                   BROWSER_LAYERS[0] / "widgets" / "test_w_browser.py", TESTS / "unit" / "test_u.py")
    files = [(unit, 300, False), (page, 20, False), (engine, 4, True), (widgets, 30, False)]
    assert [path for path, *_ in sorted(files, key=lambda f: file_order(*f))] == [widgets, page, unit, engine]
