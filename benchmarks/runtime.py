"""Runtime latency: env.reset(), env.step() with a read call, with a write call, and env.grade().

Single process, median of many timed calls. Two workloads:
- the hand-written examples (their oracle turns replayed, each step timed on its real state);
- a synthetic workspace with about 100 records per service (Faker, seeded), typical calls.

Targets: read step <= 50 µs with ~100 records per service, reset <= 1 ms, grade <= 1 ms.

    python benchmarks/runtime.py [--repeat 400] [--examples examples]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faker import Faker
from rich.console import Console
from rich.table import Table

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import AssistantTurn, Environment, ToolCall, run_episode
from coworkenv.services import ALL_TOOLS
from coworkenv.spec import TaskSpec, load_spec, spec_from_data

TARGETS_US = {"reset": 1000.0, "step (read)": 50.0, "grade": 1000.0}
N = 100


# --- the ~100-records-per-service workload ---------------------------------------------------------------------

def _workload_fixtures(fake: Faker, rng: random.Random) -> dict[str, Any]:
    people = [f"{fake.unique.user_name()}@corp.io" for _ in range(40)]
    day = lambda: f"2025-03-{rng.randint(1, 28):02d}"  # noqa: E731 - tiny local helper

    def when(hour: int) -> str:
        return f"{day()}T{hour:02d}:{rng.choice(['00', '30'])}"

    teams = ["payments", "search", "billing", "it", "checkout"]
    return {
        "mail": {"messages": [
            {"id": f"msg-{i}", "sender": rng.choice(people), "to": [rng.choice(people)], "subject": fake.sentence(6),
             "body": fake.paragraph(4), "date": when(rng.randint(7, 19)), "unread": rng.random() < 0.3,
             "folder": rng.choice(["inbox"] * 4 + ["archive", "sent"])} for i in range(N)]},
        "calendar": {"events": [
            {"id": f"evt-{i}", "title": fake.catch_phrase(), "start": (s := when(rng.randint(8, 16))),
             "end": s[:11] + f"{int(s[11:13]) + 1:02d}" + s[13:], "organizer": rng.choice(people),
             "attendees": rng.sample(people, 3)} for i in range(N)]},
        "contacts": {"contacts": [
            {"id": f"con-{i}", "name": fake.name(), "email": people[i] if i < len(people) else f"p{i}@ext.com",
             "title": fake.job(), "company": fake.company(), "department": rng.choice(teams)} for i in range(N)]},
        "documents": {"documents": [
            {"id": f"doc-{i}", "path": f"/{rng.choice(['Finance', 'Sales', 'Eng', 'People'])}/{fake.bs()} {i}",
             "content": fake.paragraph(6), "owner": rng.choice(people)} for i in range(N)]},
        "tickets": {
            "tickets": [{"id": f"tkt-{i}", "title": fake.sentence(5), "description": fake.paragraph(2),
                         "team": rng.choice(teams), "status": rng.choice(["open", "in_progress", "resolved"]),
                         "priority": rng.choice(["low", "medium", "high"]), "created": when(10)} for i in range(90)],
            "oncall": [{"id": f"shift-{i}", "team": teams[i % 5], "engineer": rng.choice(people),
                                "start": f"2025-03-{1 + 7 * (i // 5):02d}T09:00",
                        "end": f"2025-03-{8 + 7 * (i // 5):02d}T09:00"}
                       for i in range(10)]},
        "crm": {
            "accounts": [{"id": f"acc-{i}", "name": fake.company(), "industry": fake.bs().split()[-1],
                          "tier": rng.choice(["smb", "mid-market", "enterprise"]), "owner": rng.choice(people),
                          "arr": float(rng.randint(10, 500) * 1000)} for i in range(40)],
            "deals": [{"id": f"deal-{i}", "account_id": f"acc-{rng.randrange(40)}", "name": fake.catch_phrase(),
                       "stage": rng.choice(["prospect", "proposal", "negotiation", "won"]),
                       "amount": float(rng.randint(5, 300) * 1000), "close_date": day()} for i in range(30)],
            "activities": [{"id": f"act-{i}", "account_id": f"acc-{rng.randrange(40)}", "kind": "note",
                            "summary": fake.sentence(8), "date": day()} for i in range(30)]},
        "chat": {
            "channels": [{"id": f"ch-{i}", "name": name} for i, name in enumerate(["general", "incidents", *teams])],
            "messages": [{"id": f"cm-{i}", "channel": rng.choice(["general", "incidents", *teams]),
                          "author": rng.choice(people).split("@")[0], "text": fake.sentence(10),
                          "ts": when(rng.randint(8, 18))} for i in range(93)]},
        "expenses": {
            "rules": [{"id": f"rule-{c}", "category": c, "limit": 500.0} for c in ("meals", "travel", "software")],
            "expenses": [{"id": f"exp-{i}", "employee": rng.choice(people), "amount": round(rng.uniform(5, 900), 2),
                          "category": rng.choice(["meals", "travel", "software"]), "description": fake.sentence(4),
                          "date": day(), "status": rng.choice(["draft", "submitted", "approved"])}
                         for i in range(97)]},
    }


def workload_spec(seed: int = 0) -> TaskSpec:
    """A spec over all eight services, ~100 records each, with typical checks of every kind."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    checks = [
        {"id": "sent", "kind": "record_exists", "service": "mail", "collection": "messages",
         "where": "r.folder == 'sent' and contains(r.subject, 'Quarterly')"},
        {"id": "urgent", "kind": "count", "service": "tickets", "collection": "tickets",
         "where": "r.priority == 'urgent'", "op": ">=", "value": 1},
        {"id": "commented", "kind": "field_equals", "service": "tickets", "collection": "tickets",
         "record_id": "tkt-1", "field": "status", "value": "resolved"},
        *({"id": f"keep_{s}_{c}", "kind": "unchanged", "service": s, "collection": c, "allow": "r.id == 'x'"}
          for s, c in (("mail", "messages"), ("calendar", "events"), ("contacts", "contacts"),
                       ("documents", "documents"), ("expenses", "expenses"))),
        {"id": "searched", "kind": "tool_called", "tool": "mail_search", "where": "contains(args.query, 'q')"},
        {"id": "total", "kind": "answer_number", "value": 1234.5},
    ]
    data = {"id": "workload", "title": "benchmark workload", "services": _workload_fixtures(fake, rng),
            "user": {"opening": "Please help."}, "checks": checks, "reference": [{"answer": "ok"}],
            "max_turns": 10**6, "max_tool_calls": 10**6}
    return spec_from_data(data, "workload")


READS: list[tuple[str, dict[str, Any]]] = [
    ("mail_search", {"query": "quarterly report"}),
    ("mail_search", {"unread": True, "folder": "inbox"}),
    ("mail_read", {"message_id": "msg-7"}),
    ("calendar_list_events", {"start_date": "2025-03-10", "end_date": "2025-03-14"}),
    ("calendar_find_free_slots", {"attendees": ["x@corp.io"], "date": "2025-03-12"}),
    ("contacts_search", {"query": "manager"}),
    ("documents_search", {"query": "growth", "folder": "/Finance"}),
    ("tickets_search", {"status": "open", "team": "payments"}),
    ("crm_list_deals", {"stage": "negotiation"}),
    ("crm_get_account", {"account_id": "acc-3"}),
    ("chat_search_messages", {"query": "team"}),
    ("expenses_list_expenses", {"status": "submitted", "category": "travel"}),
]
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("mail_send", {"to": ["a@corp.io"], "subject": "Quarterly numbers", "body": "Attached."}),
    ("mail_move", {"message_id": "msg-3", "folder": "archive"}),
    ("calendar_create_event", {"title": "Sync", "start": "2025-03-12T10:00", "end": "2025-03-12T10:30"}),
    ("contacts_update", {"contact_id": "con-4", "title": "Director"}),
    ("documents_append", {"document_id": "doc-5", "text": "New line."}),
    ("tickets_comment", {"ticket_id": "tkt-2", "text": "Looking into it."}),
    ("crm_log_activity", {"account_id": "acc-1", "kind": "call", "summary": "Renewal call.", "date": "2025-03-11"}),
    ("chat_post_message", {"channel": "general", "text": "Deploy done."}),
    ("expenses_create_expense", {"employee": "a@corp.io", "amount": 42.0, "category": "meals",
                                 "description": "Lunch", "date": "2025-03-11"}),
]


def _turn(tool: str, args: dict[str, Any]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id="b1", name=tool, arguments=args)])


# --- timing ----------------------------------------------------------------------------------------------------

def timed(fn: Callable[[], Any]) -> float:
    """Microseconds for one call (the cyclic GC stays on: its collections are part of the real cost)."""
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1000.0


def bench_workload(spec: TaskSpec, repeat: int) -> dict[str, list[float]]:
    """Timings in µs on the big workspace; writes reset every 20 calls so the state stays ~100 records."""
    env = Environment(spec)
    out: dict[str, list[float]] = defaultdict(list)
    out["reset"] = [timed(env.reset) for _ in range(repeat)]
    for kind, calls in (("read", READS), ("write", WRITES)):
        env.reset()
        for i in range(repeat):
            if i % 20 == 0:
                env.reset()
            tool, args = calls[i % len(calls)]
            took = timed(lambda t=_turn(tool, args): env.step(t))
            out[f"step ({kind})"].append(took)
            out[f"{kind}:{tool}"].append(took)
    env.reset()
    for tool, args in [*READS[:3], *WRITES[:3]]:
        env.step(_turn(tool, args))
    assert not env.done  # a finished episode caches its grade, which would time nothing
    out["grade"] = [timed(env.grade) for _ in range(repeat)]
    return out


def oracle_turns(spec: TaskSpec) -> list[Any]:
    turns: list[Any] = []
    run_episode(Environment(spec), OracleTeacher(), on_step=lambda turn, obs: turns.append(turn))
    return turns


def bench_examples(specs: list[TaskSpec], repeat: int) -> dict[str, list[float]]:
    """Timings in µs on the examples: every oracle step is timed on the state it really meets."""
    out: dict[str, list[float]] = defaultdict(list)
    rounds = max(1, repeat // 20)
    for spec in specs:
        env = Environment(spec)
        out["reset"] += [timed(env.reset) for _ in range(repeat // 4)]
        turns = oracle_turns(spec)
        for i, turn in enumerate(turns):
            if not turn.tool_calls:
                continue
            kind = ALL_TOOLS[turn.tool_calls[0].name].kind
            for _ in range(rounds):
                env.reset()
                for earlier in turns[:i]:
                    env.step(earlier)
                out[f"step ({kind})"].append(timed(lambda e=env, t=turn: e.step(t)))
        env.reset()
        for turn in turns[:-1]:  # the last answer ends the episode, after which the grade is cached
            env.step(turn)
        if not env.done:
            out["grade"] += [timed(env.grade) for _ in range(repeat // 4)]
    return out


def best_medians(runs: list[dict[str, list[float]]]) -> dict[str, float]:
    """Per operation, the lowest median over the rounds: other processes only ever add time."""
    return {key: min(statistics.median(run[key]) for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=400, help="timed calls per operation and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", type=Path, default=Path(__file__).parent.parent / "examples")
    ns = parser.parse_args()
    specs = [load_spec(p) for p in sorted(ns.examples.glob("*.yaml"))]
    workload = workload_spec()
    sizes = {s: sum(len(r) for r in colls.values()) for s, colls in workload.services.items()}
    ex = best_medians([bench_examples(specs, ns.repeat) for _ in range(ns.rounds)])
    wl = best_medians([bench_workload(workload, ns.repeat) for _ in range(ns.rounds)])
    console = Console()
    table = Table(title=f"runtime latency: median µs, best of {ns.rounds} rounds ({len(specs)} examples; "
                        f"workload: {min(sizes.values())}-{max(sizes.values())} records per service)")
    for col in ("operation", "examples", "workload", "target", "ok"):
        table.add_column(col, justify="right" if col != "operation" else "left")
    for op in ("reset", "step (read)", "step (write)", "grade"):
        target = TARGETS_US.get(op)
        ok = "" if target is None else ("✓" if max(ex[op], wl[op]) <= target else "✗")
        table.add_row(op, f"{ex[op]:.1f}", f"{wl[op]:.1f}", "" if target is None else f"≤ {target:.0f}", ok)
    console.print(table)
    tools = Table(title="workload steps by tool, median µs")
    tools.add_column("tool")
    tools.add_column("µs", justify="right")
    for key in sorted(k for k in wl if ":" in k):
        tools.add_row(key, f"{wl[key]:.1f}")
    console.print(tools)


if __name__ == "__main__":
    main()
