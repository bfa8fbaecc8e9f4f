"""Id styles: the ids an environment shows (``TKT-104``, ``tkt_104``, ``ticket-00104``, ``T104``) over the ids its
services use, applied to every text both ways; the checks, the reference and the grade keep canonical ids."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.bank.diversity import id_style_of
from coworkenv.bank.store import load_bank, synthesize_bank
from coworkenv.data.sft import sft_example
from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.runtime.episode import run_episode
from coworkenv.runtime.ids import MASK, IdMap, SpecIds, id_problems, spec_ids
from coworkenv.runtime.interface import InterfaceError
from coworkenv.spec import SpecError, load_spec, spec_from_data
from coworkenv.spec.interface import CANONICAL_ID, IdStyle
from coworkenv.spec.models import TaskSpec
from coworkenv.synth.interfaces import HELD_OUT_ID_STYLES, TRAIN_ID_STYLES, draw_ids, draw_interface
from coworkenv.verify.admission import verify

STYLES = {
    "upper": IdStyle(case="upper"),
    "snake": IdStyle(separator="_"),
    "padded": IdStyle(width=5, prefixes={"tkt": "ticket", "msg": "message"}),
    "short": IdStyle(case="upper", separator="", prefixes={"tkt": "t", "msg": "m"}),
}
SHOWN_104 = {"upper": "TKT-104", "snake": "tkt_104", "padded": "ticket-00104", "short": "T104"}
BODY = "Please close tkt-104: the printer works again. Not tkt-105, that is the scanner; part sku-104 came today."
ANSWER = "I closed tkt-104 as msg-1 asked and opened ${new.id} for the follow-up."
DATA: dict[str, Any] = {
    "id": "ids",
    "title": "Close the ticket a mail names",
    "services": {
        "mail": {
            "messages": [
                {
                    "id": "msg-1",
                    "sender": "ann@corp.io",
                    "to": ["me@corp.io"],
                    "subject": "Printer",
                    "body": BODY,
                    "date": "2025-03-05T10:00",
                },
            ]
        },
        "tickets": {
            "tickets": [
                {"id": "tkt-104", "title": "Printer jammed", "team": "it"},
                {"id": "tkt-105", "title": "Scanner offline", "team": "it"},
            ]
        },
    },
    "user": {"opening": "Ann's mail msg-1 says which ticket to close. Close it, open a follow-up check for it, and "},
    "checks": [
        {
            "id": "closed",
            "kind": "field_equals",
            "service": "tickets",
            "collection": "tickets",
            "record_id": "tkt-104",
            "field": "status",
            "value": "closed",
            "required": True,
        },
        {
            "id": "follow_up",
            "kind": "count",
            "service": "tickets",
            "collection": "tickets",
            "where": "r.title == 'Check printer tkt-104'",
            "op": "==",
            "value": 1,
            "required": True,
        },
        {"id": "mail_guard", "kind": "unchanged", "service": "mail", "collection": "messages", "required": True},
        {
            "id": "guard",
            "kind": "unchanged",
            "service": "tickets",
            "collection": "tickets",
            "allow": "r.id == 'tkt-104' or r.title == 'Check printer tkt-104'",
            "required": True,
        },
        {
            "id": "told",
            "kind": "answer_contains",
            "values": ["tkt-104", "tkt-3"],
            "excludes": ["tkt-105"],
            "required": True,
        },
    ],
    "reference": [
        {"call": "mail_read", "args": {"message_id": "msg-1"}},
        {"call": "tickets_update", "args": {"ticket_id": "tkt-104", "status": "closed"}},
        {
            "call": "tickets_create",
            "args": {"title": "Check printer tkt-104", "description": "Follow-up of tkt-104", "team": "it"},
            "save_as": "new",
        },
        {"answer": ANSWER},
    ],
}
DATA["user"]["opening"] += "tell me the ids."


def styled(style: IdStyle | None, data: dict[str, Any] | None = None) -> TaskSpec:
    doc = json.loads(json.dumps(data or DATA))
    if style is not None:
        doc["interface"] = {"style": "verb_noun", "ids": style.model_dump()}
    return spec_from_data(doc, "ids")


def played(spec: TaskSpec) -> Environment:
    env = Environment(spec)
    run_episode(env, OracleTeacher().for_task(spec))
    return env


def tool_contents(env: Environment) -> list[str]:
    return [str(m["content"]) for m in env.messages if m["role"] == "tool"]


def turn(name: str, args: dict[str, object], content: str | None = None) -> AssistantTurn:
    return AssistantTurn(content=content, tool_calls=[ToolCall(id="c1", name=name, arguments=args)])


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> list[TaskSpec]:
    out = tmp_path_factory.mktemp("bank")
    synthesize_bank(out, n=24, seed=11)
    return [spec for spec, _ in load_bank(out)]


# --- the bijection ----------------------------------------------------------------------------------------------


def every_id(spec: TaskSpec) -> frozenset[str]:
    ids = spec_ids(spec.model_copy(update={"interface": styled(STYLES["upper"]).interface}))
    assert ids is not None
    return ids.initial


def test_every_id_of_a_bank_round_trips_under_every_style(bank: list[TaskSpec]) -> None:
    seen = 0
    for spec in bank:
        ids = sorted(every_id(spec))
        drawn = [draw_ids(spec, random.Random(seed), (kind,)) for seed in range(3) for kind in ("padded", "short")]
        for style in [*STYLES.values(), *(d for d in drawn if d is not None)]:
            shown = [style.render(rid) for rid in ids]
            assert len(set(shown)) == len(ids) or spec_ids(_with(spec, style)).problems  # type: ignore[union-attr]
            for rid, form in zip(ids, shown, strict=True):
                assert style.parse(form) in (rid, None if form == rid else rid), (rid, form)
                seen += 1
            text = " ".join(ids)
            mapping = IdMap(style, SpecIds(frozenset(ids), frozenset(), ()))
            assert mapping.into(mapping.out(text)) == text
            assert mapping.out(text) == " ".join(shown)
    assert seen > 1000  # a real bank has thousands of ids


def _with(spec: TaskSpec, style: IdStyle) -> TaskSpec:
    return spec.model_copy(update={"interface": styled(style).interface})


_PREFIX = st.from_regex(r"[a-z]{1,3}", fullmatch=True)
_IDS = st.lists(
    st.one_of(
        st.builds(lambda p, n: f"{p}-{n}", _PREFIX, st.integers(0, 120)),
        st.from_regex(r"[A-Za-z]{1,3}[-_]?[0-9]{1,3}", fullmatch=True),
        st.from_regex(r"[a-z]{1,3}-0[0-9]", fullmatch=True),
    ),
    max_size=12,
)


@given(
    st.sampled_from(("lower", "upper")),
    st.sampled_from(("-", "_", "")),
    st.integers(0, 4),
    st.dictionaries(_PREFIX, _PREFIX, max_size=3),
    _IDS,
)
def test_id_problems_finds_every_id_shown_as_another(
    case: Any, separator: Any, width: int, prefixes: dict[str, str], ids: list[str]
) -> None:
    """The check skips ids of the services' form whose prefix nothing else is shown as: it must still name exactly
    the ids whose shown form reads back as another id, as rendering and reading back every id does."""
    try:
        style = IdStyle(case=case, separator=separator, width=width, prefixes=prefixes)
    except ValueError:
        return
    every = [
        f"interface.ids: {rid!r} and {back!r} are both shown as {style.render(rid)!r}"
        for rid in sorted(ids)
        if (back := style.parse(style.render(rid))) is not None and back != rid
    ]
    assert id_problems(style, ids) == every


@given(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.integers(0, 10**7), st.sampled_from(sorted(STYLES)))
def test_each_style_is_an_exact_bijection(prefix: str, number: int, name: str) -> None:
    style = STYLES[name]
    rid = f"{prefix}-{number}"
    shown = style.render(rid)
    if style.parse(shown) != rid:  # ``m-0`` under a style that shows ``msg-0`` as ``M0`` too: refused
        assert id_problems(style, [rid]), rid
        return
    assert style.render(style.parse(shown) or "") == shown
    assert style.parse(rid) in (None, rid) or shown == rid  # the canonical form is no other id's shown form


@pytest.mark.parametrize("name", sorted(STYLES))
def test_the_shown_forms_real_apis_use(name: str) -> None:
    assert STYLES[name].render("tkt-104") == SHOWN_104[name]
    assert STYLES[name].render("inv-2024-031") == "inv-2024-031"  # not a service id: shown as it is
    assert STYLES[name].parse("tkt-0104" if name != "padded" else "ticket-104") is None


# --- out and in -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(STYLES))
def test_the_agent_sees_styled_ids_everywhere(name: str) -> None:
    env = played(styled(STYLES[name]))
    shown, other = SHOWN_104[name], STYLES[name].render("tkt-105")
    user_turns = [str(m["content"]) for m in env.messages if m["role"] == "user"]
    assert STYLES[name].render("msg-1") in user_turns[0]  # the opening request
    body = next(c for c in tool_contents(env) if "printer works" in c)  # the mail body
    assert shown in body and other in body and "tkt-104" not in body and "tkt-105" not in body
    assert "sku-104" in body  # an id-looking word that is no id of this environment is left alone
    created = STYLES[name].render("tkt-3")
    assert any(created in c for c in tool_contents(env))  # an id made during the episode
    said = [str(m["content"]) for m in env.messages if m["role"] == "assistant" and m["content"]]
    assert shown in said[-1] and created in said[-1] and "tkt-104" not in said[-1]  # the demo shows styled ids
    calls = [c for m in env.messages for c in m.get("tool_calls") or []]  # type: ignore[attr-defined]
    assert shown in calls[1]["function"]["arguments"]


@pytest.mark.parametrize("name", sorted(STYLES))
def test_a_styled_oracle_passes_and_grades_as_the_canonical_run(name: str) -> None:
    plain, shown = played(styled(None)), played(styled(STYLES[name]))
    assert shown.grade().score == 1.0
    assert shown.grade().model_dump() == plain.grade().model_dump()
    assert shown.workspace.state_hash() == plain.workspace.state_hash()
    assert [c.args for c in shown.log.calls] == [c.args for c in plain.log.calls]  # canonical ids in the record
    assert shown.log.answers == plain.log.answers  # the final answer is read back before grading


@pytest.mark.parametrize("name", sorted(STYLES))
def test_styled_specs_are_admitted(name: str) -> None:
    report = verify(styled(STYLES[name]))
    assert report.admitted, [(f.where, f.evidence) for f in report.findings]


def test_a_canonical_id_under_a_styled_interface_is_unknown() -> None:
    env = Environment(styled(STYLES["upper"]))
    env.reset()
    obs = env.step(turn("tickets_update", {"ticket_id": "tkt-104", "status": "closed"}))
    error = json.loads(str(obs.messages[0]["content"]))["error"]
    assert error == "no tickets record with id 'tkt-104'"  # as the agent wrote it, and no id it was shown
    assert MASK not in error
    assert env.workspace.state["tickets"]["tickets"]["tkt-104"]["status"] == "open"
    obs = env.step(turn("tickets_update", {"ticket_id": "TKT-104", "status": "closed"}))
    assert json.loads(str(obs.messages[0]["content"]))["ticket"]["id"] == "TKT-104"
    assert env.workspace.state["tickets"]["tickets"]["tkt-104"]["status"] == "closed"


def test_a_cheating_answer_with_canonical_ids_fails_the_answer_check() -> None:
    """An agent that names the ticket by an id the interface never showed does not state it."""
    spec = styled(STYLES["snake"])
    for said, told in (("Closed tkt-104 and opened tkt-3.", False), ("Closed tkt_104 and opened tkt_3.", True)):
        env = Environment(spec)
        env.reset()
        env.step(turn("tickets_update", {"ticket_id": "tkt_104", "status": "closed"}))
        env.step(turn("tickets_create", {"title": "Check printer tkt_104", "description": "-", "team": "it"}))
        env.step(AssistantTurn(content=said))
        checks = {c.id: c.passed for c in env.grade().checks}
        assert checks["closed"] and checks["follow_up"]  # a title naming the shown id names the canonical one
        assert checks["told"] is told, said


def test_text_the_agent_writes_keeps_a_canonical_id_apart_and_reads_back_as_written() -> None:
    env = Environment(styled(STYLES["upper"]))
    env.reset()
    body = "Re TKT-104 (and tkt-105, sku-9)"
    env.step(turn("mail_send", {"to": ["ann@corp.io"], "subject": "Printer", "body": body}))
    stored = next(
        m for m in env.workspace.state["mail"]["messages"].values() if m["subject"] == "Printer" and m["id"] != "msg-1"
    )
    assert stored["body"] == f"Re tkt-104 (and tkt{MASK}-105, sku-9)"  # no check can take tkt-105 for the ticket
    obs = env.step(turn("mail_read", {"message_id": "MSG-2"}))
    assert json.loads(str(obs.messages[0]["content"]))["body"] == body  # read back exactly as written


def test_free_text_that_looks_like_an_id_is_left_alone_both_ways() -> None:
    mapping = IdMap(STYLES["short"], SpecIds(frozenset({"tkt-104"}), frozenset({"tkt"}), ()))
    for text in ("covid-19 and Q3 2025-03-05", "T105 x-tkt-104 tkt-104@corp.io tkt-1040", "TT104 T0104 t104"):
        assert mapping.into(text) == text and mapping.out(text) == text
    assert mapping.out("see tkt-104. (tkt-104)") == "see T104. (T104)"
    assert mapping.into("see T104, T105.") == "see tkt-104, T105."


def test_an_event_notice_and_the_record_it_inserts_show_styled_ids() -> None:
    data = json.loads(json.dumps(DATA))
    data["events"] = [
        {
            "id": "new_ticket",
            "after_step": 1,
            "mutations": [
                {
                    "op": "insert",
                    "service": "tickets",
                    "collection": "tickets",
                    "record": {"id": "tkt-200", "title": "Toner low", "team": "it"},
                }
            ],
            "notify": "Ann opened tkt-200 about tkt-104's toner.",
        }
    ]
    env = Environment(styled(STYLES["padded"], data))
    env.reset()
    obs = env.step(turn("mail_read", {"message_id": "message-00001"}))
    notices = [str(m["content"]) for m in obs.messages if m["role"] == "user"]
    assert notices == ["[environment] Notification: Ann opened ticket-00200 about ticket-00104's toner."]
    obs = env.step(turn("tickets_get", {"ticket_id": "ticket-00200"}))
    assert json.loads(str(obs.messages[0]["content"]))["id"] == "ticket-00200"


# --- specs and synthesis ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "problem"),
    [
        ({"case": "title"}, "interface.ids.case"),
        ({"separator": "/"}, "interface.ids.separator"),
        ({"width": 40}, "interface.ids.width"),
        ({"prefixes": {"tkt": "T1"}}, "interface.ids.prefixes.tkt"),
        ({"prefixes": {"tkt": "t", "tsk": "t"}}, "interface.ids: Value error, prefixes: 'tkt' and 'tsk'"),
        ({}, "shows every id as it is"),
        ({"case": "upper", "color": "red"}, "interface.ids.color"),
    ],
)
def test_a_malformed_id_style_is_a_spec_error(tmp_path: Path, ids: dict[str, object], problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**DATA, "interface": {"style": "x", "ids": ids}}))
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert str(path) in str(err.value) and problem in str(err.value), str(err.value)


def test_a_style_that_shows_two_ids_alike_is_refused() -> None:
    data = json.loads(json.dumps(DATA))
    data["services"]["tickets"]["tickets"].append({"id": "TKT-104", "title": "Upper-case twin", "team": "it"})
    with pytest.raises(
        InterfaceError, match=re.escape("interface.ids: 'TKT-104' and 'tkt-104' are both shown as 'TKT-104'")
    ):
        Environment(styled(STYLES["upper"], data))
    report = verify(styled(STYLES["upper"], data))  # the verifier names it instead of failing on it
    assert [(f.where, f.evidence) for f in report.findings] == [
        ("interface.ids", "'TKT-104' and 'tkt-104' are both shown as 'TKT-104'")
    ]
    assert draw_ids(styled(None, data), random.Random(0), ("upper",)) is None  # synthesis never draws it


def test_the_canonical_interface_has_no_id_map() -> None:
    assert Environment(styled(None)).ids is None


def test_draws_are_deterministic_and_the_held_out_style_only_in_the_held_out_family(bank: list[TaskSpec]) -> None:
    spec = bank[0]
    assert [draw_interface(spec, s) for s in range(12)] == [draw_interface(spec, s) for s in range(12)]
    train = {id_style_of(_drawn(spec, s, "train")) for s in range(40)}
    held = {id_style_of(_drawn(spec, s, "held_out")) for s in range(10)}
    assert {"tkt-104", "TKT-104", "tkt_104"} <= train and not any(s[0] == "T" and s[1].isdigit() for s in train)
    assert held == {"T104"}
    assert draw_interface(spec, 3, "canonical") is None
    assert TRAIN_ID_STYLES[0] == "as_is" and HELD_OUT_ID_STYLES == ("short",)


def _drawn(spec: TaskSpec, seed: int, which: str) -> TaskSpec:
    return spec.model_copy(update={"interface": draw_interface(spec, seed, which)})


def test_a_bank_under_drawn_id_styles_is_admitted_and_its_demos_show_them(bank: list[TaskSpec]) -> None:
    styled_specs = [s for s in bank if s.interface is not None and s.interface.ids is not None]
    assert styled_specs  # the drawn styles reach the bank
    for spec in styled_specs[:4]:
        env = played(spec)
        assert env.grade().score == 1.0
        example = sft_example(env.trajectory("oracle"))
        calls = [c for m in example["messages"] for c in m.get("tool_calls") or []]
        args = " ".join(c["function"]["arguments"] for c in calls)
        canonical = [w for w in CANONICAL_ID.findall(args) if f"{w[0]}-{w[1]}" in every_id(spec)]
        assert not canonical, canonical  # the demo names records only by their shown ids
