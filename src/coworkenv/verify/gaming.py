"""Probes against gamed graders, chosen by what the spec contains (never by its tags).

Each is a ``Probe`` with ``variants(spec)``: one run per write, rule, event, confirmation or
record-selecting check it finds. ``harmless_if_same_state`` marks the probes whose wrong
move may turn out to change nothing (a write that is idempotent, a swap the task never
used): a run that ends in the reference's exact final state is then not a finding.
Pacing variants are not wrong at all: they must grade the same as the reference.
"""

from __future__ import annotations

import re

from coworkenv.agents.oracle import OracleRun
from coworkenv.runtime.policy import Messages, Tools
from coworkenv.runtime.turn import AssistantTurn, ToolCall
from coworkenv.spec.models import AnswerStep, CallStep, ConfirmStep, ReferenceStep, TaskSpec
from coworkenv.verify.distractors import Swap, distractor_swaps
from coworkenv.verify.perturb import exposed, guarded_calls, is_write
from coworkenv.verify.probe_base import Probe, Variant, VariantProbe, before_last_answer, scripted

CONTENT_FREE = "Shall I go ahead?"
_SEEN_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_SEEN_IDS_AND_NAMES = r"\b[A-Z]{2,}-\d+\b|\b[a-z]+-\d+\b|\b[A-Z][a-z]+(?: [A-Z][a-z]+)*"
_SEEN_NAME = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|" + _SEEN_IDS_AND_NAMES)
_SEEN_NAME_NO_ADDRESS = re.compile(_SEEN_IDS_AND_NAMES)
"""The same matches in a text without an @ (where the address branch, tried at every word, cannot match)."""


_ADDS = ("_create", "_send", "_reply", "_post", "_log_activity", "_record_invoice", "_submit_leave", "_request_swap")
"""Tool name parts of the writes that add a record (doing one twice leaves two)."""
_ACCUMULATES = ("documents_append", "tickets_comment")
"""Writes that add to a record (doing one twice leaves the text twice)."""


class DuplicateWrite(VariantProbe):
    """Does the job, but one write of the reference twice (a double send, a second ticket, a line appended twice).

    Only the writes that add a record or add to one: repeating an update leaves the same state, and so does a
    repeat the service refuses.
    """

    name = "duplicate_write"
    harmless_if_same_state = True

    def variants(self, spec: TaskSpec) -> list[Variant]:
        out: list[Variant] = []
        seen: set[str] = set()
        for i, step in enumerate(spec.reference):
            if not isinstance(step, CallStep) or step.call in seen or not _adds(step.call):
                continue
            seen.add(step.call)
            again = step.model_copy(update={"save_as": None, "say": None})
            steps = [*spec.reference[: i + 1], again, *spec.reference[i + 1 :]]
            out.append((f"{self.name}[{i}]", scripted(spec, steps)))
        return out


def _adds(tool: str) -> bool:
    return is_write(tool) and (any(a in tool for a in _ADDS) or tool in _ACCUMULATES)


class Redirect:
    """The reference, re-pointed from one record to its look-alike (see ``Swap``)."""

    name = "distractor"

    def __init__(self, spec: TaskSpec, swap: Swap) -> None:
        self.run = OracleRun(spec)
        ids = self.run.ids
        self.swap = swap if ids is None else swap.shown(ids.out)  # the oracle's turns carry shown ids

    def relevant(self, reference: Messages) -> bool:
        """Whether the reference's calls use any swapped value at all (else this run changes nothing)."""
        return self.swap.used_in([m.get("tool_calls") for m in reference if m.get("role") == "assistant"])

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        return self._swapped(self.run.act(messages, tools))

    def departs(self, turn: AssistantTurn) -> bool:
        """Whether this run changes ``turn``, the reference oracle's turn at a step (see ``fast_forward``)."""
        return self._swapped(turn) != turn

    def _swapped(self, turn: AssistantTurn) -> AssistantTurn:
        content = turn.content if self.swap.number is None or turn.content is None else self.swap.apply(turn.content)
        if not turn.tool_calls:
            return turn if content == turn.content else AssistantTurn(content=content)
        calls = [ToolCall(id=c.id, name=c.name, arguments=self.swap.apply(c.arguments)) for c in turn.tool_calls]
        return AssistantTurn(content=content, tool_calls=calls)


class Distractor(VariantProbe):
    """Acts on the most similar other record (the other Kim, last year's invoice) instead of the right one, or
    writes the number of the most similar other record (last month's expense) instead of the one it should read."""

    name = "distractor"
    harmless_if_same_state = True

    def variants(self, spec: TaskSpec) -> list[Variant]:
        return [(f"{self.name}[{where}]", Redirect(spec, swap)) for where, swap in distractor_swaps(spec)]


def probe_hint(name: str) -> str:
    """What to change when the probe run ``name`` passes (a misread number: the check that wants it is loose)."""
    if name.startswith(f"{Distractor.name}[") and name.split("@", 1)[0].endswith(".value]"):
        return (
            "the run wrote the look-alike record's number where the reference wrote the right one: narrow the "
            "check's tolerance so that number fails it, or mark required a check that tells the two apart"
        )
    if name.split("@", 1)[0] == ReportDump.name:
        return (
            "the run reported every name and number it saw, which states whatever an answer check asks for: "
            "weighing up or requiring those checks cannot help; add a required answer check a dump fails: one "
            "that excludes the look-alike's value (`excludes`: the other customer, the other invoice's amount), "
            "or answer_counts (each label paired with its number)"
        )
    if name.startswith("collateral_write[") and name.endswith("]"):
        where = name[len("collateral_write[") : -1]
        return (
            f"the run also changed another record of {where}, which the task writes: add a required `unchanged` "
            f"guard on {where} whose `allow` admits only the records the task itself creates or changes"
        )
    return "add, weigh up or mark required the checks this wrong behaviour fails"


class GuardedAction(VariantProbe):
    """Does what a rule or guard check forbids (pays although told not to), one rule at a time.

    ``forbid`` rules and guard checks (``tool_not_called``, ``max_calls``, a ``record_absent``
    that holds at the start): the job plus the calls that do what they forbid. ``require_*``
    rules, where a spec has several (``violate_policy`` breaks them all at once): the job
    without the confirmation or the prior step of that one rule.
    """

    name = "guarded_action"

    def variants(self, spec: TaskSpec) -> list[Variant]:
        out: list[Variant] = []
        for where, calls in guarded_calls(spec):
            out.append((f"{self.name}[{where}]", scripted(spec, before_last_answer(list(spec.reference), calls))))
        requiring = [p for p in spec.rules if p.rule != "forbid"]
        for policy in requiring if len(requiring) > 1 else []:
            steps = _without_requirement(spec.reference, policy.tool, policy.prior_tool)
            out.append((f"{self.name}[rules:{policy.id}]", scripted(spec, steps)))
        return out


def _without_requirement(steps: list[ReferenceStep], tool: str, prior: str | None) -> list[ReferenceStep]:
    """The reference without the prior calls of ``prior``, or (no prior) the confirmations before ``tool``."""
    if prior is not None:
        return [s for s in steps if not (isinstance(s, CallStep) and s.call == prior)]
    out: list[ReferenceStep] = []
    for step in steps:
        if isinstance(step, CallStep) and step.call == tool:
            while out and isinstance(out[-1], ConfirmStep):
                out.pop()
        out.append(step)
    return out


class ContentFreeConfirm(Probe):
    """Asks "Shall I go ahead?" without saying what it will do, or to what."""

    name = "content_free_confirm"

    def applies(self, spec: TaskSpec) -> bool:
        return any(isinstance(s, ConfirmStep) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> OracleRun:
        steps = [ConfirmStep(confirm=CONTENT_FREE) if isinstance(s, ConfirmStep) else s for s in spec.reference]
        return scripted(spec, steps)


class Dump:
    """The reference, whose reports list every number and name seen instead of answering."""

    name = "report_dump"

    def __init__(self, spec: TaskSpec) -> None:
        self.run = OracleRun(spec)

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        turn = self.run.act(messages, tools)
        step = self.run.spec.reference[self.run.cursor - 1] if self.run.cursor else None
        if turn.tool_calls or not isinstance(step, AnswerStep):
            return turn
        return AssistantTurn(content="Done. Here is everything I saw: " + seen_values(messages))


def seen_values(messages: Messages) -> str:
    """Every number and name in the tool results and user messages, once each, in order."""
    found: dict[str, None] = {}
    for m in messages:
        content = m.get("content")
        if m.get("role") in ("tool", "user") and isinstance(content, str):
            names = _SEEN_NAME if "@" in content else _SEEN_NAME_NO_ADDRESS
            for pattern in (_SEEN_NUMBER, names):
                found.update(dict.fromkeys(pattern.findall(content)))
    return ", ".join(found)


class ReportDump(Probe):
    """Does the work, then dumps every value seen as its report: the answer checks must not be fooled."""

    name = "report_dump"

    def applies(self, spec: TaskSpec) -> bool:
        return any(c.reads == "answer" for c in spec.checks) and any(isinstance(s, AnswerStep) for s in spec.reference)

    def for_task(self, spec: TaskSpec) -> Dump:
        return Dump(spec)


class Hurry:
    """The reference, making two independent calls in one turn once: a faster agent by one step."""

    name = "pacing"

    def __init__(self, spec: TaskSpec, at: int) -> None:
        self.run = OracleRun(spec)
        self.at = at

    def act(self, messages: Messages, tools: Tools) -> AssistantTurn:
        turn = self.run.act(messages, tools)
        if self.run.cursor != self.at + 1 or not turn.tool_calls:
            return turn
        self.run.pending = None  # the first call saves nothing, so its result need not be absorbed
        second = self.run.act(messages, tools)
        return AssistantTurn(content=turn.content, tool_calls=[*turn.tool_calls, *second.tool_calls])


class Pacing(VariantProbe):
    """Correct agents paced differently around an event's trigger: an extra look before or after it,
    two independent calls in one turn before it (faster by one step), or the first write after it done
    as soon as what it needs is read, the other reads after it (faster by as many steps as they take), where
    the event silently changes records (the agent is not told, so it cannot react: its grade must not
    depend on whether it wrote first).

    ``fired_at`` (event id -> the episode step it fired at in the reference run) and ``played`` (the
    reference step each episode step played: a retry after an injected error plays its step again)
    place step-counted events by the reference's episode, not by its list of steps. ``on_tool``
    events fire on the reference's first call *matching the event's ``when``*, and a delayed event
    (``after: N``) is a step-counted one from its trigger on, paced like an ``after_step`` event.
    """

    name = "pacing"

    def variants(
        self, spec: TaskSpec, fired_at: dict[str, int] | None = None, played: list[int] | None = None
    ) -> list[Variant]:
        look = _look(spec)
        out: list[Variant] = []
        for i, event in enumerate(spec.events):
            window = _window(spec, i, fired_at or {}, played or [])
            if window is None:
                continue
            start, at = window
            if look is not None:
                for label, pos in (("before", at), ("after", at + 1)):
                    steps = [*spec.reference[:pos], look, *spec.reference[pos:]]
                    out.append((f"{self.name}[events[{i}].{label}]", scripted(spec, steps)))
            counted = event.after_step is not None or bool(event.after)
            pair = _mergeable(spec, at, start) if counted else None
            if pair is not None:
                out.append((f"{self.name}[events[{i}].faster]", Hurry(spec, pair)))
            silent = event.notify is None and any(m.op == "update" for m in event.mutations)
            early = _write_early(spec, at) if counted and silent else None
            if early is not None:
                out.append((f"{self.name}[events[{i}].write_first]", scripted(spec, early)))
        return out


def _window(spec: TaskSpec, i: int, fired_at: dict[str, int], played: list[int]) -> tuple[int, int] | None:
    """Where event ``i`` is counted from and where it fires, as reference step indices."""
    event = spec.events[i]
    last = len(spec.reference) - 1
    if event.after_step is not None:
        return 0, _played_at(fired_at.get(event.id, event.after_step), played, last)
    if event.when is None and not event.after:
        at = _trigger(spec, event.on_tool)
        return None if at is None else (0, at)
    fired = fired_at.get(event.id)
    if fired is None:  # it never fired in the reference run: admission reports that already
        return None
    at = _played_at(fired, played, last)
    return min(at, max(at - (event.after or 0) + 1, 0)), at


def _writes(step: object) -> bool:
    return isinstance(step, CallStep) and is_write(step.call)


def _played_at(step: int, played: list[int], last: int) -> int:
    """The reference step the reference's episode played at episode ``step`` (one a step without ``played``)."""
    return played[step - 1] if 1 <= step <= len(played) else min(max(step - 1, 0), last)


_BINDING = re.compile(r"\$\{\s*([A-Za-z_]\w*)")


def _write_early(spec: TaskSpec, at: int) -> list[ReferenceStep] | None:
    """The reference with its first write after step ``at`` moved up to right after the reads it needs (the
    other reads, and only reads, follow it), or None if no read can follow it."""
    steps = spec.reference
    w = next((k for k in range(at, len(steps)) if _writes(steps[k])), None)
    if w is None:
        return None
    needed: set[str] = set(_BINDING.findall(repr(steps[w].model_dump())))
    keep = [True] * w
    for k in range(w - 1, -1, -1):
        step = steps[k]
        movable = isinstance(step, CallStep) and not _writes(step) and step.save_as not in needed
        keep[k] = not movable
        if not movable:
            needed |= set(_BINDING.findall(repr(step.model_dump())))
    later = [s for s, kept in zip(steps[:w], keep, strict=True) if not kept]
    if not later:
        return None
    return [*(s for s, kept in zip(steps[:w], keep, strict=True) if kept), steps[w], *later, *steps[w + 1 :]]


def _mergeable(spec: TaskSpec, before: int, start: int = 0) -> int | None:
    """The first reference step in ``[start, before)`` that can share a turn with the next (it saves nothing)."""
    steps = spec.reference
    for i in range(start, min(before, len(steps) - 1)):
        a, b = steps[i], steps[i + 1]
        if isinstance(a, CallStep) and isinstance(b, CallStep) and a.save_as is None and a.say is None:
            return i
    return None


def _look(spec: TaskSpec) -> CallStep | None:
    """A read the reference makes with literal arguments, repeated as a harmless extra look."""
    tools = exposed(spec)
    for s in spec.reference:
        if isinstance(s, CallStep) and not is_write(s.call) and s.call in tools and "${" not in repr(s.args):
            return CallStep(call=s.call, args=s.args)
    return None


def _trigger(spec: TaskSpec, on_tool: str | None) -> int | None:
    """The index of the reference step at which an unfiltered, undelayed ``on_tool`` event fires."""
    return next((i for i, s in enumerate(spec.reference) if isinstance(s, CallStep) and s.call == on_tool), None)


GAMING_PROBES: tuple[Probe, ...] = (
    DuplicateWrite(),
    Distractor(),
    GuardedAction(),
    ContentFreeConfirm(),
    ReportDump(),
)
PACING = Pacing()
