"""The tests mirror the package: every test module is named for the harness module or package it tests."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_FOLDERS = ("tests/unit", "tests/integration", "tests/benchmarks")
# Areas that are no module of harness/, each tested as a whole.
CROSS_CUTTING = {
    "docs": "the documentation and its site",
    "layers": "the import graph's rules",
    "user_path": "docs/your-model.md end to end",
    "fast_path": "the GPU fast paths' numerics, whose passes records name by this file",
    "tests": "the layout of the tests themselves",
}


def package_areas(package: Path) -> set[str]:
    """The names of every module and package under `package`, at any depth."""
    names = {p.stem for p in package.rglob("*.py") if p.stem not in ("__init__", "__main__")}
    return names | {p.name for p in package.rglob("*") if p.is_dir() and (p / "__init__.py").is_file()}


def misnamed(stem: str, areas: set[str]) -> bool:
    """True unless the name after `test_` is an area, whole or followed by `_` and a topic."""
    rest = stem.removeprefix("test_")
    return not any(rest == area or rest.startswith(area + "_") for area in areas)


def holds_tests(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any((isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"))
               or (isinstance(node, ast.ClassDef) and node.name.startswith("Test")) for node in tree.body)


def test_every_test_module_is_named_for_a_module_of_the_package_or_a_cross_cutting_area():
    areas = package_areas(REPO / "harness") | set(CROSS_CUTTING)
    files = [p for folder in TEST_FOLDERS for p in sorted((REPO / folder).glob("test_*.py"))]
    assert files
    wrong = [str(p.relative_to(REPO)) for p in files if misnamed(p.stem, areas)]
    assert not wrong, ("name each test module test_<area>[_<topic>].py, <area> a module or package of harness/ "
                       f"(or one of {sorted(CROSS_CUTTING)}): {wrong}")


def test_modules_named_test_hold_tests():
    empty = [str(p.relative_to(REPO)) for folder in TEST_FOLDERS for p in (REPO / folder).glob("test_*.py")
             if not holds_tests(p)]
    assert not empty, f"helpers that hold no tests take a name without test_: {empty}"


def test_the_naming_rule_tells_an_area_from_a_word_that_only_starts_like_one():
    areas = {"suite", "data", "bn"}
    assert not misnamed("test_suite", areas) and not misnamed("test_data_decode", areas)
    assert misnamed("test_suites", areas) and misnamed("test_seeds_and_verdict", areas)
    assert misnamed("test_bnx", areas)
