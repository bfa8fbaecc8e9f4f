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
