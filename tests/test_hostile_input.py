"""Hostile model output: every class of argument text and content that once crashed a stage goes
through ``step``, trajectory serialisation and the rollout store, and nothing escapes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from coworkenv.rollout.store import Encoded, RolloutStore
from coworkenv.rollout.worker import EpisodeTask, episode_record
from coworkenv.runtime import Environment
from coworkenv.spec import TaskSpec, load_spec
from coworkenv.storage import atomic_write_json, atomic_write_text, json_text, read_jsonl

EXAMPLES = Path(__file__).parent.parent / "examples"
EXAMPLE = load_spec(EXAMPLES / "expense_over_limit_approval.yaml")


def workplace_spec() -> TaskSpec:
    """The expense example with the payments, HR and drive examples' fixtures added: every service's tools."""
    services = dict(EXAMPLE.services)
    for name in ("ap_invoice_match_and_pay", "oncall_trade_for_leave", "drive_offboard_agency"):
        services.update(load_spec(EXAMPLES / f"{name}.yaml").services)
    return EXAMPLE.model_copy(update={"services": services})


WORKPLACE = workplace_spec()


def _nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def _nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


ARGUMENT_TEXTS: dict[str, str] = {
    "5000-digit integer": '{"amount": ' + "9" * 5000 + "}",
    "5000-digit negative integer": '{"expense_id": -' + "1" * 5000 + "}",
    "100k-deep objects": _nested(100_000),
    "100k-deep lists": '{"to": ' + _nested_list(100_000) + "}",
    "2k-deep objects": _nested(2_000),
    "500-deep objects": _nested(500),
    "40-deep objects": _nested(40),
    "lone surrogate escape": '{"body": "Done \\ud800", "subject": "\\udfff"}',
    "raw lone surrogate": '{"body": "Done \ud800"}',
    "huge float": '{"amount": 1e999}',
    "NaN": '{"amount": NaN}',
    "top-level list": "[1, 2]",
    "truncated": '{"amount": ',
    "100 KB string": '{"body": "' + "x" * 100_000 + '"}',
}
CONTENTS: dict[str, str] = {
    "lone surrogate": "Done \ud800",
    "surrogate pair halves": "\udfff\ud800 approved",
    "1 MB text": "y" * 1_000_000,
}


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def hostile_turns(tools: list[str]) -> list[tuple[str, Any]]:
    """Every hostile argument text on every tool, as text and (where it decodes) as an object; hostile contents."""
    turns: list[tuple[str, Any]] = []
    for label, text in ARGUMENT_TEXTS.items():
        for tool in tools:
            turns.append((f"{tool} {label}", _call(tool, text)))
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            continue
        turns.append((f"object {label}", _call(tools[0], obj)))
    turns += [(f"content {label}", {"role": "assistant", "content": text}) for label, text in CONTENTS.items()]
    return turns


@pytest.mark.parametrize("spec", [EXAMPLE, WORKPLACE], ids=["expenses", "workplace"])
def test_hostile_turns_pass_step_serialisation_and_the_store(tmp_path: Path, spec: TaskSpec) -> None:
    env = Environment(spec)
    fresh = {n for n, info in env.router.tools.items() if spec is EXAMPLE or info.service not in EXAMPLE.services}
    turns = hostile_turns(sorted(fresh))
    store = RolloutStore(tmp_path)
    store.open({"policy": "hostile"})
    escaped: list[str] = []
    encoded: list[Encoded] = []
    for i, (label, turn) in enumerate(turns):
        try:
            env.reset()
            obs = env.step(turn)
            assert all(isinstance(m.get("content"), str) for m in obs.messages)
            task = EpisodeTask(spec={"id": EXAMPLE.id}, sample=i, seed=0)
            record = episode_record(task, "hostile", env.trajectory(), None)
            assert json.loads(record.model_dump_json())["trajectory"]["messages"]  # the public model serialises
            encoded.append(Encoded.of(record))
        except Exception as exc:  # counted: the assertion below names every escape
            escaped.append(f"{label}: {type(exc).__name__}: {str(exc)[:80]}")
    assert escaped == []
    store.append(encoded)
    records = list(store.records())
    assert len(records) == len(turns) > 100
    contents = [m.get("content") for r in records if r.trajectory for m in r.trajectory.messages]
    assert "Done \ud800" in contents  # the surrogate is kept (escaped in the file), not lost


def test_undecodable_arguments_are_error_observations() -> None:
    env = Environment(EXAMPLE)
    tool = sorted(env.router.tools)[0]
    for label in ("5000-digit integer", "100k-deep objects", "500-deep objects"):
        env.reset()
        obs = env.step(_call(tool, ARGUMENT_TEXTS[label]))
        error = json.loads(obs.messages[-1]["content"])["error"]
        assert tool in error and ("decoded" in error or "nested deeper" in error), (label, error)
        assert env.log.calls[-1].args is None and not env.log.calls[-1].ok


def test_json_text_escapes_only_documents_with_lone_surrogates() -> None:
    assert json_text({"a": "é"}) == '{"a": "é"}'
    assert json_text({"a": "é\ud800"}) == '{"a": "\\u00e9\\ud800"}'
    assert json.loads(json_text({"a": "\ud800"})) == {"a": "\ud800"}


def test_atomic_writes_have_ordinary_modes_and_leave_no_temporary_files(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "m.json", {"a": 1})
        atomic_write_text(tmp_path / "t.txt", "x")
        with pytest.raises(UnicodeEncodeError):
            atomic_write_text(tmp_path / "bad.txt", "\ud800")
    finally:
        os.umask(old)
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "t.txt").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "t.txt"]


def test_append_jsonl_keeps_surrogates(tmp_path: Path) -> None:
    from coworkenv.storage import append_jsonl

    append_jsonl(tmp_path / "x.jsonl", [{"c": "Done \ud800"}, {"c": "ok é"}])
    assert list(read_jsonl(tmp_path / "x.jsonl")) == [{"c": "Done \ud800"}, {"c": "ok é"}]


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = tmp_path / f".manifest.json.{dead.stdout.strip()}.x1y2.tmp"
    orphan.write_text("{half")
    live = tmp_path / f".manifest.json.{os.getppid()}.a1b2.tmp"  # a live writer's file stays
    live.write_text("{")
    atomic_write_json(tmp_path / "manifest.json", {"ok": True})
    assert not orphan.exists() and live.exists()
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"ok": True}


FAR_OFF = "Should I cancel the meetings in 9999999 days?"


def test_a_far_off_day_in_plain_text_is_read_as_text_and_the_step_applies_whole() -> None:
    env = Environment(load_spec(EXAMPLES / "thursday_afternoon_narrowed_cancel.yaml"))
    env.reset()
    env.step({"role": "assistant", "content": FAR_OFF})
    messages = env.trajectory().messages
    assert [m["role"] for m in messages[-2:]] == ["assistant", "user"] and messages[-2]["content"] == FAR_OFF


def _far_off_spec(tmp_path: Path, example: str, old: str, new: str) -> Path:
    text = (EXAMPLES / example).read_text()
    assert old in text
    path = tmp_path / example
    path.write_text(text.replace(old, new))
    return path


def test_a_hidden_fact_reply_naming_a_far_off_day_validates_and_verifies(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    reply = "only the ones after 2pm."
    path = _far_off_spec(tmp_path, "thursday_afternoon_narrowed_cancel.yaml", reply, reply + " Or in 9999999 days.")
    for command in ("validate", "verify"):
        result = CliRunner().invoke(app, [command, str(path)])
        assert result.exit_code == 0 and result.exception is None, result.output


def test_a_clock_at_the_calendars_end_with_a_stage_advance_is_refused_by_validation(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    path = _far_off_spec(
        tmp_path, "printer_fix_followup_two_days.yaml", "clock: 2025-03-10T16:00", "clock: 9999-12-31T09:00"
    )
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1 and not isinstance(result.exception, OverflowError)
    assert "stages[0].advance" in result.output and "year 9999" in result.output


TEXT_FORMAT_ARGUMENTS = {
    **{k: ARGUMENT_TEXTS[k] for k in ("5000-digit integer", "2k-deep objects", "500-deep objects", "truncated")},
    "995-deep lists": '{"x": ' + _nested_list(995) + "}",
}


@pytest.mark.parametrize("label", sorted(TEXT_FORMAT_ARGUMENTS))
def test_the_text_format_parser_never_raises_and_the_step_is_an_error_observation(label: str) -> None:
    """A model's text through ``chat_format`` (the Gymnasium env and local models): hostile arguments become a
    call the environment refuses in words, with the step whole (its assistant message and its observation)."""
    from coworkenv.agents.chat_format import parse_assistant_text

    arguments = TEXT_FORMAT_ARGUMENTS[label]
    text = f'Filing it.<tool_call>{{"name": "expenses_create", "arguments": {arguments}}}</tool_call>'
    env = Environment(EXAMPLE)
    env.reset()
    env.step(parse_assistant_text(text, 0))
    trajectory = env.trajectory()
    assert len(trajectory.steps) == 1 and trajectory.messages[-2]["role"] == "assistant"
    assert not trajectory.calls[-1].ok and "expenses_create" in json.loads(trajectory.messages[-1]["content"])["error"]


def test_check_weights_that_would_overflow_their_total_are_refused_at_load(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    path = _far_off_spec(tmp_path, "expense_over_limit_approval.yaml", "    weight: 2\n", "    weight: 1e308\n")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1 and "weight" in result.output and "1000000" in result.output, result.output


def test_a_key_given_twice_and_text_expanded_by_aliases_are_refused_with_the_place(tmp_path: Path) -> None:
    from coworkenv.spec import SpecError
    from coworkenv.spec.io import MAX_TEXT

    twice = tmp_path / "twice.yaml"
    twice.write_text((EXAMPLES / "expense_over_limit_approval.yaml").read_text() + "\nid: another_id\n")
    with pytest.raises(SpecError, match="'id' given twice"):
        load_spec(twice)
    aliased = tmp_path / "aliased.yaml"
    text = "x" * (MAX_TEXT // 10 + 1)
    aliased.write_text(f"id: a\nnotes: &t {text}\nmore: [{', '.join(['*t'] * 10)}]\n")
    with pytest.raises(SpecError, match=f"more: the document expands to more than {MAX_TEXT} characters"):
        load_spec(aliased)


@pytest.mark.parametrize("label", ["1000-deep object", "5000-digit integer"])
def test_a_policy_built_call_that_json_cannot_write_is_refused_and_the_step_stays_whole(label: str) -> None:
    from coworkenv.runtime.turn import AssistantTurn, ToolCall

    arguments: dict[str, Any] = {"amount": 10**5000} if label == "5000-digit integer" else {}
    if label == "1000-deep object":
        for _ in range(1000):
            arguments = {"a": arguments}
    env = Environment(EXAMPLE)
    env.reset()
    tool = "mail_read"  # its arguments are refused by validation, after they decode: the call is recorded whole
    env.step(AssistantTurn(content="x", tool_calls=[ToolCall(id="c", name=tool, arguments=arguments)]))
    env.step("And now?")
    trajectory = env.trajectory()
    assert len(trajectory.steps) == 2 and [m["role"] for m in trajectory.messages].count("assistant") == 2
    assert not trajectory.calls[0].ok and json.loads(trajectory.messages[2]["tool_calls"][0]["function"]["arguments"])
    record = episode_record(EpisodeTask(spec={"id": EXAMPLE.id}, sample=0, seed=0), "p", trajectory, None)
    assert json.loads(Encoded.of(record).line)["trajectory"]["calls"][0]["args"] is None  # the store can write it
    assert json.loads(record.model_dump_json())["trajectory"]["steps"]


def test_a_reference_of_ten_thousand_steps_is_refused_at_load_not_run() -> None:
    import time

    from coworkenv.spec import SpecError, spec_from_data
    from coworkenv.spec.models import MAX_REFERENCE_STEPS

    data = EXAMPLE.model_dump(mode="json", exclude_none=True)
    data["reference"] = [data["reference"][0]] * 10_000 + [data["reference"][-1]]
    data["max_tool_calls"] = 10**9
    start = time.process_time()
    with pytest.raises(SpecError) as err:
        spec_from_data(data, "big.yaml")
    assert time.process_time() - start < 5.0
    assert f"reference: List should have at most {MAX_REFERENCE_STEPS} items" in str(err.value)
    assert "max_tool_calls: Input should be less than or equal to 1000" in str(err.value)
