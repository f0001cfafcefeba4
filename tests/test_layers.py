"""The layers of the code, checked: import-linter's contract (pyproject.toml), no import circle, and no
private name used from another module.

All three read the installed layout (``attnquiz``, ``attnquiz.engine``, ...), built as a tree of
links by `bench.layout.installed_layout`, as mypy does. Each is also shown to fail: on a copy of the
code with one deliberately upward import (a circle through the engine's reader) and one private
name imported across modules.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.layout import installed_layout

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

# Run in a child: grimp builds the graph of the package it finds first on the path, which must be the
# tree given, not the editable install of this process.
_GRAPH = """
import json, sys
import grimp
graph = grimp.build_graph("attnquiz", cache_dir=None)
edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
json.dump(edges, sys.stdout)
"""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}


def _import_graph(tree: Path) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _GRAPH],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=_env(tree),
        cwd=tree,
    )
    assert result.returncode == 0, result.stderr
    graph: dict[str, list[str]] = json.loads(result.stdout)
    return graph


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected components of more than one module
    (Tarjan's algorithm, iterative: a long chain of imports must not exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _modules(tree: Path) -> dict[str, Path]:
    """Every module of the tree by its dotted name (packages by their ``__init__``)."""
    out: dict[str, Path] = {}
    package = tree / "attnquiz"
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(tree).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(tree: Path) -> list[str]:
    """Every use of another module's private name: ``from x import _name`` and ``module._name``
    where ``module`` names one of the package's modules, as ``file:line: what``."""
    modules = _modules(tree)
    problems: list[str] = []
    for name, path in modules.items():
        tree_ast = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        bound: dict[str, str] = {}  # local name -> module of the package it stands for
        for node in ast.walk(tree_ast):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                if not base.startswith("attnquiz"):
                    continue
                for alias in node.names:
                    if _private(alias.name) and base != name:
                        problems.append(f"{path.name}:{node.lineno}: from {base} import {alias.name}")
                    if f"{base}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("attnquiz") and alias.asname:
                        bound[alias.asname] = alias.name
        for node in ast.walk(tree_ast):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and bound[node.value.id] != name
                and _private(node.attr)
            ):
                problems.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return problems


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_layout(tmp_path_factory.mktemp("layers") / "tree")


@pytest.fixture(scope="module")
def broken_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the code with an upward import (the reader, at the bottom, imports the grader above
    it, which imports the reader: a circle too), the engine importing rich, and a private name
    imported from another module."""
    dest = tmp_path_factory.mktemp("broken") / "tree"
    package = dest / "attnquiz"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "cli", package, ignore=ignore)
    shutil.copytree(ROOT / "engine", package / "engine", ignore=ignore)
    shutil.copytree(ROOT / "questions", package / "questions", ignore=ignore)
    reader = package / "engine" / "answers" / "parse.py"
    reader.write_text(
        reader.read_text(encoding="utf-8") + "\nfrom attnquiz.engine.grading import grade  # noqa: E402\n",
        encoding="utf-8",
    )
    drawing = package / "engine" / "markup" / "tex.py"
    drawing.write_text(
        drawing.read_text(encoding="utf-8") + "\nimport rich  # noqa: E402\n", encoding="utf-8"
    )
    writer = package / "engine" / "export" / "lms" / "moodle.py"
    writer.write_text(
        writer.read_text(encoding="utf-8")
        + "\nfrom attnquiz.engine.export.lms.qti import _identifier  # noqa\n",
        encoding="utf-8",
    )
    return dest


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=_env(tree),
        cwd=tree,
    )


def test_the_layering_contract_is_kept(tree: Path) -> None:
    result = _lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_import_graph_has_no_circle(tree: Path) -> None:
    graph = _import_graph(tree)
    assert "attnquiz.engine.export.lms.model" in graph  # the whole installed layout was read
    assert "attnquiz.engine.grading.grade" in graph["attnquiz.engine.check.parts"]
    assert circles(graph) == []


def test_no_private_name_is_used_from_another_module(tree: Path) -> None:
    assert private_uses(tree) == []


def test_an_upward_import_breaks_the_contract(broken_tree: Path) -> None:
    result = _lint_imports(broken_tree)
    assert result.returncode != 0
    assert "attnquiz.engine.answers.parse -> attnquiz.engine.grading.grade" in result.stdout
    assert "attnquiz.engine.markup.tex -> rich" in result.stdout
    assert "attnquiz.engine.export.lms.moodle -> attnquiz.engine.export.lms.qti" in result.stdout
    assert result.stdout.count("BROKEN") == 3, result.stdout  # the layers, the LMS writers, rich


def test_the_circle_and_the_private_import_are_found(broken_tree: Path) -> None:
    found = circles(_import_graph(broken_tree))
    assert any({"attnquiz.engine.answers.parse", "attnquiz.engine.grading.grade"} <= set(c) for c in found), (
        found
    )
    problems = private_uses(broken_tree)
    assert len(problems) == 1, problems
    assert problems[0].startswith("moodle.py:")
    assert problems[0].endswith(": from attnquiz.engine.export.lms.qti import _identifier")


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": ["b"], "b": []}, []),
        ({"a": ["b"], "b": ["a"]}, [["a", "b"]]),
        ({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}, [["a", "b", "c"]]),
        ({"a": ["a"]}, []),
    ],
)
def test_circles_are_found_in_small_graphs(graph: dict[str, list[str]], expected: list[list[str]]) -> None:
    assert circles(graph) == expected
