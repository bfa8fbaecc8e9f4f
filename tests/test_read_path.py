"""The read path: argument texts decoded or refused with the reason the agent reads (padding, duplicate keys,
nesting right at and past the limit, huge integers, trailing junk), a folder walk through a cycle and a folder
that shares its id with the file, and the lookup indexes the slow reads use against a scan of the records after
random writes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.router import MAX_ARG_DEPTH
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.base import ToolError
from coworkenv.services.drive import Drive
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import load_spec

EXAMPLES = Path(__file__).parent.parent / "examples"
PHISHING = TaskSpec.model_validate(
    {**load_spec(EXAMPLES / "phishing_inbox_triage.yaml").model_dump(exclude_none=True), "faults": []}
)


def _nested(depth: int, pad: str = "") -> str:
    """An argument object whose one value nests ``depth`` lists (the object itself is one more level)."""
    return '{"message_id": ' + "[" * depth + pad + "]" * depth + "}"


ARGUMENT_TEXTS = [
    (' {"message_id": "m1"} ', {"message_id": "m1"}, ""),  # padding is JSON's whitespace
    ("{}\n", {}, ""),
    ("", {}, ""),
    ("   ", {}, ""),
    ('{"message_id": "m1", "message_id": "m2"}', {"message_id": "m2"}, ""),  # the last key wins, as in JSON
    ('{"message_id": "naïve ✓ \\u00e9"}', {"message_id": "naïve ✓ é"}, ""),
    (_nested(MAX_ARG_DEPTH - 1), {"message_id": json.loads(_nested(MAX_ARG_DEPTH - 1))["message_id"]}, ""),
    (_nested(MAX_ARG_DEPTH, pad="1" * 40), None, "are nested deeper than 32 levels"),
    (_nested(MAX_ARG_DEPTH + 10), None, "are nested deeper than 32 levels"),
    ('{"message_id": ' + "1" * 5000 + "}", None, "cannot be decoded"),  # past the integer digit limit
    ('{"message_id": "m1",}', None, "are not valid JSON"),
    ('{"message_id": "m1"}}', None, "are not valid JSON (Extra data at char 20)"),
    ("{", None, "are not valid JSON"),
    ("[1]", None, "must be a JSON object, got list"),
    ('"text"', None, "must be a JSON object, got str"),
]


@pytest.mark.parametrize(("raw", "args", "error"), ARGUMENT_TEXTS)
def test_argument_texts_decode_or_say_why_not(raw: str, args: dict[str, Any] | None, error: str) -> None:
    router = Environment(PHISHING).router
    _, decoded, problem = router.parse_args("mail_read", raw)
    assert decoded == args
    assert error in problem and (problem.startswith("arguments for mail_read ") if error else not problem)


def test_a_failed_call_reads_its_error_as_json() -> None:
    env = Environment(PHISHING)
    obs = env.step(AssistantTurn(tool_calls=[ToolCall(id="c", name="mail_read", arguments="[1]")]))
    assert json.loads(obs.messages[0]["content"]) == {
        "error": "arguments for mail_read must be a JSON object, got list"
    }
    assert env.log.calls[-1].args is None and not env.log.calls[-1].ok


# --- the drive's folder walk ----------------------------------------------------------------------------------


def _chain_by_rescan(svc: Drive, kind: str, rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The walk as it was: each folder compared with every record in the chain so far."""
    chain = [rec]
    parent = rec["folder_id"] if kind == "file" else rec["parent_id"]
    while parent is not None and len(chain) < 64:
        folder = svc.db["folders"].get(parent)
        if folder is None or any(c is folder for c in chain):
            break
        chain.append(folder)
        parent = folder["parent_id"]
    return chain


def test_the_folder_walk_stops_at_cycles_and_tells_same_ids_apart() -> None:
    fixtures = {
        "folders": [
            {"id": "a", "name": "A", "parent_id": "b"},
            {"id": "b", "name": "B", "parent_id": "c"},
            {"id": "c", "name": "C", "parent_id": "a"},  # a cycle
            {"id": "x", "name": "X", "parent_id": "x"},  # its own parent
            {"id": "d1", "name": "Same id as the file", "parent_id": "a"},
            {"id": "deep0", "name": "0"},
            *({"id": f"deep{i}", "name": str(i), "parent_id": f"deep{i - 1}"} for i in range(1, 80)),
        ],
        "files": [
            {"id": "d1", "name": "F", "folder_id": "d1"},  # in the folder that has its id: not a cycle
            {"id": "d2", "name": "G", "folder_id": "x"},
            {"id": "d3", "name": "H", "folder_id": "deep79"},  # deeper than the walk goes
        ],
        "permissions": [{"id": "p1", "item_id": "b", "person": "ana@acme.com", "role": "editor"}],
    }
    svc = Drive(Drive.normalize_fixtures(fixtures))
    for kind, table in (("file", "files"), ("folder", "folders")):
        for rec in svc.db[table].values():
            expected = _chain_by_rescan(svc, kind, rec)
            assert svc._chain(kind, rec) == expected
            assert [id(r) for r in svc._chain(kind, rec)] == [id(r) for r in expected]
    assert svc.read_file(file_id="d2")["path"] == "/X/G"
    assert [f["id"] for f in _chain_by_rescan(svc, "file", svc.db["files"]["d1"])] == ["d1", "d1", "a", "b", "c"]
    with pytest.raises(ToolError, match="names both"):
        svc.list_access(item_id="d1")
    assert svc.list_access(item_id="d3")["path"].count("/") == 64


# --- indexes against a scan -----------------------------------------------------------------------------------

SLOW_READS: list[tuple[str, str, dict[str, Any]]] = [
    ("crm", "get_account", {"account_id": "acc-1"}),
    ("payments", "get_invoice", {"invoice_id": "inv-1"}),
    ("payments", "get_purchase_order", {"po_id": "po-1"}),
    ("hr", "get_balance", {"employee": "e1@corp.io"}),
    ("drive", "list_access", {"item_id": "file-1"}),
]


def _workspace() -> Workspace:
    """The benchmark's workspace, small: every slow read finds records, several per key."""
    where = importlib.util.spec_from_file_location("workload", Path(__file__).parent.parent / "benchmarks/workload.py")
    assert where is not None and where.loader is not None
    workload = importlib.util.module_from_spec(where)
    where.loader.exec_module(workload)
    return Workspace(workload.workload_spec(12).services)


WRITES = st.lists(
    st.tuples(st.sampled_from(["crm", "payments", "hr", "drive"]), st.integers(0, 10**6), st.integers(0, 10**6)),
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(writes=WRITES)
def test_every_index_the_slow_reads_use_equals_a_scan_after_random_writes(
    writes: list[tuple[str, int, int]],
) -> None:
    """The reads build their indexes; random moves between buckets, inserts and deletions follow; every index
    built still lists, per value, exactly the records a scan finds, in the table's order."""
    ws = _workspace()
    for service, method, args in SLOW_READS:
        with contextlib.suppress(ToolError):  # a read may refuse; it has built its indexes by then
            getattr(ws.services[service], method)(**args)
    for service, pick, other in writes:
        svc = ws.services[service]
        built = sorted({coll for coll, _, _ in svc._indexes})
        coll = built[pick % len(built)]
        table = svc.db[coll]
        if not table:
            continue
        rid = list(table)[pick % len(table)]
        donor = list(table.values())[other % len(table)]
        fields = [f for c, f, _ in svc._indexes if c == coll]
        field = fields[other % len(fields)]
        try:
            if other % 5 == 0:
                svc.delete(coll, rid)
            elif other % 5 == 1:
                svc.insert(coll, {k: v for k, v in donor.items() if k != "id"})
            else:
                svc.update(coll, rid, {field: donor[field]})
        except ToolError:
            pass
        for (icoll, ifield, lower), index in svc._indexes.items():
            for value in {*index, None}:
                found = [r["id"] for r in svc.lookup(icoll, ifield, value, lower=lower)]
                scan = [
                    r["id"]
                    for r in svc.db[icoll].values()
                    if (r.get(ifield).lower() if lower and isinstance(r.get(ifield), str) else r.get(ifield)) == value
                ]
                assert found == scan, (icoll, ifield, value)
