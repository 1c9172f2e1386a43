"""Functions of the workload layer stay readable (issue 26, item 5): none is longer than 100 lines, docstring
included (``swf_to_workload`` was 304 lines before it was split by meaning: options, job fields, drops, report,
converted jobs)."""

from __future__ import annotations

import ast

from conftest import REPO_ROOT

MAX_LINES = 100


def test_no_function_of_the_workload_layer_is_over_100_lines():
    long = []
    for path in sorted((REPO_ROOT / "workloads").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.name}:{node.lineno} {node.name}: {lines} lines")
    assert long == []
