"""The LLM generator's parts on their own: reply parsing, novelty, scenarios, prompts, fixes."""

from __future__ import annotations

import copy

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from coworkenv.bank.llm.constructs import check_kind, check_models, describe
from coworkenv.bank.llm.fixes import programmatic_repair
from coworkenv.bank.llm.novelty import common_workflows, features, similarity, sketch
from coworkenv.bank.llm.parse import ReplyError, parse_reply
from coworkenv.bank.llm.prompts import generate_prompt, pick_example, repair_prompt
from coworkenv.bank.llm.scenario import is_llm_job, sample_scenario, target_capabilities
from coworkenv.services.registry import SERVICES
from coworkenv.spec import spec_from_data
from coworkenv.spec.declared import ServiceDecl
from coworkenv.spec.models import (
    GUARD_KINDS,
    Advance,
    Event,
    Fault,
    Mutation,
    Rule,
    Stage,
    TaskSpec,
    UserScript,
)
from coworkenv.spec.user import ContextReply
from coworkenv.verify.admission import verify
from llm_specs import as_json, as_yaml, example, leaked_in_opening, vacuous

CAPS = ("tool_coordination",)


@pytest.mark.parametrize(
    "reply",
    [
        as_json(example("sick_day_calendar_clear")),
        as_json(example("sick_day_calendar_clear"), fenced=True),
        as_yaml(example("sick_day_calendar_clear")),
        as_yaml(example("sick_day_calendar_clear")).strip("`").removeprefix("yaml\n"),
        "Sure, here it is: " + as_json(example("sick_day_calendar_clear")) + "\nHope this helps.",
    ],
)
def test_reply_formats(reply: str) -> None:
    spec = parse_reply(reply, {"capabilities": list(CAPS)})
    assert spec.id == "sick_day_calendar_clear" and spec.capabilities == list(CAPS)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "<reply>: empty"),
        ("I cannot do that.", "no TaskSpec found"),
        (as_json(example("sick_day_calendar_clear"))[:5000], "was the reply cut off?"),
        ('{"id": "x", "title": "t"}', "services: Field required"),
    ],
)
def test_unreadable_replies_name_the_problem(reply: str, problem: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_reply(reply)
    assert any(problem in p for p in err.value.problems)


def test_novelty_separates_near_duplicates_from_other_workflows() -> None:
    a = spec_from_data(example("sick_day_calendar_clear"))
    reworded = copy.deepcopy(example("sick_day_calendar_clear"))
    reworded["user"]["opening"] += " Thanks!"
    b = spec_from_data(reworded)
    c = spec_from_data(example("travel_spend_review"))
    sa, sb, sc = (sketch(features(s)) for s in (a, b, c))
    assert sketch(features(a)) == sa, "sketches are stable"
    assert similarity(sa, sb) >= 0.8 > 0.3 > similarity(sa, sc)
    assert common_workflows([("x → y", "A"), ("z", "B"), ("x → y", "C")])[0] == "x → y (2×, e.g. 'A')"


def test_scenarios_and_targets_are_seeded() -> None:
    assert sample_scenario(3, 7) == sample_scenario(3, 7)
    assert len({sample_scenario(3, i) for i in range(20)}) > 10
    assert target_capabilities(0, 5, CAPS, ("a", "b")) == CAPS
    shares = [is_llm_job(0, i, 0.25) for i in range(400)]
    assert 60 < sum(shares) < 140 and all(is_llm_job(0, i, 1.0) for i in range(10))


def test_prompts_carry_capabilities_catalogue_schema_example_and_avoid_list() -> None:
    text = generate_prompt(4, sample_scenario(0, 4), ("multi_turn",), ("mail_search → mail_send (3×, e.g. 'X')",))
    assert "multi_turn:" in text and "guess_without_asking" in text
    assert "tool `calendar_create_event(title: string" in text, "tool signatures keep a 'title' parameter"
    assert '"TaskSpec"' in text and "Write something different" in text and "Request: job 4, round 0." in text
    name, shown = pick_example(("multi_turn",))
    assert "multi_turn" in example(name)["capabilities"] and shown in text
    ask = repair_prompt(4, 1, ("multi_turn",), ["vacuous_check at checks[1]: e (hint: h)"], [])
    assert "- vacuous_check at checks[1]" in ask and "Request: job 4, round 1." in ask


def test_programmatic_fixes() -> None:
    for broken, fix in (
        (vacuous(example("customer_escalation_update")), "drop vacuous checks"),
        (leaked_in_opening(example("roadmap_sync_clarify_attendee")), "rephrase the leak"),
    ):
        broken["capabilities"] = list(CAPS)
        spec = spec_from_data(broken)
        report = verify(spec)
        assert not report.admitted
        fixed, names = programmatic_repair(spec, report)
        assert names == [fix] and verify(fixed).admitted
    unrequired = example("sick_day_calendar_clear")
    unrequired["capabilities"] = list(CAPS)
    for check in unrequired["checks"]:
        check.pop("required", None)
    spec = spec_from_data(unrequired)
    report = verify(spec)
    assert "weak_requirement" in report.kinds
    fixed, names = programmatic_repair(spec, report)
    assert "require the main check" in names and verify(fixed).admitted


def test_cli_rejects_a_bad_generator_spec(tmp_path) -> None:
    from coworkenv.cli import app

    result = CliRunner().invoke(app, ["synth", "--llm", "vllm:x", "--n", "1", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "expected openai:<model>@<base_url>" in result.output


def test_cli_without_the_openai_sdk_names_the_extra(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Printed whole: the brackets of the extra are not eaten as console markup."""
    import sys

    from coworkenv.cli import app

    monkeypatch.setitem(sys.modules, "openai", None)  # importing it now raises ImportError
    args = ["synth", "--llm", "openai:m@http://127.0.0.1:9", "--n", "1", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "pip install 'coworkenv[openai]'" in result.output


def test_a_spec_that_crashes_the_verifier_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from coworkenv.bank.llm import loop
    from coworkenv.bank.llm.job import brief_for

    def crash(spec: object) -> None:
        raise KeyError("no such collection")

    monkeypatch.setattr(loop, "verify", crash)
    spec, report = loop._judge(as_json(example("sick_day_calendar_clear")), brief_for(0, 0, CAPS, ()), "m")
    assert spec is not None and not report.admitted
    assert report.findings[0].kind == "schema" and "KeyError" in report.findings[0].evidence


def _prose() -> str:
    """The generator's first prompt without the JSON Schema (which names every field but explains none)."""
    text = generate_prompt(1, sample_scenario(0, 1), CAPS, ())
    return text.split("# TaskSpec JSON Schema", 1)[0]


def test_the_prompt_describes_every_check_kind_the_models_accept() -> None:
    prose = _prose()
    for model in check_models():
        kind = check_kind(model)
        assert f"- `{kind}`: " in prose, f"check kind {kind!r} is missing from the generator's prompt"
        assert len(describe(model)) > 30, f"check kind {kind!r} has no docstring saying what it means"
        line = next(x for x in prose.splitlines() if x.startswith(f"- `{kind}`: "))
        shared = next(x for x in prose.splitlines() if x.startswith("Every check has "))
        assert all(f"`{name}`" in line or f"`{name}`" in shared for name in model.model_fields if name != "kind")
    assert all(f"`{g}`" in prose for g in GUARD_KINDS) and "except guards: " + ", ".join(GUARD_KINDS) in prose


@pytest.mark.parametrize(
    "model", [TaskSpec, Event, Mutation, Fault, Rule, Stage, Advance, UserScript, ContextReply, ServiceDecl]
)
def test_the_prompt_names_every_field_of_the_spec_models(model: type[BaseModel]) -> None:
    prose = _prose()
    missing = [name for name in model.model_fields if f"`{name}`" not in prose]
    assert not missing, f"{model.__name__} fields missing from the generator's prompt: {missing}"


def test_the_prompt_names_every_service_and_explains_every_event_and_stage_field() -> None:
    prose = _prose()
    for name, cls in SERVICES.items():
        assert f"`{name}` ({cls.description})" in prose and f"## {name}\n" in prose
    for model, undocumented in ((Event, set()), (Stage, {"id", "advance", "context", "user", "checks", "reference"})):
        bare = {n for n, f in model.model_fields.items() if not f.description} - undocumented
        assert not bare, f"{model.__name__} fields without a description for the prompt: {sorted(bare)}"
