"""The read step's shortcuts decline what they cannot decide, and the long path then gives what it always gave.

Each test tries to make one shortcut wrong: argument texts the one-scan decoding must leave to the long path
(padding, a text subclass, nesting right at and past the limit, with the bracket count skipped or not), calls
the sole-text-argument shortcut must leave to the argument table and the model, a folder walk through a cycle
and a folder that shares its id with the file, and the lookup indexes the slow reads use against a scan of the
records after random writes.
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
from coworkenv.runtime.router import MAX_ARG_DEPTH, ToolRouter, exposed_tools, nesting_exceeds, plain_object
from coworkenv.runtime.workspace import Workspace
from coworkenv.services.arguments import compiled
from coworkenv.services.base import ToolError
from coworkenv.services.drive import Drive
from coworkenv.services.registry import ALL_TOOLS
from coworkenv.spec import TaskSpec
from coworkenv.spec.io import load_spec

EXAMPLES = Path(__file__).parent.parent / "examples"
PHISHING = TaskSpec.model_validate(
    {**load_spec(EXAMPLES / "phishing_inbox_triage.yaml").model_dump(exclude_none=True), "faults": []}
)


class _Text(str):
    pass


def _nested(depth: int, pad: str = "") -> str:
    """An argument object whose one value nests ``depth`` lists (the object itself is one more level)."""
    return '{"message_id": ' + "[" * depth + pad + "]" * depth + "}"


def _reference(name: str, raw: Any) -> tuple[dict[str, Any] | None, str]:
    """What the router gave for a call's arguments before the one-scan decoding: json.loads, then the checks."""
    if isinstance(raw, str):
        try:
            args = json.loads(raw) if raw and not raw.isspace() else {}
        except json.JSONDecodeError as exc:
            return None, f"arguments for {name} are not valid JSON ({exc.msg} at char {exc.pos})"
        except (ValueError, RecursionError) as exc:
            return None, f"arguments for {name} cannot be decoded: {str(exc)[:120]}"
    else:
        args = raw
    if not isinstance(args, dict):
        return None, f"arguments for {name} must be a JSON object, got {type(args).__name__}"
    if nesting_exceeds(args, MAX_ARG_DEPTH):
        return None, f"arguments for {name} are nested deeper than {MAX_ARG_DEPTH} levels"
    return args, ""


DECLINED = [
    ' {"message_id": "m1"}',  # padding: json.loads skips it, the scan does not
    '{"message_id": "m1"} ',
    "{}\n",
    _Text('{"message_id": "m1"}'),  # a text subclass
    _nested(MAX_ARG_DEPTH, pad="1" * 40),  # one bracket too many in a long text: counted, declined, refused
    _nested(MAX_ARG_DEPTH + 10),
    '{"message_id": ' + "1" * 5000 + "}",  # past the integer digit limit: the long path words the error
    '{"message_id": "m1",}',
    '{"message_id": "m1"}}',
    "{",
    "",
    "   ",
    "[1]",
    '"text"',
]
TAKEN = [
    '{"message_id": "m1"}',
    _nested(MAX_ARG_DEPTH - 1),  # 32 brackets in all: within the limit
    _nested(3),
    '{"message_id": "naïve ✓ \\u00e9"}',
    '{"message_id": "m1", "message_id": "m2"}',
]


@pytest.mark.parametrize("raw", DECLINED)
def test_the_one_scan_decoding_leaves_these_to_the_long_path(raw: str) -> None:
    assert plain_object(raw) is None
    router = Environment(PHISHING).router
    _, args, error = router.parse_args("mail_read", raw)
    assert (args, error) == _reference("mail_read", raw)
    called = router.call("mail_read", raw, {})
    if args is None:
        assert called[1:4] == (None, False, error)
        assert json.loads(called[4]) == {"error": error}


@pytest.mark.parametrize("raw", TAKEN)
def test_the_one_scan_decoding_gives_what_json_loads_gives(raw: str) -> None:
    decoded = plain_object(raw)
    assert decoded is not None and decoded == json.loads(raw)
    assert (decoded, "") == _reference("mail_read", raw)


def test_a_short_text_cannot_nest_past_the_limit() -> None:
    """Texts up to twice the limit skip the bracket count: no such text opens and closes more than the limit."""
    for depth in range(0, MAX_ARG_DEPTH + 3):
        raw = "{" * depth + "}" * depth
        if len(raw) <= 2 * MAX_ARG_DEPTH and raw:
            assert depth <= MAX_ARG_DEPTH


def _router() -> ToolRouter:
    ws = Workspace(PHISHING.services)
    return ToolRouter(ws, exposed_tools(list(PHISHING.services), None))


SOLE_CASES = [
    {"message_id": "msg-501"},
    {"message_id": 501},  # not a text: the table declines, the model says why
    {"message_id": None},
    {"message_id": True},
    {"message_id": ["msg-501"]},
    {"id": "msg-501"},  # the wrong key
    {"message_id": "msg-501", "extra": 1},  # two keys
    {},
]


@pytest.mark.parametrize("args", SOLE_CASES)
def test_the_sole_text_argument_shortcut_gives_what_the_table_and_model_give(args: dict[str, Any]) -> None:
    router = _router()
    info = router.tools["mail_read"]
    ok, error = True, None
    kwargs = router.validate(info, dict(args))
    if not isinstance(kwargs, dict):
        ok, error = False, kwargs.error
    called = router.call("mail_read", json.dumps(args), {})
    assert called[2:4] == (ok, error)
    if not ok:
        assert json.loads(called[4]) == {"error": error}


def test_the_sole_text_argument_is_found_only_where_the_table_passes_the_text_unchanged() -> None:
    router = _router()
    found = 0
    for name, info in ALL_TOOLS.items():
        router.tools[name] = info
        sole = router._plan(info)[1]
        if sole is None:
            continue
        found += 1
        args = {sole: "x"}
        assert compiled(info.args_model).fast(args) is args, name
        assert list(info.args_model.model_fields) == [sole] and info.args_model.model_fields[sole].is_required()
    assert found >= 10  # the usual reads by id take it (else the test above proves nothing)


def test_a_read_step_takes_the_shortcuts_and_matches_the_general_step() -> None:
    turn = AssistantTurn(tool_calls=[ToolCall(id="c", name="mail_read", arguments='{"message_id": "msg-501"}')])
    lean, general = Environment(PHISHING), Environment(PHISHING)
    obs = lean._lean_step(turn)
    assert obs is not None
    general.step(turn.model_dump())  # a message dict: never on the lean path
    assert lean.messages == general.messages and obs.messages == general.messages[-1:]
    assert [c.model_dump() for c in lean.log.calls] == [c.model_dump() for c in general.log.calls]
    assert [(s.model_dump(), s.model_fields_set) for s in lean.steps] == [
        (s.model_dump(), s.model_fields_set) for s in general.steps
    ]


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
