"""The judge rubrics of a Claw-Eval ``grader.py``, read with :mod:`ast` only.

A grader is code, and code from a task folder is data here: it is parsed, never imported or
run. What is read are assignments of a string, or a list of strings, to a name at module or
class level (``MUST_ASK``, ``CLARIFICATION_RUBRIC``, ``FINAL_ANSWER_RUBRIC``, ``DOMAIN`` ...).
Anything else the grader holds (methods, computed values) is named in the notes, so that a
report says what was not read instead of failing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

Constant = str | list[str]


@dataclass
class GraderText:
    """The string constants of a grader (``constants``) and what in it was not read (``notes``)."""

    constants: dict[str, Constant] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _value(node: ast.expr) -> Constant | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.List | ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _read(body: list[ast.stmt], where: str, found: GraderText) -> None:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            _read(stmt.body, f"class {stmt.name}", found)
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        target, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, _value(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, _value(stmt.value)
        if target is not None and value is not None:
            found.constants[target] = value
            continue
        label = target or type(stmt).__name__
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            label = f"def {stmt.name}"
        found.notes.append(f"line {stmt.lineno}: {where}: {label} is not a string constant; not read")


def read_grader(path: Path) -> GraderText:
    """The string constants of ``path`` (empty, with a note, when it is unreadable or not Python)."""
    found = GraderText()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        found.notes.append(f"not readable Python: {exc}")
        return found
    _read(tree.body, "module", found)
    return found


RUBRICS = {
    "clarification": ("CLARIFICATION_RUBRIC", "MUST_ASK"),
    "final_answer": ("FINAL_ANSWER_RUBRIC",),
    "trajectory": ("TRAJECTORY_RUBRIC",),
    "numerical": ("NUMERICAL_RUBRIC",),
    "content": ("CONTENT_RUBRIC",),
}
"""Which grader constants judge a component, by the start of the component's name."""


def component_rubric(name: str, grader: GraderText) -> str:
    """The rubric of the judged component ``name`` from the grader's constants ("" when none applies): the
    rubric text, then the questions the agent must ask, in the grader's domain."""
    keys = next((k for prefix, k in RUBRICS.items() if name.startswith(prefix)), ())
    parts = []
    for key in keys:
        value = grader.constants.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(value.strip())
        elif isinstance(value, list) and value:
            parts.append("The assistant must ask about:\n" + "\n".join(f"- {v}" for v in value))
    domain = grader.constants.get("DOMAIN")
    if parts and isinstance(domain, str):
        parts.insert(0, f"Domain: {domain}")
    return "\n\n".join(parts)
