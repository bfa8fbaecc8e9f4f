"""Small real environments for the training and evaluation tests (no bank synthesis needed)."""

from __future__ import annotations

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec import spec_from_data
from coworkenv.spec.models import TaskSpec

PEOPLE = [("Dana Wright", "dana.wright@acme.example"), ("Omar Lee", "omar.lee@acme.example")]


def lookup_spec(i: int) -> TaskSpec:
    """Ask the user whose email is wanted, look it up, report it: multi-turn for even i."""
    name, email = PEOPLE[i % 2]
    ask = i % 2 == 0
    data = {
        "id": f"lookup-{i}",
        "title": "look up a colleague's email",
        "services": {
            "contacts": {
                "contacts": [
                    {"id": f"con_{j}", "name": n, "email": e, "department": "finance"}
                    for j, (n, e) in enumerate(PEOPLE)
                ]
            }
        },
        "tools": ["contacts_search", "contacts_get"],
        "user": {
            "opening": "Please find a colleague's email address for me." if ask else f"What is {name}'s email?",
            "hidden_facts": [{"slot": "name", "value": name, "keywords": ["name", "who"], "reply": f"It's {name}."}]
            if ask
            else [],
        },
        "checks": [
            *([{"id": "asked", "kind": "asked_user", "slot": "name"}] if ask else []),
            {"id": "searched", "kind": "tool_called", "tool": "contacts_search"},
            {"id": "said", "kind": "answer_contains", "values": [email]},
        ],
        "reference": [
            *([{"ask": "name", "question": "Whose email do you need (name)?"}] if ask else []),
            {"call": "contacts_search", "args": {"query": "${facts.name}" if ask else name}, "save_as": "r1"},
            {"answer": "The email is ${r1.contacts[0].email}."},
        ],
        "capabilities": ["multi_turn", "tool_coordination"] if ask else ["tool_coordination"],
        "max_turns": 6,
        "provenance": {"blueprint": f"lookup_{'ask' if ask else 'direct'}", "seed": i},
    }
    return spec_from_data(data, f"lookup-{i}")


def oracle_demos(specs: list[TaskSpec]) -> list[dict]:
    """SFT records ({messages, tools}) from oracle runs."""
    demos = []
    for spec in specs:
        traj = run_episode(Environment(spec), OracleTeacher())
        assert traj.grade is not None and traj.grade.passed
        demos.append({"messages": traj.messages, "tools": traj.tools})
    return demos
