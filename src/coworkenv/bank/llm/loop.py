"""Generate → verify → repair: one environment from the model, in at most ``1 + rounds`` requests.

Round 0 sends the generate prompt. Each reply is parsed, given the background records of a realistic
workspace (:mod:`coworkenv.bank.llm.workspace`) and verified; when it fails, the
programmatic repairs are tried first (no request), and if the spec is still not admitted
the model gets the structured findings and the failing runs' transcripts of *its own*
spec, after its previous reply, for the next round. Every step goes into the audit trail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from coworkenv.bank.llm.client import LLMClient
from coworkenv.bank.llm.feedback import finding_lines, transcripts
from coworkenv.bank.llm.fixes import programmatic_repair
from coworkenv.bank.llm.parse import ReplyError, parse_reply
from coworkenv.bank.llm.prompts import generate_prompt, repair_prompt, schema_text
from coworkenv.bank.llm.scenario import Scenario
from coworkenv.bank.llm.workspace import with_background
from coworkenv.spec.io import content_id
from coworkenv.spec.models import TaskSpec
from coworkenv.synth.background import DEFAULT_WORKSPACE
from coworkenv.synth.composer import derive
from coworkenv.verify.admission import Verification, verify
from coworkenv.verify.findings import Finding


@dataclass
class Brief:
    """What one job asks the model for (all of it seeded and recorded)."""

    job: int
    seed: int
    scenario: Scenario
    capabilities: tuple[str, ...]
    avoid: tuple[str, ...] = ()
    workspace: str = DEFAULT_WORKSPACE
    """How much background the model's spec gets (:data:`coworkenv.synth.background.WORKSPACES`)."""


@dataclass
class Result:
    spec: TaskSpec | None
    verification: Verification
    rounds: int = 0
    reasons: list[str] = field(default_factory=list)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    trail: list[dict[str, object]] = field(default_factory=list)
    programmatic: bool = False
    """Admitted thanks to a programmatic repair of the last reply."""


def _judge(text: str, brief: Brief, model: str) -> tuple[TaskSpec | None, Verification]:
    """Parse and verify one reply; an unreadable reply is a ``schema`` finding."""
    overrides = {
        "capabilities": list(brief.capabilities),
        "provenance": {
            "source": "llm",
            "blueprint": brief.scenario.label,
            "seed": brief.seed,
            "generator_version": model,
        },
    }
    try:
        spec = parse_reply(text, overrides)
    except ReplyError as exc:
        findings = [
            Finding(kind="schema", where="reply", evidence=p, hint="reply with one complete TaskSpec")
            for p in exc.problems[:20]
        ]
        return None, Verification(admitted=False, findings=findings)
    try:
        spec = with_background(spec, derive(brief.seed, "background"), brief.workspace)
    except Exception as exc:  # model records reach corners no blueprint's did
        return spec, _unrunnable(f"no realistic workspace fits the records: {type(exc).__name__}: {exc}")
    spec = spec.model_copy(update={"id": "llm-" + content_id(spec)})
    return spec, _verify(spec)


def _unrunnable(evidence: str) -> Verification:
    hint = "use only the services, collections, fields and tools of the catalogue"
    return Verification(admitted=False, findings=[Finding(kind="schema", where="spec", evidence=evidence, hint=hint)])


def _verify(spec: TaskSpec) -> Verification:
    """The admission rule; a spec that crashes the verifier is a finding, never the end of the bank."""
    try:
        return verify(spec)
    except Exception as exc:  # model output reaches corners no hand-written spec did
        return _unrunnable(f"the spec cannot be run: {type(exc).__name__}: {exc}")


def _programmatic(
    spec: TaskSpec, verification: Verification, step: dict[str, object]
) -> tuple[TaskSpec, Verification] | None:
    repaired = programmatic_repair(spec, verification)
    if repaired is None:
        return None
    fixed, names = repaired
    fixed = fixed.model_copy(update={"id": "llm-" + content_id(fixed)})
    result = _verify(fixed)
    step["programmatic"] = {"fixes": names, "admitted": result.admitted, "findings": finding_lines(result.findings)}
    return fixed, result


def run_rounds(client: LLMClient, brief: Brief, max_rounds: int) -> Result:
    """The whole loop for one job; raises :class:`~coworkenv.bank.llm.client.EndpointError` if the endpoint dies."""
    schema = json.loads(schema_text())
    first = generate_prompt(brief.job, brief.scenario, brief.capabilities, brief.avoid, brief.workspace)
    messages = [{"role": "user", "content": first}]
    result = Result(spec=None, verification=Verification(admitted=False))
    for round_ in range(max_rounds + 1):
        reply = client.complete(messages, schema, seed=derive(brief.seed, brief.job, round_) % 2**31)
        result.requests += 1 + reply.retries
        result.prompt_tokens += reply.prompt_tokens
        result.completion_tokens += reply.completion_tokens
        step: dict[str, object] = {
            "round": round_,
            "prompt": messages[-1]["content"],
            "reply": reply.content,
            "retries": reply.retries,
            "tokens": {"prompt": reply.prompt_tokens, "completion": reply.completion_tokens},
        }
        result.trail.append(step)
        spec, verification = _judge(reply.content, brief, client.model)
        step["findings"] = finding_lines(verification.findings)
        result.rounds = round_
        final = (spec, verification)
        if not verification.admitted:
            result.reasons += verification.kinds
            if spec is not None and (fixed := _programmatic(spec, verification, step)):
                final = fixed
        if final[1].admitted:
            result.programmatic = final[0] is not spec
            step["decision"] = "admitted" + (" after programmatic repair" if result.programmatic else "")
            result.spec, result.verification = final
            break
        result.verification = verification
        if round_ == max_rounds:
            step["decision"] = "rejected: out of rounds"
            break
        step["decision"] = "repair"
        shown = transcripts(spec, verification)
        step["transcripts"] = shown
        ask = repair_prompt(brief.job, round_ + 1, brief.capabilities, finding_lines(verification.findings), shown)
        messages = [messages[0], {"role": "assistant", "content": reply.content}, {"role": "user", "content": ask}]
    result.verification.rounds = result.rounds
    result.verification.reasons = result.reasons
    return result
