"""Tool interfaces: the names, arguments and results an environment shows over the same operations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import coworkenv
from coworkenv.agents.oracle import OracleTeacher
from coworkenv.bank.store import BankError, synthesize_bank
from coworkenv.cli import app
from coworkenv.data.sft import sft_example
from coworkenv.runtime import Environment
from coworkenv.runtime.episode import run_episode
from coworkenv.runtime.interface import InterfaceError
from coworkenv.spec import SpecError, load_spec, spec_from_data
from coworkenv.spec.interface import Interface
from coworkenv.spec.io import canonical_json
from coworkenv.synth.composer import compose, plan
from coworkenv.synth.interfaces import HELD_OUT_STYLES, TRAIN_STYLES, draw_interface
from coworkenv.verify.admission import verify
from coworkenv.verify.static import static_findings
from minispec import CREATE_TAXI, call, play, tiny_data, tiny_spec

EXAMPLES = Path(coworkenv.__file__).parent / "examples"
SHOWN = {
    "style": "vendor",
    "order": "reversed",
    "tools": {
        "expenses_create_expense": {
            "name": "expensify_add_expense",
            "args": {"employee": "who", "amount": "value"},
            "description": "Expensify: file an expense.",
        },
        "mail_search": {
            "name": "gmail_find_messages",
            "args": {"query": "q", "limit": "page_size", "offset": "cursor"},
            "results": {"messages": "items", "total": "total_count", "next_offset": "next_cursor"},
        },
    },
}
SHOWN_TAXI = {**{k: v for k, v in CREATE_TAXI.items() if k not in ("employee", "amount")}, "who": "tom@corp.io"}
SHOWN_TAXI["value"] = 38.5


def shown_spec(interface: dict | None = None, **overrides: object) -> object:
    return tiny_spec(interface=interface or SHOWN, **overrides)


def reference_run(spec: object) -> Environment:
    env = Environment(spec)  # type: ignore[arg-type]
    run_episode(env, OracleTeacher().for_task(spec))  # type: ignore[arg-type]
    return env


def tool_error(obs: object) -> str:
    message = obs.messages[0]  # type: ignore[attr-defined]
    assert message["role"] == "tool"
    return str(json.loads(message["content"])["error"])


def test_the_agent_sees_the_shown_schemas() -> None:
    tools = {t["function"]["name"]: t["function"] for t in Environment(shown_spec()).router.schemas()}
    assert "expenses_create_expense" not in tools and "mail_search" not in tools
    search = tools["gmail_find_messages"]
    assert {"q", "page_size", "cursor"} <= set(search["parameters"]["properties"])
    assert "query" not in search["parameters"]["properties"]
    add = tools["expensify_add_expense"]
    assert add["description"] == "Expensify: file an expense."
    assert {"who", "value"} <= set(add["parameters"]["required"])
    assert "mail_read" in tools  # a tool the interface leaves alone keeps its own name


def test_the_oracle_passes_under_an_interface_with_the_canonical_grade_and_state() -> None:
    plain, shown = reference_run(tiny_spec()), reference_run(shown_spec())
    assert shown.grade().score == 1.0
    assert shown.grade().model_dump() == plain.grade().model_dump()
    assert shown.workspace.state_hash() == plain.workspace.state_hash()
    assert [c.tool for c in shown.log.calls] == ["expenses_create_expense"]  # records keep the canonical tool
    assert shown.log.calls[0].args == CREATE_TAXI
    sent = shown.messages[2]["tool_calls"][0]["function"]
    assert sent["name"] == "expensify_add_expense" and json.loads(sent["arguments"]) == SHOWN_TAXI


def test_a_canonical_name_under_an_interface_is_an_unknown_tool() -> None:
    env = Environment(shown_spec())
    obs = play(env, [call("expenses_create_expense", CREATE_TAXI)])[-1]
    error = tool_error(obs)
    assert "unknown tool 'expenses_create_expense'" in error and "expensify_add_expense" in error
    assert not env.log.calls[0].ok and env.log.calls[0].args is None
    assert env.grade().score < 0.75


@pytest.mark.parametrize("args", [CREATE_TAXI, {**SHOWN_TAXI, "colour": "red"}])
def test_an_argument_the_shown_tool_does_not_take_is_an_error(args: dict) -> None:
    env = Environment(shown_spec())
    obs = play(env, [call("expensify_add_expense", args)])[-1]
    error = tool_error(obs)
    assert error.startswith("unknown argument") and "expensify_add_expense" in error and "who" in error
    assert env.workspace.state_hash() == Environment(tiny_spec()).workspace.state_hash()


def test_validation_errors_name_the_shown_arguments() -> None:
    env = Environment(shown_spec())
    obs = play(env, [call("expensify_add_expense", {**SHOWN_TAXI, "value": "lots"})])[-1]
    error = tool_error(obs)
    assert "expensify_add_expense" in error and "value" in error and "amount" not in error


def test_results_are_rendered_and_pages_past_the_end_are_empty() -> None:
    env = Environment(shown_spec())
    first = json.loads(play(env, [call("gmail_find_messages", {"page_size": 1})])[-1].messages[0]["content"])
    assert list(first) == ["next_cursor", "total_count", "items"]  # renamed, fields reversed
    assert first["total_count"] == 2 and first["next_cursor"] == 1 and len(first["items"]) == 1
    assert list(first["items"][0])[-1] == "id"
    past = json.loads(env.step(call("gmail_find_messages", {"page_size": 1, "cursor": 5}, "c2")).messages[0]["content"])
    assert past == {
        "note": "this page starts past the last result (2 in all): no more pages",
        "next_cursor": None,
        "total_count": 2,
        "items": [],
    }
    assert env.log.calls[-1].tool == "mail_search" and env.log.calls[-1].args == {"limit": 1, "offset": 5}


def test_checks_and_faults_name_the_canonical_tool() -> None:
    checks = [
        *tiny_data()["checks"],
        {"id": "used", "kind": "tool_called", "tool": "expenses_create_expense"},
    ]
    faults = [{"tool": "expenses_create_expense", "on_call": 1}]
    env = reference_run(shown_spec(checks=checks, faults=faults))
    assert env.grade().score == 1.0 and env.log.calls[0].fault
    assert [c.tool for c in env.log.calls] == ["expenses_create_expense"] * 2


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        ({"a": {"args": {"x": "q", "y": "q"}}}, "both render as 'q'"),
        ({"a": {"name": "same"}, "b": {"name": "same"}}, "both render as 'same'"),
        ({"a": {"name": "has space"}}, "tools.a.name"),
        ({"a": {"surprise": 1}}, "tools.a.surprise"),
    ],
)
def test_a_malformed_interface_is_a_spec_error(tools: dict, problem: str) -> None:
    with pytest.raises(SpecError) as err:
        spec_from_data(tiny_data(interface={"style": "x", "tools": tools}), "bad.yaml")
    assert str(err.value).startswith("bad.yaml: invalid spec") and problem in str(err.value)


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        ({"calendar_list_events": {"name": "x"}}, "interface.tools.calendar_list_events: not a tool"),
        ({"mail_search": {"args": {"qq": "q"}}}, "interface.tools.mail_search.args.qq: mail_search has no argument"),
        ({"mail_search": {"args": {"query": "limit"}}}, "'limit' is already the name of another argument"),
        ({"mail_search": {"name": "mail_read"}}, "'mail_read' and 'mail_search' are both shown as 'mail_read'"),
    ],
)
def test_an_interface_that_does_not_fit_the_tools_is_rejected(tools: dict, problem: str) -> None:
    spec = shown_spec({"style": "x", "tools": tools})
    found = static_findings(spec)
    assert found and any(problem in f"{f.where}: {f.evidence}" for f in found)
    assert not verify(spec).admitted
    with pytest.raises(InterfaceError, match=r"interface\.tools"):
        Environment(spec)


def test_an_interface_may_swap_two_argument_names() -> None:
    swap = {"style": "x", "tools": {"mail_search": {"args": {"query": "limit", "limit": "query"}}}}
    env = Environment(shown_spec(swap))
    play(env, [call("mail_search", {"query": 1, "limit": "taxi"})])
    assert env.log.calls[0].ok and env.log.calls[0].args == {"limit": 1, "query": "taxi"}


@pytest.mark.parametrize("example", ["phishing_inbox_triage", "travel_spend_review", "hiring_loop_three_days"])
def test_handwritten_examples_are_admitted_under_drawn_interfaces(example: str) -> None:
    spec = load_spec(EXAMPLES / f"{example}.yaml")
    shown = [i for s in range(12) if (i := draw_interface(spec, s, "held_out" if s % 3 == 0 else "train"))][:3]
    assert len(shown) == 3
    for interface in shown:
        assert verify(spec.model_copy(update={"interface": interface})).admitted, interface.style


def test_sft_examples_carry_the_shown_interface() -> None:
    env = reference_run(shown_spec())
    example = sft_example(env.trajectory("oracle"))
    names = {t["function"]["name"] for t in example["tools"]}
    assert "expensify_add_expense" in names and "expenses_create_expense" not in names
    called = [c["function"]["name"] for m in example["messages"] for c in m.get("tool_calls") or []]
    assert called == ["expensify_add_expense"]
    assert example["messages"][3]["name"] == "expensify_add_expense"


def test_the_interface_round_trips_through_spec_files() -> None:
    spec = shown_spec()
    again = spec_from_data(json.loads(canonical_json(spec)))
    assert again.interface == spec.interface and isinstance(again.interface, Interface)


def test_draws_are_deterministic_and_vary_with_the_seed() -> None:
    spec = tiny_spec()
    first = draw_interface(spec, 7)
    assert first == draw_interface(spec, 7)
    drawn = {i.model_dump_json() if (i := draw_interface(spec, s)) else "" for s in range(40)}
    styles = {i.style if (i := draw_interface(spec, s)) else "canonical" for s in range(40)}
    assert len(drawn) > 20 and styles == set(TRAIN_STYLES)
    assert draw_interface(spec, 7, "canonical") is None
    with pytest.raises(ValueError, match="unknown interfaces"):
        draw_interface(spec, 7, "fancy")


def test_the_held_out_family_is_drawn_only_when_asked() -> None:
    train = [compose(plan(5, i)).interface for i in range(30)]
    assert not any(i is not None and i.style in HELD_OUT_STYLES for i in train)
    held = [compose(plan(5, i, interfaces="held_out")).interface for i in range(6)]
    assert all(i is not None and i.style in HELD_OUT_STYLES for i in held)
    assert canonical_json(compose(plan(5, 3))) == canonical_json(compose(plan(5, 3)))


@pytest.mark.parametrize("which", ["train", "held_out"])
def test_composed_specs_under_drawn_interfaces_are_admitted(which: str) -> None:
    for i in range(6):
        spec = compose(plan(11, i, generator="mix", interfaces=which))
        assert spec.interface is not None or which == "train"
        assert verify(spec).admitted, (i, spec.provenance.blueprint)


def test_a_declared_service_is_rendered_too() -> None:
    decl = {
        "description": "parts in stock",
        "collections": {"items": {"fields": {"name": {"type": "string"}, "qty": {"type": "integer"}}}},
        "tools": {
            "inventory_search_items": {
                "op": "search",
                "collection": "items",
                "params": {"query": {"role": "text"}, "ship.to_city": {"role": "equals", "field": "name"}},
            },
            "inventory_get_item": {"op": "get", "collection": "items", "params": {"item_id": {"role": "key"}}},
        },
    }
    spec = tiny_spec(
        services={**tiny_data()["services"], "inventory": {"items": [{"id": "i1", "name": "bolt", "qty": 4}]}},
        declared_services={"inventory": decl},
    )
    shown = [draw_interface(spec, s, "held_out" if s % 2 else "train") for s in range(30)]
    renamed = {i.tool_name("inventory_get_item") for i in shown if i is not None}
    assert len(renamed) > 3
    odd = {r.args.get("ship.to_city") for i in shown if i is not None for r in i.tools.values()}
    assert odd == {None}  # a name no rendering can be shown under keeps its own
    interface = next(i for i in shown if i is not None and "inventory_search_items" in i.tools)
    env = Environment(spec.model_copy(update={"interface": interface}))
    name, args = interface.render_call("inventory_search_items", {"query": "bolt"})
    obs = play(env, [call(name, args)])[-1]
    assert env.log.calls[0].ok and env.log.calls[0].tool == "inventory_search_items"
    assert "bolt" in obs.messages[0]["content"]


def test_synth_refuses_an_unknown_interface_set(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", "--n", "1", "--out", f"{tmp_path}/b", "--interfaces", "fancy"])
    assert result.exit_code == 2 and "unknown interfaces" in result.output


def test_a_held_out_interface_bank_is_held_out_and_counted(tmp_path: Path) -> None:
    held = synthesize_bank(tmp_path / "held", 3, seed=2, interfaces="held_out")
    assert held["split"]["heldout"] == 3 and held["split"]["train"] == 0
    assert held["per_interface"] == {"camel": 3}
    plain = synthesize_bank(tmp_path / "plain", 3, seed=2, interfaces="canonical")
    assert plain["per_interface"] == {"canonical": 3}
    with pytest.raises(BankError, match="interfaces"):
        synthesize_bank(tmp_path / "held", 3, seed=2, interfaces="train")
    shown = CliRunner().invoke(app, ["bank", "stats", str(tmp_path / "held")])
    assert shown.exit_code == 0 and "camel" in shown.output


def test_a_narrowed_menu_under_the_same_interface_shows_only_its_tools() -> None:
    spec = shown_spec()
    full = {t["function"]["name"] for t in Environment(spec).router.schemas()}
    narrowed = spec.model_copy(update={"tools": ["mail_search", "mail_read"]})
    names = {t["function"]["name"] for t in Environment(narrowed).router.schemas()}
    assert names == {"gmail_find_messages", "mail_read"} and names < full
    assert len(full) == len({t["function"]["name"] for t in Environment(spec).router.schemas()})
