"""Search through the trigram index finds exactly what a scan finds, in the same order, whatever the history.

Two workspaces take the same random writes (texts changing to and from matching, inserts, deletions of initial
records), resets and forks; one searches through the index (the size threshold set to zero), the other scans (the
threshold out of reach). Every search tool must answer both alike, and ``Service.text_search`` must equal a plain
substring test over the records in the table's order.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.runtime.fork import WorkspaceState
from coworkenv.runtime.workspace import Workspace
from coworkenv.services import base
from coworkenv.services.search_index import TextIndex
from coworkenv.spec.events import Mutation

ALPHABET = "abcİß.*(x"  # few letters (words match often), regex specials, and 'İ', which lower() makes two characters

# (service, collection, the text field a write changes, the search tool's method, its query argument)
SEARCHED = [
    ("mail", "messages", "subject", "search", "query"),
    ("calendar", "events", "title", "list_events", "query"),
    ("chat", "messages", "text", "search_messages", "query"),
    ("contacts", "contacts", "title", "search", "query"),
    ("crm", "accounts", "name", "search_accounts", "query"),
    ("crm", "contacts", "role", "find_contacts", "role"),
    ("documents", "documents", "content", "search", "query"),
    ("drive", "files", "name", "search_files", "query"),
    ("payments", "vendors", "name", "search_vendors", "query"),
    ("tickets", "tickets", "description", "search", "query"),
]
TEXTS = {
    (s, c): fn
    for s, c, fn in [
        ("mail", "messages", "_search_text"),
        ("calendar", "events", "_search_text"),
        ("chat", "messages", "_search_text"),
        ("contacts", "contacts", "_search_text"),
        ("crm", "accounts", "_search_text"),
        ("crm", "contacts", "_role_text"),
        ("documents", "documents", "_search_text"),
        ("drive", "files", "_file_text"),
        ("payments", "vendors", "_vendor_text"),
        ("tickets", "tickets", "_search_text"),
    ]
}


def _fixtures() -> dict[str, Any]:
    """The benchmark's workspace, small, with texts from the test's alphabet and account contacts added."""
    where = importlib.util.spec_from_file_location("workload", Path(__file__).parent.parent / "benchmarks/workload.py")
    assert where is not None and where.loader is not None
    workload = importlib.util.module_from_spec(where)
    where.loader.exec_module(workload)
    data = workload.fixtures(8, workload.Text(0))
    for i, (service, collection, field, _, _) in enumerate(SEARCHED):
        for j, rec in enumerate(data[service].get(collection, [])):
            rec[field] = f"{ALPHABET[(i + j) % len(ALPHABET)]}{ALPHABET[j % 5]}b a{'İ' * (j % 2)}c"
    data["crm"]["contacts"] = [
        {"id": f"ctc-{j}", "account_id": "acc-1", "name": f"P{j}", "role": ["cab", "ab.", "İab", "x"][j % 4]}
        for j in range(6)
    ]
    return data


FIXTURES = _fixtures()
PIECES = sorted(
    {t[i : i + n] for t in ["ab b aİc", "cab", "İab", "ab.", "(x*", "ß*."] for n in (1, 2, 3, 4) for i in range(6)}
)
WORD = st.one_of(
    st.sampled_from(PIECES), st.sampled_from(PIECES).map(str.upper), st.text(ALPHABET, min_size=1, max_size=4)
)
TEXT = st.lists(WORD, max_size=4).map("".join) | st.lists(WORD, max_size=3).map(" ".join)
QUERY = st.lists(WORD, max_size=3).map(" ".join)  # repeated words, one- and two-letter words, words across fields
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("update"), st.integers(0, len(SEARCHED) - 1), st.integers(0, 99), TEXT),
        st.tuples(st.just("insert"), st.integers(0, len(SEARCHED) - 1), st.integers(0, 99), TEXT),
        st.tuples(st.just("delete"), st.integers(0, len(SEARCHED) - 1), st.integers(0, 99), TEXT),
        st.tuples(st.sampled_from(["reset", "snapshot", "back"]), st.just(0), st.just(0), st.just("")),
        *[st.tuples(st.just("search"), st.integers(0, len(SEARCHED) - 1), st.just(0), QUERY)] * 3,
    ),
    max_size=40,
)


@contextmanager
def threshold(n: int) -> Iterator[None]:
    before = base.MIN_RECORDS
    base.MIN_RECORDS = n
    try:
        yield
    finally:
        base.MIN_RECORDS = before


def write(ws: Workspace, op: str, which: int, pick: int, text: str) -> None:
    service, collection, field, _, _ = SEARCHED[which]
    table = ws.services[service].db[collection]
    if not table:
        return
    rid = list(table)[pick % len(table)]
    if op == "update":
        mutation = Mutation(service=service, collection=collection, op="update", id=rid, record={field: text})
    elif op == "insert":
        rec = {**table[rid], "id": f"new-{pick}-{len(table)}", field: text}
        mutation = Mutation(service=service, collection=collection, op="insert", record=rec)
    else:
        mutation = Mutation(service=service, collection=collection, op="delete", id=rid)
    if op != "insert" or rec["id"] not in table:
        ws.apply(mutation)


def answers(ws: Workspace, which: int, query: str) -> Any:
    """What the search tool gives (all of it: the largest page), and what ``text_search`` finds."""
    service, collection, _, method, arg = SEARCHED[which]
    svc = ws.services[service]
    tool = getattr(svc, method)(**{arg: query, "limit": 50})
    text = getattr(importlib.import_module(type(svc).__module__), TEXTS[(service, collection)])
    found = [r["id"] for r in svc.text_search(collection, base.query_words(query), text)]
    return tool, found


def scanned(ws: Workspace, which: int, query: str) -> list[str]:
    """The plain scan: the records whose lower-cased text holds every word, in the table's order."""
    service, collection, *_ = SEARCHED[which]
    svc = ws.services[service]
    text = getattr(importlib.import_module(type(svc).__module__), TEXTS[(service, collection)])
    words = query.lower().split()
    return [r["id"] for r in svc.db[collection].values() if all(w in text(r).lower() for w in words)]


def mismatches(ops: list[tuple[str, int, int, str]]) -> list[Any]:
    """Plays ``ops`` on an indexed and a scanning workspace; every search whose answers differ."""
    indexed, scanning = Workspace(FIXTURES), Workspace(FIXTURES)
    snaps: list[tuple[WorkspaceState, WorkspaceState]] = []
    bad = []
    for op, which, pick, arg in ops:
        if op == "search":
            with threshold(0):
                got = answers(indexed, which, arg)
            with threshold(10**9):
                want = answers(scanning, which, arg)
            if got != want or got[1] != scanned(indexed, which, arg):
                bad.append((SEARCHED[which][:2], arg, got, want))
        elif op == "reset":
            indexed.reset()
            scanning.reset()
        elif op == "snapshot":
            snaps.append((WorkspaceState.of(indexed), WorkspaceState.of(scanning)))
        elif op == "back":
            if snaps:
                snaps[-1][0].put(indexed)
                snaps[-1][1].put(scanning)
        else:
            write(indexed, op, which, pick, arg)
            write(scanning, op, which, pick, arg)
    return bad


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_every_search_tool_through_the_index_answers_as_the_scan(ops: list[tuple[str, int, int, str]]) -> None:
    assert mismatches(ops) == []


def _rewrites() -> list[tuple[str, int, int, str]]:
    """Every collection searched (its index built), a record's text changed to match, then back, searched again."""
    ops: list[tuple[str, int, int, str]] = []
    for which in range(len(SEARCHED)):
        ops += [("search", which, 0, "zzq"), ("update", which, 1, "zzq"), ("search", which, 0, "zzq")]
        ops += [("search", which, 0, "zz"), ("update", which, 1, "a"), ("search", which, 0, "zzq")]
        ops += [("delete", which, 0, ""), ("reset", 0, 0, ""), ("search", which, 0, "b")]
    return ops


def test_the_scenario_passes_and_fails_when_the_index_misses_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: with writes no longer marking records stale the same scenario finds differences."""
    ops = _rewrites()
    assert mismatches(ops) == []
    monkeypatch.setattr(TextIndex, "refresh", lambda self, table: None)
    assert mismatches(ops)


def test_restore_without_marking_the_index_unsure_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: a reset that puts a collection back whole must be seen by the index."""
    real = TextIndex.refresh

    def forgetful(self: TextIndex, table: dict[str, Any]) -> None:
        self.unsure = False
        real(self, table)

    ops = [("search", 0, 0, "zzq"), ("update", 0, 2, "zzq"), ("delete", 0, 0, ""), ("search", 0, 0, "zzq")]
    ops += [("reset", 0, 0, ""), ("search", 0, 0, "zzq")]
    assert mismatches(ops) == []
    monkeypatch.setattr(TextIndex, "refresh", forgetful)
    assert mismatches(ops)


def test_a_collection_never_searched_has_no_index_and_writes_only_mark() -> None:
    ws = Workspace(FIXTURES)
    svc = ws.services["mail"]
    ws.apply(Mutation(service="mail", collection="messages", op="update", id="msg-1", record={"subject": "zzq"}))
    assert svc._texts == {}
    with threshold(0):
        assert [m["id"] for m in svc.search(query="zzq")["messages"]] == ["msg-1"]
    (index,) = svc._texts["messages"].values()
    ws.apply(Mutation(service="mail", collection="messages", op="update", id="msg-2", record={"subject": "zzq"}))
    assert index.stale == {"msg-2": None} and index.indexed["msg-2"][0]["subject"] != "zzq"  # not re-indexed yet
    with threshold(0):
        assert sorted(m["id"] for m in svc.search(query="zzq")["messages"]) == ["msg-1", "msg-2"]
    assert index.stale == {}


def test_small_collections_are_scanned() -> None:
    ws = Workspace(FIXTURES)
    ws.services["mail"].search(query="abc")
    assert ws.services["mail"]._texts == {}
