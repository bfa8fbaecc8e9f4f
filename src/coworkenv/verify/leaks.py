"""Static admission checks on what the request gives away.

No hidden fact may already be in the opening request or context, in any form (values are
compared normalised), and no answer check may ask only for values the prompt states.
"""

from __future__ import annotations

from coworkenv.expr import format_value
from coworkenv.grading.answers import prompt_of
from coworkenv.spec.checks import AnswerCheck
from coworkenv.spec.models import TaskSpec
from coworkenv.values import clock, forms, kinds_of, mentioned, mentions
from coworkenv.verify.findings import Finding, Location


def value_texts(value: object) -> list[str]:
    """The texts a value is written as (none for an empty one)."""
    if isinstance(value, list):
        return [t for v in value for t in value_texts(v)]
    text = format_value(value).strip()
    return [text] if text else []


def leak_findings(spec: TaskSpec) -> list[Finding]:
    """Hidden facts the opening request or context already states, in any form.

    Values are compared normalised ("after 2pm" leaks "14:00", "$1,200" leaks 1200,
    "tomorrow" leaks the date after the workspace's today, "Ortiz, Sam" leaks
    sam.ortiz@corp.com), not only as exact strings.
    """
    out: list[Finding] = []
    facts = spec.user.hidden_facts
    if not facts:
        return out
    visible = f"{spec.user.opening}\n{spec.context}"
    wanted = kinds_of([alt for f in facts for alt in forms(f.value)])
    keys = mentions(visible, clock(spec.context), wanted) if wanted else set()
    for fact in facts:
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        leaked = next((v for v in values if mentioned(v, visible, keys)), None)
        if leaked is not None:
            out.append(
                Finding(
                    kind="leaked_fact",
                    where=f"user.hidden_facts[{fact.slot}]",
                    location=Location.hidden_fact(fact.slot),
                    evidence=f"{format_value(leaked)!r} is already in the opening request or context",
                    hint="rephrase the opening so it does not state the hidden value in any form",
                )
            )
    return out


def answer_findings(spec: TaskSpec) -> list[Finding]:
    """Answer checks whose values the prompt (request, persona, context) already states entirely.

    Such a check cannot tell a report from a reply that names what it was told, so it earns
    weight for no work. Part of admission, not of ``static_findings``: an imported
    evaluation task (Claw-Eval) is graded as its source grades it, not judged by design.
    """
    prompt = prompt_of(spec)
    out = []
    for i, c in enumerate(spec.checks):
        if not isinstance(c, AnswerCheck):
            continue
        given = c.given(prompt)
        if len(given) == len(c.items()):
            out.append(
                Finding(
                    kind="answer_in_prompt",
                    where=f"checks[{i}]",
                    location=Location.check(i, c.id),
                    evidence=f"answer check {c.id!r} asks only for {', '.join(map(format_value, given))}, which the "
                    "request, persona or context already states: a reply that restates the prompt satisfies it",
                    hint="ask the report for something the agent must find out with the tools, or drop the check",
                )
            )
    return out
