"""Synthesis, verification and oracle rollouts must not pull in the heavy optional backends."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "torch",
    "transformers",
    "trl",
    "peft",
    "ray",
    "openai",
    "matplotlib",
    "fastapi",
    "mcp",
    "gymnasium",
    "uvicorn",
    "verifiers",
)
CORE = (
    "coworkenv",
    "coworkenv.cli",
    "coworkenv.runtime",
    "coworkenv.bank.store",
    "coworkenv.verify",
    "coworkenv.rollout",
    "coworkenv.data.sft",
    "coworkenv.data.rl",
    "coworkenv.pipeline",
    "coworkenv.interop.env",
    "coworkenv.interop.client",
    "coworkenv.interop.catalog",
)


def test_core_modules_import_no_heavy_backend() -> None:
    code = (
        f"import importlib, sys\nfor m in {CORE!r}: importlib.import_module(m)\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_every_lazy_import_of_a_heavy_backend_says_why() -> None:
    """A function-level import of an optional backend carries a ``# lazy:`` reason on the line above its group."""
    import ast
    from pathlib import Path

    import coworkenv

    missing = []
    for path in sorted(Path(coworkenv.__file__).parent.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for func in (n for n in ast.walk(ast.parse("\n".join(lines))) if isinstance(n, ast.FunctionDef)):
            for node in ast.walk(func):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                if not any(n.split(".")[0] in (*HEAVY, "tokenizers", "datasets", "anyio") for n in names):
                    continue
                above = node.lineno - 2
                while above >= 0 and lines[above].strip().startswith(("import ", "from ")):
                    above -= 1
                if not (lines[above].strip().startswith("# lazy:") or lines[above].strip() == "try:"):
                    missing.append(f"{path.name}:{node.lineno}")
    assert missing == []
