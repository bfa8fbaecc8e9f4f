"""Small hand-made specs for the rollout and data tests (the bank comes from synthesis)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from coworkenv.runtime.turn import AssistantTurn
from coworkenv.spec.models import TaskSpec


def mail_reply_spec(i: int, blueprint: str = "mail_reply", capabilities: tuple[str, ...] = ("multi_turn",)) -> TaskSpec:
    """Find a mail, ask the user for a figure, reply with it, report: 4 turns for the oracle."""
    figure = f"{40 + i}k"
    data: dict[str, Any] = {
        "id": f"{blueprint}-{i}",
        "title": f"Reply to Dana #{i}",
        "services": {
            "mail": {
                "messages": [
                    {
                        "id": "msg_1",
                        "sender": "dana@acme.com",
                        "to": ["me@corp.com"],
                        "subject": "Budget",
                        "body": "Can you send the Q3 figure?",
                        "date": "2026-03-01",
                    },
                    {
                        "id": "msg_2",
                        "sender": "lee@acme.com",
                        "to": ["me@corp.com"],
                        "subject": "Lunch",
                        "body": "Lunch?",
                        "date": "2026-03-02",
                    },
                ]
            }
        },
        "user": {
            "opening": "Please answer Dana's budget mail with the Q3 figure.",
            "hidden_facts": [
                {"slot": "figure", "value": figure, "keywords": ["figure", "amount"], "reply": f"It is {figure}."}
            ],
        },
        "rules": [
            {
                "id": "no_delete",
                "description": "Never move mail to the trash.",
                "tool": "mail_move",
                "rule": "forbid",
                "when": "args.folder == 'trash'",
            }
        ],
        "checks": [
            {
                "id": "replied",
                "kind": "record_exists",
                "service": "mail",
                "collection": "messages",
                "where": f"r.in_reply_to == 'msg_1' and contains(r.body, '{figure}')",
                "weight": 2,
            },
            {"id": "asked", "kind": "asked_user", "slot": "figure"},
            {"id": "told", "kind": "answer_contains", "values": [figure]},
        ],
        "reference": [
            {"call": "mail_search", "args": {"query": "budget"}, "save_as": "r1"},
            {"ask": "figure", "question": "What is the Q3 figure?"},
            {
                "call": "mail_reply",
                "args": {"message_id": "${r1.messages[0].id}", "body": "The Q3 figure is ${facts.figure}."},
            },
            {"answer": "I replied to Dana with the Q3 figure of ${facts.figure}."},
        ],
        "capabilities": list(capabilities),
        "provenance": {"source": "test", "blueprint": blueprint, "seed": i},
    }
    return TaskSpec.model_validate(data)


def write_specs(folder: Path, specs: list[TaskSpec]) -> Path:
    """Spec files in a folder, as ``coworkenv rollout --bank FOLDER`` reads them."""
    folder.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        (folder / f"{spec.id}.yaml").write_text(yaml.safe_dump(spec.model_dump(mode="json")), encoding="utf-8")
    return folder


class SlowOracle:
    """The oracle teacher, sleeping before every turn: a stand-in for a slow model server."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.name = "slow-oracle"

    def for_task(self, spec: TaskSpec) -> Any:
        from coworkenv.agents import OracleTeacher

        run = OracleTeacher().for_task(spec)
        act = run.act

        def slow(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            time.sleep(self.delay)
            return act(messages, tools)

        run.act = slow  # type: ignore[method-assign]
        return run


class Lazy:
    """Answers without doing anything: fails every check that needs a write."""

    name = "lazy"

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        return AssistantTurn(content="All done.")


def store_outcomes(run: Path) -> dict[str, tuple[str, float, str]]:
    """What must not depend on how a run was executed: status, score, final state per episode."""
    from coworkenv.rollout import RolloutStore

    records = RolloutStore(run).records()
    return {r.key: (r.status, r.score, r.trajectory.final_state_hash if r.trajectory else None) for r in records}
