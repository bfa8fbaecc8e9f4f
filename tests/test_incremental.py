"""Incremental tracking must always equal recomputation from scratch.

Random sequences of writes (updates that flip the fields checks test, inserts, deletions,
writes that restore the original content, resets in between) run on the example
workspaces; after every operation the check tracker, the incremental state hash, the
diff, the indexes and the reset are compared with a full recomputation.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from coworkenv.agents import OracleTeacher
from coworkenv.grading.tracking import CheckTracker
from coworkenv.runtime import Environment, Workspace
from coworkenv.runtime.digest import full_digest
from coworkenv.runtime.policy import actor_for
from coworkenv.services.base import ToolError
from coworkenv.spec import Check, TaskSpec, load_spec
from coworkenv.verify.probes import PROBES

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))
SPECS = [load_spec(p) for p in EXAMPLES]
CHECK = TypeAdapter(Check)
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def derived_checks(spec: TaskSpec) -> list[Any]:
    """The spec's state checks plus, per collection, checks on a field value some records have."""
    out = [c for c in spec.checks if c.kind in ("record_exists", "record_absent", "field_equals", "count", "unchanged")]
    ws = Workspace(spec.services)
    for service, colls in ws.initial.items():
        for coll, recs in colls.items():
            base = {"service": service, "collection": coll}
            out.append(CHECK.validate_python({"id": f"u-{service}-{coll}", "kind": "unchanged", **base}))
            if not recs:
                continue
            first = next(iter(recs.values()))
            field = next((k for k, v in first.items() if k != "id" and isinstance(v, str)), None)
            if field is None:
                continue
            where = f"r.{field} == {first[field]!r}"
            for kind, extra in (("record_exists", {}), ("record_absent", {}), ("count", {"op": ">=", "value": 2})):
                out.append(
                    CHECK.validate_python(
                        {"id": f"{kind}-{service}-{coll}", "kind": kind, "where": where, **base, **extra}
                    )
                )
            out.append(
                CHECK.validate_python({"id": f"allow-{service}-{coll}", "kind": "unchanged", "allow": where, **base})
            )
    return out


def reference_diff(ws: Workspace) -> dict[str, Any]:
    """The diff computed over every record (what the workspace did before it tracked changes)."""
    out: dict[str, Any] = {}
    for name, colls in ws.state.items():
        for coll, recs in colls.items():
            before = ws.initial[name].get(coll, {})
            added = sorted(set(recs) - set(before))
            removed = sorted(set(before) - set(recs))
            changed = sorted(r for r in recs if r in before and recs[r] != before[r])
            if added or removed or changed:
                out[f"{name}.{coll}"] = {"added": [recs[r] for r in added], "removed": removed, "changed": changed}
    return out


def apply_op(ws: Workspace, op: tuple[int, int, int, int, int]) -> None:
    """One random write: update a field to a value another record has, insert, delete, restore, or reset."""
    kind, coll_i, rec_i, field_i, value_i = op
    colls = [(s, c) for s, cs in ws.initial.items() for c in cs]
    service, coll = colls[coll_i % len(colls)]
    svc, live, initial = ws.services[service], ws.state[service][coll], ws.initial[service][coll]
    pool = list(initial.values()) or list(live.values())
    if kind == 0:
        ws.reset()
        return
    if not live or not pool:
        return
    rid = list(live)[rec_i % len(live)]
    try:
        if kind in (1, 2):  # update a field to a value another record of the collection has
            fields = [k for k in live[rid] if k != "id"]
            field = fields[field_i % len(fields)]
            svc.update(coll, rid, {field: pool[value_i % len(pool)][field]})
        elif kind == 3:
            svc.delete(coll, rid)
        elif kind == 4:  # insert a copy under a fresh id
            svc.insert(coll, {k: v for k, v in pool[value_i % len(pool)].items() if k != "id"})
        elif kind == 5 and rid in initial:  # put the original content back in a new record object
            svc.update(coll, rid, copy.deepcopy(initial[rid]))
    except ToolError:  # a value another record has may still break a rule of this one
        pass


def assert_matches_recomputation(ws: Workspace, tracker: CheckTracker, checks: list[Any]) -> None:
    assert tracker.results() == {c.id: c.judge(ws) for c in checks}
    assert ws.state_hash() == full_digest(ws.state)
    assert {k: {**v, "changed": sorted(v["changed"])} for k, v in ws.diff().items()} == reference_diff(ws)


OPS = st.lists(st.tuples(*(st.integers(0, 5) if i == 0 else st.integers(0, 10**6) for i in range(5))), max_size=20)


@pytest.mark.parametrize("spec", SPECS, ids=[p.stem for p in EXAMPLES])
@PROPERTY
@given(ops=OPS)
def test_tracking_and_hash_equal_recomputation(spec: TaskSpec, ops: list[tuple[int, int, int, int, int]]) -> None:
    checks = derived_checks(spec)
    ws = Workspace(spec.services)
    tracker = CheckTracker(checks, ws)
    fresh = Workspace(spec.services)
    for op in ops:
        apply_op(ws, op)
        assert_matches_recomputation(ws, tracker, checks)
        assert (ws.state_change() == fresh.state_change()) == (ws.state == fresh.state)  # what the verifier compares
    ws.reset()
    assert ws.state == fresh.state and ws.state_hash() == fresh.state_hash()
    for service, colls in ws.state.items():  # a reset keeps record order, which tools' output can depend on
        for coll, recs in colls.items():
            assert list(recs) == list(fresh.state[service][coll])
    assert_matches_recomputation(ws, tracker, checks)


@PROPERTY
@given(ops=OPS)
def test_indexes_equal_a_scan(ops: list[tuple[int, int, int, int, int]]) -> None:
    """A lookup finds what a scan finds, in the table's order (tools return it), whatever the writes before."""
    fixtures = {}
    for spec in SPECS:  # one workspace with every service the examples fill
        for service, colls in spec.services.items():
            fixtures.setdefault(service, colls)
    ws = Workspace(fixtures)
    for op in ops:
        apply_op(ws, op)
        crm, contacts = ws.services["crm"], ws.services["contacts"]
        for acc in crm.db["accounts"]:
            for coll in ("deals", "activities"):
                found = [r["id"] for r in crm.lookup(coll, "account_id", acc)]
                assert found == [r["id"] for r in crm.db[coll].values() if r["account_id"] == acc]
        for c in contacts.db["contacts"].values():
            found = [r["id"] for r in contacts.lookup("contacts", "email", c["email"].lower(), lower=True)]
            scan = [r["id"] for r in contacts.db["contacts"].values() if r["email"].lower() == c["email"].lower()]
            assert found == scan
        chat = ws.services["chat"]
        for channel in {m["channel"] for m in chat.db["messages"].values()}:
            found = [r["id"] for r in chat.lookup("messages", "channel", channel)]
            assert found == [r["id"] for r in chat.db["messages"].values() if r["channel"] == channel]


def test_hash_means_content() -> None:
    """Equal content, equal hash (whatever the path to it); any change of content, another hash."""
    spec = SPECS[0]
    ws, other = Workspace(spec.services), Workspace(spec.services)
    start = ws.state_hash()
    service, coll = next((s, c) for s, cs in ws.initial.items() for c, recs in cs.items() if recs)
    rid, rec = next(iter(ws.initial[service][coll].items()))
    field = next(k for k, v in rec.items() if isinstance(v, str) and k != "id")
    ws.services[service].update(coll, rid, {field: rec[field] + " changed"})
    assert ws.state_hash() != start
    ws.services[service].update(coll, rid, {field: rec[field]})  # back to the same content, a new object
    assert ws.state_hash() == start == other.state_hash()
    ws.services[service].delete(coll, rid)
    assert ws.state_hash() != start


def test_change_sees_one_field_of_one_background_record() -> None:
    """The verifier compares a probe run's final state with the reference run's by their changes alone: a probe
    that also changes one field of one record nobody else touches is seen, content put back is not, and the
    records neither run changed are never hashed."""
    spec = SPECS[0]
    fixtures = copy.deepcopy(spec.services)  # fixtures no other test's workspace has hashed
    reference, probe = Workspace(fixtures), Workspace(fixtures)
    tables = sorted((len(recs), s, c) for s, cs in reference.initial.items() for c, recs in cs.items() if recs)
    _, service, coll = tables[-1]
    first, *_, last = reference.initial[service][coll]  # the task's record and a background one
    text = next(k for k, v in reference.initial[service][coll][last].items() if isinstance(v, str) and k != "id")
    for ws in (reference, probe):
        ws.services[service].delete(coll, first)
    assert probe.state_change() == reference.state_change() != Workspace(fixtures).state_change()
    old = probe.initial[service][coll][last][text]
    probe.services[service].update(coll, last, {text: old + "!"})
    assert probe.state_change() != reference.state_change()
    probe.services[service].update(coll, last, {text: old})  # the same content again, in a new record object
    assert probe.state_change() == reference.state_change()
    hashed = reference._digest._initial._parts
    assert set(hashed) == {(service, coll, first), (service, coll, last)}
    assert reference.state_hash() == probe.state_hash() == full_digest(reference.state)  # the full hash reads all


@pytest.mark.parametrize("spec", SPECS, ids=[p.stem for p in EXAMPLES])
def test_episode_grades_equal_recomputation(spec: TaskSpec) -> None:
    """Oracle and probe episodes: the tracked results and first steps equal a recomputation after every step."""
    env = Environment(spec)
    checks = env.tracker.checks
    for policy in [OracleTeacher(), *(p for p in PROBES.values() if p.applies(spec))]:
        actor = actor_for(policy, spec)
        obs = env.reset()
        first: dict[str, int] = {c.id: 0 for c in checks if c.judge(env.workspace)[0]}
        while not obs.done:
            obs = env.step(actor.act(env.messages, obs.tools))
            for c in checks:
                if c.id not in first and c.judge(env.workspace)[0]:
                    first[c.id] = obs.step
            assert env.tracker.results() == {c.id: c.judge(env.workspace) for c in checks}
            assert env.tracker.first_true == first
        assert env.workspace.state_hash() == full_digest(env.workspace.state)
