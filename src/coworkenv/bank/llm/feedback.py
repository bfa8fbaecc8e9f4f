"""What the model is told when its spec fails: finding lines and failing-run transcript excerpts."""

from __future__ import annotations

import json

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.policy import Messages, Policy, TaskPolicy
from coworkenv.spec.models import TaskSpec
from coworkenv.verify.admission import Verification, play
from coworkenv.verify.findings import Finding
from coworkenv.verify.probes import PROBES

REFERENCE_KINDS = frozenset({"reference_failed", "reference_violation", "unsolvable", "nondeterministic"})
EXCERPT_MESSAGES = 12
EXCERPT_CHARS = 300


def finding_lines(findings: list[Finding]) -> list[str]:
    """``kind at where: evidence (hint: …)`` per finding, in the verifier's order."""
    return [f.line() for f in findings]


def _run_of(spec: TaskSpec, finding: Finding) -> tuple[str, Policy | TaskPolicy] | None:
    """(label, policy) of the run that shows a finding, if it is shown by a run at all."""
    if finding.kind == "probe_passed" and finding.location is not None and finding.location.key is not None:
        name = finding.location.key
        return (f"probe {name} (a wrong behaviour that should fail)", PROBES[name]) if name in PROBES else None
    if finding.kind in REFERENCE_KINDS:
        return "your reference solution", OracleTeacher()
    return None


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + " …"


def excerpt(messages: Messages) -> str:
    """The last turns of an episode, one line each (system prompt left out)."""
    lines = []
    for m in [m for m in messages if m.get("role") != "system"][-EXCERPT_MESSAGES:]:
        if m.get("content"):
            lines.append(f"{m['role']}: {_clip(str(m['content']))}")
        calls = m.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            fn = call.get("function", {})
            args = fn.get("arguments")
            args = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
            lines.append(f"{m['role']} calls {fn.get('name')}({_clip(args)})")
    return "\n".join(lines)


def transcripts(spec: TaskSpec | None, verification: Verification) -> list[str]:
    """One excerpt per distinct failing run behind the findings (replayed on a fresh environment)."""
    if spec is None:
        return []
    out, seen = [], set()
    for finding in verification.findings:
        run = _run_of(spec, finding)
        if run is None or run[0] in seen:
            continue
        seen.add(run[0])
        played = play(Environment(spec, seed=1), run[1])
        grade = played.grade
        head = f"## {run[0]}: score {grade.score:.3f}, ended {played.done_reason}"
        failed = [c.id for c in grade.checks if not c.passed]
        if failed:
            head += f", failed checks {', '.join(failed)}"
        out.append(f"{head}\n{excerpt(played.messages)}")
    return out
