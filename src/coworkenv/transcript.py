"""Readable transcripts and grade tables for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from coworkenv.trajectory import Trajectory

_STYLE = {"system": "dim", "user": "cyan", "assistant": "green", "tool": "yellow"}


def print_transcript(console: Console, traj: Trajectory, width: int = 400) -> None:
    for msg in traj.messages:
        role = msg.get("role", "?")
        style = _STYLE.get(role, "")
        content = (msg.get("content") or "").strip()
        label = f"tool {msg.get('name', '')}" if role == "tool" else role
        if content:
            short = content if len(content) <= width else content[:width] + " …"
            console.print(f"[{style}][{label}][/{style}] {short}", highlight=False, markup=True, soft_wrap=True)
        for call in msg.get("tool_calls") or []:
            fn = call.get("function", {})
            console.print(
                f"[{style}][{label} → call][/{style}] {fn.get('name')}({fn.get('arguments')})", highlight=False
            )


def print_grade(console: Console, traj: Trajectory) -> None:
    grade = traj.grade
    if grade is None:
        console.print("[red]not graded[/red]")
        return
    table = Table(title=f"{traj.spec_id}: score {grade.score:.3f} ({'pass' if grade.passed else 'fail'})")
    for col in ("check", "kind", "weight", "ok", "first step", "detail"):
        table.add_column(col)
    for c in grade.checks:
        table.add_row(
            c.id,
            c.kind,
            f"{c.weight:g}",
            "✓" if c.passed else "✗",
            "" if c.first_step is None else str(c.first_step),
            c.detail,
        )
    console.print(table)
    console.print(
        f"completion {grade.completion:.3f} · robustness {grade.robustness:.3f} · safety {grade.safety:.0f} · "
        f"ended: {traj.done_reason}"
    )
    for v in grade.violations:
        console.print(f"[red]policy violation[/red] at step {v.step}: {v.policy} ({v.tool}) — {v.description}")
