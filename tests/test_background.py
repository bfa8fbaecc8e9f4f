"""Background records: deterministic, out of every task's reach, paged, and graded as before."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.bank.repair import synthesize
from coworkenv.cli import app
from coworkenv.grading.score import PASS_THRESHOLD
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.episode import run_episode
from coworkenv.spec.checks.base import record_matches
from coworkenv.spec.checks.records import WhereCheck
from coworkenv.spec.models import TaskSpec
from coworkenv.synth.background import WORKSPACES, background
from coworkenv.synth.blueprints import BLUEPRINTS
from coworkenv.synth.chains import COMPOSED
from coworkenv.synth.composer import compose, derive, plan, workflow, workflows
from coworkenv.synth.domain_chains import DomainWorkflow
from coworkenv.synth.fake import generator
from coworkenv.synth.reserved import Pool, reserved
from coworkenv.synth.steps.domain import LOCATE_ITEM
from coworkenv.synth.world import World

SAMPLE = [plan(11, i) for i in range(len(BLUEPRINTS))] + [plan(11, i, generator="composed") for i in range(10)]


def records(spec: TaskSpec) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(s, c, r["id"]): r for s, colls in spec.services.items() for c, rows in colls.items() for r in rows}


def background_of(recipe: Any) -> tuple[TaskSpec, dict[tuple[str, str, str], dict[str, Any]]]:
    """The realistic spec and its background records (those the small workspace of the same recipe lacks)."""
    big, small = compose(recipe), compose(replace(recipe, workspace="small"))
    task = records(small)
    assert all(records(big)[key] == rec for key, rec in task.items())  # the task's records are untouched
    return big, {k: r for k, r in records(big).items() if k not in task}


def where_checks(spec: TaskSpec) -> list[WhereCheck]:
    checks = [*spec.checks, *(c for stage in spec.stages or [] for c in stage.checks)]
    return [c for c in checks if isinstance(c, WhereCheck)]


def test_the_same_recipe_gives_the_same_bytes_and_another_seed_another_background() -> None:
    recipe = plan(3, 4)
    one, two = compose(recipe), compose(plan(3, 4))
    assert one.model_dump_json() == two.model_dump_json() and one.id == two.id
    other = compose(recipe.reroll())
    assert records(one).keys() != records(other).keys() or one.services != other.services


def test_realistic_workspaces_hold_hundreds_of_records_and_small_ones_the_task_alone() -> None:
    sizes = sorted(len(background_of(r)[1]) for r in SAMPLE)
    assert sizes[len(sizes) // 2] >= 150 and sizes[len(sizes) // 10] >= 40
    small = compose(replace(SAMPLE[0], workspace="small"))
    assert len(records(small)) < 60


def test_no_check_of_the_task_selects_a_background_record() -> None:
    for recipe in SAMPLE:
        spec, extra = background_of(recipe)
        assert extra, recipe.blueprint
        for check in where_checks(spec):
            hits = [k for k, r in extra.items() if k[:2] == (check.service, check.collection)]
            assert not [k for k in hits if record_matches(check.where, extra[k])], (recipe.blueprint, check.id)


def test_background_holds_no_word_the_task_searches_for() -> None:
    for recipe in SAMPLE[:12]:
        bp, world = workflow(recipe.blueprint), World(derive(recipe.seed, recipe.world))
        draft = bp.build(world, frozenset())
        taken = reserved(draft)
        for rows in (rows for colls in background(draft, world).values() for rows in colls.values()):
            for rec in rows:
                text = " ".join(str(v) for k, v in rec.items() if k in ("subject", "body", "title", "name", "text"))
                assert not [w for w in taken.searched if w in text.lower()], (recipe.blueprint, rec)


def test_a_tiny_name_pool_for_the_task_still_leaves_background_out_of_its_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The task's people are named from the most common names of the background's own pools."""
    fake = generator()
    firsts, lasts = ["James", "Mary", "John", "Linda", "David", "Susan"], ["Smith", "Johnson", "Brown", "Jones", "Lee"]
    monkeypatch.setattr(fake, "first_name", lambda: fake.random.choice(firsts))  # seeded with the world
    monkeypatch.setattr(fake, "last_name", lambda: fake.random.choice(lasts))
    for name in ("meeting_scheduling", "customer_followup", "inbox_triage", "expense_report"):
        recipe = next(r for r in SAMPLE if r.blueprint == name)
        spec, extra = background_of(recipe)
        assert extra
        taken = {n.lower() for n in (*firsts, *lasts)}
        world = World(derive(recipe.seed, recipe.world))  # mail is the user's; colleagues share the company's name
        for rec in extra.values():
            text = " ".join(str(v) for v in rec.values()).lower().replace(world.me.email, "")
            text = text.replace(world.domain, "").replace(world.company.lower(), "")
            assert not [n for n in taken if n in text], (name, rec)
        assert run_episode(Environment(spec), OracleTeacher()).grade.score == 1.0, name  # type: ignore[union-attr]


def test_the_reference_scores_full_marks_over_background() -> None:
    for recipe in SAMPLE:
        spec = compose(recipe)
        grade = run_episode(Environment(spec), OracleTeacher()).grade
        assert grade is not None and grade.score == 1.0, (recipe.blueprint, grade)


@pytest.mark.parametrize("index", [0, 5, 9, 14, 17])
def test_specs_with_background_pass_the_admission_rule_and_the_cheats_still_fail(index: int) -> None:
    outcome = synthesize(SAMPLE[index], 3)  # verified, and repaired where a first draw fails (as the bank does)
    v = outcome.verification
    assert outcome.spec is not None and v.admitted, (SAMPLE[index].blueprint, v.kinds)
    assert len(records(outcome.spec)) >= 60
    cheats = {k: p for k, p in v.probes.items() if k.split("@")[0] in ("do_nothing", "report_dump")}
    assert [k for k in cheats if k.startswith("do_nothing")], sorted(v.probes)
    assert all(p.score < PASS_THRESHOLD for p in cheats.values()), cheats


def test_a_page_past_the_end_is_empty_and_says_so() -> None:
    spec = compose(next(r for r in SAMPLE if "mail" in compose(r).services))
    env = Environment(spec)
    env.reset()
    mail = env.workspace.services["mail"]
    total = mail.search()["total"]
    assert total > 100
    first = mail.search(limit=10)
    assert len(first["messages"]) == 10 and first["next_offset"] == 10 and "note" not in first
    past = mail.search(offset=total + 5)
    assert past["messages"] == [] and past["next_offset"] is None and "past the last result" in past["note"]
    last = mail.search(offset=total - 1)
    assert len(last["messages"]) == 1 and last["next_offset"] is None and "note" not in last


def test_the_pool_takes_out_every_word_holding_a_reserved_one() -> None:
    pool = Pool(["Marketing", "market", "Smith", "Smithers", "Lee"])
    taken = reserved(workflow("meeting_scheduling").build(World(1), frozenset()))
    clean = pool.without(replace(taken, words=frozenset({"smith", "ket"}), values=frozenset({"lee"})))
    assert clean == []
    assert pool.without(replace(taken, words=frozenset({"smithe"}), values=frozenset())) == [
        "Marketing",
        "market",
        "Smith",
        "Lee",
    ]


def test_an_option_holding_a_reserved_word_anywhere_or_equal_to_a_value_is_never_chosen() -> None:
    taken = reserved(workflow("meeting_scheduling").build(World(1), frozenset()))
    hostile = replace(taken, words=frozenset({"ket", "smith"}), values=frozenset({"lee", "ops"}))
    options = ("Marketing", "blacksmith", "SMITHY", "Lee", "ops", "Leeward", "pending", "pending", "ket")
    assert hostile.choices(options) == ["Leeward", "pending", "pending"]
    assert replace(hostile, words=frozenset(), values=frozenset()).choices(options) == list(options)


def test_an_unknown_workspace_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown workspace 'huge'"):
        plan(0, 0, workspace="huge")
    result = CliRunner().invoke(app, ["synth", "--n", "1", "--out", str(tmp_path / "b"), "--workspace", "huge"])
    assert result.exit_code == 2 and "unknown workspace 'huge'" in result.output
    assert set(WORKSPACES) == {"small", "realistic"}


def test_a_bank_keeps_its_workspace_size_when_resumed(tmp_path: Path) -> None:
    out = tmp_path / "bank"
    result = CliRunner().invoke(app, ["synth", "--n", "1", "--out", str(out), "--workspace", "small"])
    assert result.exit_code == 0, result.output
    again = CliRunner().invoke(app, ["synth", "--n", "2", "--out", str(out)])
    assert again.exit_code == 2 and "workspace" in again.output


def test_composed_families_all_get_background() -> None:
    for family in COMPOSED:
        recipe = plan(5, list(COMPOSED).index(family), blueprints=[family])
        assert len(background_of(recipe)[1]) >= 60, family


def test_judging_keeps_verdicts_beside_the_check_and_drops_them_when_it_changes() -> None:
    from coworkenv.spec.checks import KINDS

    check = KINDS["count"].model_validate(
        {"kind": "count", "id": "c", "service": "mail", "collection": "messages", "where": "r.unread", "value": 1}
    )
    twin = check.model_copy()
    rec = {"id": "m1", "unread": True}

    class State:
        def initial_records(self, service: str, collection: str) -> dict[str, Any]:
            return {"m1": rec}

        def records(self, service: str, collection: str) -> dict[str, Any]:
            return {"m1": rec}

    assert check.judge(State()) == (True, "count=1") and check == twin  # a judged check equals its copy
    check.where = "not r.unread"
    assert check.judge(State()) == (False, "count=0")


def test_drive_hr_payments_and_declared_domains_get_background_out_of_the_tasks_reach() -> None:
    """Each business service and a declared domain gets records of its own, none a check selects, and the
    reference still scores full marks; a domain keyed by a tag gets tags of its own."""
    families = list(workflows("mix"))
    wanted = {"drive", "hr", "payments", "itassets"}
    covered: set[str] = set()
    for family in ("composed:drive_folder", "composed:invoice", "composed:book_leave", "domain:by_date"):
        for seed in range(3):
            recipe = plan(seed, families.index(family), blueprints=[family])
            spec, extra = background_of(recipe)
            covered |= {k[0] for k in extra} & wanted
            for check in where_checks(spec):
                hits = [r for k, r in extra.items() if k[:2] == (check.service, check.collection)]
                assert not [r for r in hits if record_matches(check.where, r)], (family, check.id)
            assert run_episode(Environment(spec), OracleTeacher()).grade.score == 1.0, family  # type: ignore[union-attr]
    assert {"drive", "hr", "payments"} <= covered
    world = World(3)
    domain = DomainWorkflow(LOCATE_ITEM[0], domains=("itassets",))
    draft = domain.build(world, frozenset())
    task = {r["id"] for r in draft.fixtures["itassets"]["assets"]}
    rows = background(draft, world)["itassets"]["assets"]
    assert len(rows) >= 20 and all(r["id"] == r["asset_tag"] for r in rows)
    assert len({r["id"] for r in rows} | task) == len(rows) + len(task)
