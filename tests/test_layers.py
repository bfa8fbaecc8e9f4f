"""The stage packages form a one-way graph: every import of coworkenv.* points down the pipeline.

Every import counts, function-level ones included (an import hidden in a function still
ties the stages together); only ``if TYPE_CHECKING:`` blocks are skipped, since they create
no runtime edge (grading names the runtime's Workspace in annotations only).
"""

from __future__ import annotations

import ast
from pathlib import Path

import coworkenv

ROOT = Path(coworkenv.__file__).parent

# Lower rank = lower layer; a module may import its own stage, shared leaves and lower ranks.
ORDER: list[tuple[str, ...]] = [
    ("storage", "values", "patterns", "trajectory", "provenance", "cluster", "prompt_files"),  # shared leaves
    ("transcript",),
    ("expr",),  # the expression language that specs are written in
    ("spec",),
    ("capabilities",),
    ("services",),
    ("grading",),
    ("runtime",),
    ("agents",),
    ("verify",),
    ("synth",),
    ("bank",),
    ("interop",),
    ("rollout",),
    ("data",),
    ("runs",),
    ("train", "eval"),
    ("pipeline",),  # the main job, which the quickstart command runs
    ("commands", "gym"),
    ("cli", "__init__"),
    ("__main__",),  # python -m coworkenv: the command line
]
RANK = {name: rank for rank, names in enumerate(ORDER) for name in names}
SAME_RANK_OK: set[tuple[str, str]] = set()  # stages sharing a rank must not import each other


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _is_type_checking(node: ast.If) -> bool:
    return (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING") or (
        isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, package: list[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            found += [i for child in node.orelse for i in _imports(child, package)]
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            found.append((node.lineno, ".".join([*base, node.module] if node.module else base)))
        found += _imports(node, package)
    return found


def module_imports() -> dict[str, list[tuple[int, str]]]:
    graph = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ["coworkenv", *path.relative_to(ROOT).with_suffix("").parts]
        package = parts if path.name == "__init__.py" else parts[:-1]
        module = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        graph[module] = _imports(ast.parse(path.read_text()), package)
    return graph


def test_every_stage_is_ranked() -> None:
    stages = {_stage(m) for m in module_imports()}
    assert stages <= set(RANK), f"stages missing from ORDER: {sorted(stages - set(RANK))}"


def test_stages_import_only_downward() -> None:
    upward = []
    for module, imports in module_imports().items():
        src = _stage(module)
        for line, target in imports:
            if not target.startswith("coworkenv."):
                continue
            dst = _stage(target)
            if dst != src and RANK[dst] >= RANK[src] and (src, dst) not in SAME_RANK_OK:
                upward.append(f"{module}:{line} imports {target}")
    assert not upward, "imports against the stage order:\n" + "\n".join(upward)


def test_the_check_sees_function_level_imports() -> None:
    tree = ast.parse("def f():\n    from coworkenv.cli import app\n")
    assert _imports(tree, ["coworkenv", "spec"]) == [(2, "coworkenv.cli")]
    guarded = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from coworkenv.cli import app\n")
    assert _imports(guarded, ["coworkenv", "spec"]) == [(1, "typing")]


def test_no_function_level_import_of_coworkenv_outside_the_cli() -> None:
    """Inside the package an import in a function would only hide an edge; the CLI defers its
    stages' imports so ``coworkenv --help`` starts fast."""
    hidden = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("commands", "cli.py"):
            continue
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                hidden += [
                    f"{rel}:{node.lineno}"
                    for node in ast.walk(fn)
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("coworkenv")
                ]
    assert not hidden, "function-level imports of coworkenv: " + ", ".join(hidden)
