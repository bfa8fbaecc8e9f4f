"""Tiny hand-made specs and scripted turns shared by the core tests.

The base spec is a two-service workspace (mail + expenses) small enough to reason about
in a test: two messages, two expenses, two expense rules. Tests override the parts they
exercise (policies, events, faults, the user, checks) through :func:`tiny_spec`.
"""

from __future__ import annotations

import copy
from typing import Any

from coworkenv.runtime import AssistantTurn, Environment, Observation, ToolCall
from coworkenv.spec import TaskSpec, spec_from_data

BASE: dict[str, Any] = {
    "id": "tiny",
    "title": "File Tom's taxi receipt",
    "services": {
        "mail": {
            "messages": [
                {
                    "id": "m1",
                    "sender": "tom@corp.io",
                    "to": ["me@corp.io"],
                    "subject": "Taxi receipt",
                    "body": "Taxi to the client: 38.50 USD on 2025-03-05.",
                    "date": "2025-03-05T10:00",
                },
                {
                    "id": "m2",
                    "sender": "ann@corp.io",
                    "to": ["me@corp.io"],
                    "subject": "Lunch?",
                    "body": "Lunch on Friday?",
                    "date": "2025-03-06T10:00",
                },
            ]
        },
        "expenses": {
            "expenses": [
                {
                    "id": "e1",
                    "employee": "tom@corp.io",
                    "amount": 640.0,
                    "category": "meals",
                    "description": "Client dinner",
                    "date": "2025-03-01",
                    "status": "submitted",
                    "receipt": True,
                },
                {
                    "id": "e2",
                    "employee": "ann@corp.io",
                    "amount": 20.0,
                    "category": "meals",
                    "description": "Coffee",
                    "date": "2025-03-02",
                    "status": "approved",
                },
            ],
            "rules": [
                {"id": "r1", "category": "meals", "limit": 500.0},
                {"id": "r2", "category": "travel", "limit": 2000.0},
            ],
        },
    },
    "user": {"opening": "Please file Tom's taxi receipt as a travel expense."},
    "checks": [
        {
            "id": "filed",
            "kind": "record_exists",
            "service": "expenses",
            "collection": "expenses",
            "where": "r.amount == 38.5 and r.category == 'travel'",
        },
    ],
    "reference": [
        {
            "call": "expenses_create_expense",
            "args": {
                "employee": "tom@corp.io",
                "amount": 38.5,
                "category": "travel",
                "description": "Taxi",
                "date": "2025-03-05",
            },
        },
        {"answer": "Filed Tom's 38.50 USD taxi."},
    ],
}

CREATE_TAXI = {
    "employee": "tom@corp.io",
    "amount": 38.5,
    "category": "travel",
    "description": "Taxi",
    "date": "2025-03-05",
}


def tiny_data(**overrides: Any) -> dict[str, Any]:
    """The base spec as data with top-level fields replaced (``user`` is merged)."""
    data = copy.deepcopy(BASE)
    user = overrides.pop("user", None)
    data.update(copy.deepcopy(overrides))
    if user is not None:
        data["user"] = {**data["user"], **user}
    return data


def tiny_spec(**overrides: Any) -> TaskSpec:
    return spec_from_data(tiny_data(**overrides), "tiny")


def call(name: str, args: Any = None, call_id: str = "c1") -> AssistantTurn:
    """A turn with one tool call."""
    return AssistantTurn(tool_calls=[ToolCall(id=call_id, name=name, arguments=args if args is not None else {})])


def say(text: str) -> AssistantTurn:
    """A turn addressed to the user."""
    return AssistantTurn(content=text)


def play(env: Environment, turns: list[Any]) -> list[Observation]:
    """Reset, then apply each turn (stopping early if the episode ends)."""
    out = [env.reset()]
    for turn in turns:
        if out[-1].done:
            break
        out.append(env.step(turn))
    return out


class DoNothing:
    """The laziest agent: says it is done without doing anything."""

    name = "do_nothing"

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        return AssistantTurn(content="Done.")
