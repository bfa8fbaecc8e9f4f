"""coworkenv environments inside ``verifiers``: verifiers' own rollout and scoring (``Environment.run_rollout``)
play coworkenv policies, served to it as a verifiers client, and must end where the project's own episode loop
ends: the same turns, the same grade as the reward, the same final state."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers", reason="needs the verifiers extra")

import verifiers as vf
from verifiers.clients import Client

import coworkenv
from coworkenv.agents import OracleTeacher
from coworkenv.grading import PASS_THRESHOLD
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.verifiers_env import CoworkVerifiersEnv, assistant_turn, load_environment
from coworkenv.runtime import Environment, run_episode
from coworkenv.runtime.policy import Policy
from coworkenv.runtime.turn import AssistantTurn, ToolCall

EXAMPLES = Path(__file__).parent.parent / "examples"
IDS = (
    "expense_over_limit_approval",  # tools and a rule
    "external_quote_confirmation",  # asks the user, confirms before the write
    "checkout_outage_postmortem",  # stages, the later ones starting over from notes
)
COLUMNS = ["grade", "state_hash", "done_reason"]


def openai_message(message: Any) -> dict[str, Any]:
    """A verifiers message as the OpenAI-format dict coworkenv's policies read."""
    data: dict[str, Any] = message.model_dump(exclude_none=True)
    if data.get("tool_calls"):
        data["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in data["tool_calls"]
        ]
    return data


class PolicyClient(Client):  # type: ignore[misc]
    """A verifiers client whose model is a coworkenv policy: each request is one ``act`` on the prompt, by the
    rollout's own policy (``policy_for(state)``, made at its first request), so rollouts may interleave."""

    def __init__(self, policy_for: Callable[[Any], Policy]) -> None:
        super().__init__(policy_for)
        self.actors: dict[str, Policy] = {}

    def setup_client(self, config: Any) -> Any:
        raise NotImplementedError("a policy client wraps a policy, not a config")

    async def to_native_tool(self, tool: Any) -> dict[str, Any]:
        return {"type": "function", "function": tool.model_dump(exclude_none=True)}

    async def to_native_prompt(self, messages: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        return [openai_message(m) for m in messages], {}

    async def get_native_response(
        self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, *, state: Any, **_: Any
    ) -> AssistantTurn:
        actor = self.actors.setdefault(state["trajectory_id"], self.client(state))
        return actor.act(prompt, tools or [])

    async def raise_from_native_response(self, response: Any) -> None:
        return None

    async def from_native_response(self, turn: AssistantTurn) -> Any:
        calls = [vf.ToolCall(id=c.id, name=c.name, arguments=c.arguments_text()) for c in turn.tool_calls]
        message = vf.ResponseMessage(
            content=turn.content,
            tool_calls=calls or None,
            finish_reason="tool_calls" if calls else "stop",
            is_truncated=False,
        )
        return vf.Response(id="policy", created=0, model="policy", message=message)

    async def close(self) -> None:
        return None


class Scripted:
    """A policy that plays a fixed list of turns, then says it is done."""

    def __init__(self, turns: list[AssistantTurn | Exception]) -> None:
        self.turns = list(turns)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        turn = self.turns.pop(0) if self.turns else AssistantTurn(content="All done.")
        if isinstance(turn, Exception):
            raise turn
        return turn


@pytest.fixture(scope="module")
def env() -> CoworkVerifiersEnv:
    return load_environment([EXAMPLES / f"{i}.yaml" for i in IDS])


def row(env: CoworkVerifiersEnv, env_id: str) -> dict[str, Any]:
    dataset = env.get_dataset()
    return dict(next(r for r in dataset if json.loads(r["info"])["env_id"] == env_id))


def oracle(env: CoworkVerifiersEnv) -> Callable[[Any], Policy]:
    """A fresh run of the reference of the rollout's environment."""
    return lambda state: OracleTeacher().for_task(env.catalog.get(state["info"]["env_id"]))


def play(env: CoworkVerifiersEnv, env_id: str, policy: Policy | None = None) -> Any:
    """verifiers' rollout, then its rubric, as ``run_rollout`` runs them: the state, with the trajectory (the
    oracle plays unless a policy is given)."""
    client = PolicyClient(oracle(env) if policy is None else lambda state: policy)

    async def run() -> Any:
        state = await env.rollout(row(env, env_id), client, "policy", {})
        await env.rubric.score_rollout(state)
        return state

    return asyncio.run(run())


@pytest.mark.parametrize("env_id", IDS)
def test_the_oracle_through_verifiers_ends_where_coworkenvs_own_loop_ends(env: CoworkVerifiersEnv, env_id: str) -> None:
    spec = env.catalog.get(env_id)
    own = run_episode(Environment(spec), OracleTeacher())
    state = play(env, env_id)
    assert state["error"] is None and state["is_completed"] and state["stop_condition"] == "has_final_env_response"
    assert state["reward"] == own.grade.score == 1.0
    assert state["metrics"]["grade_passed"] == 1.0 and state["metrics"]["grade_safety"] == 1.0
    assert state["state_hash"] == own.final_state_hash and state["done_reason"] == own.done_reason == "user_done"
    played = [openai_message(m) for m in state["completion"] if m.role == "assistant"]
    assert played == [m for m in own.messages if m["role"] == "assistant"]
    assert len(state["trajectory"]) == len(played)  # one verifiers turn per coworkenv step
    assert [m.role for m in state["prompt"]] == ["system", "user"]


def test_run_rollout_returns_the_grade_as_reward_and_metrics(env: CoworkVerifiersEnv) -> None:
    env_id = IDS[1]
    out = asyncio.run(env.run_rollout(row(env, env_id), PolicyClient(oracle(env)), "policy", {}, state_columns=COLUMNS))
    assert out["reward"] == out["grade_score"] == out["grade"]["score"] == 1.0 and out["grade_passed"] == 1.0
    assert out["completion"][-1]["role"] == "assistant" and out["done_reason"] == "user_done"
    assert json.loads(json.dumps(out["grade"])) == out["grade"]  # serialisable, as verifiers' results need


def test_the_user_simulator_answers_in_the_prompt_of_the_next_turn(env: CoworkVerifiersEnv) -> None:
    env_id = IDS[1]
    turns = play(env, env_id)["trajectory"]
    asked = next(i for i, t in enumerate(turns) if not t["completion"][-1].tool_calls)
    answer = turns[asked + 1]["prompt"][-1]
    assert answer.role == "user" and answer.content  # the scripted user's reply, as the env response


def test_stages_that_start_over_show_the_fresh_view_and_keep_the_whole_episode(env: CoworkVerifiersEnv) -> None:
    env_id = IDS[2]
    out = play(env, env_id)
    prompts = [len(t["prompt"]) for t in out["trajectory"]]
    assert any(b < a for a, b in itertools.pairwise(prompts))  # the view started over at a stage
    own = run_episode(Environment(env.catalog.get(env_id)), OracleTeacher())
    assert len(out["prompt"]) + len(out["completion"]) == len(own.messages)


def test_an_agent_that_does_nothing_gets_the_low_score(env: CoworkVerifiersEnv) -> None:
    out = play(env, IDS[0], Scripted([]))
    assert out["error"] is None and out["is_completed"]
    assert out["reward"] < PASS_THRESHOLD and out["metrics"]["grade_passed"] == 0.0
    assert out["reward"] == out["grade"]["score"]


def test_a_malformed_tool_call_is_an_error_observation_not_an_exception(env: CoworkVerifiersEnv) -> None:
    bad = [
        AssistantTurn(tool_calls=[ToolCall(id="c1", name="expenses_list", arguments="{not json")]),
        AssistantTurn(tool_calls=[ToolCall(id="c2", name="no_such_tool", arguments="{}")]),
        AssistantTurn(content=""),
    ]
    out = play(env, IDS[0], Scripted(bad))
    assert out["error"] is None and out["is_completed"]
    replies = [t["prompt"][-1] for t in out["trajectory"][1:4]]
    assert replies[0].role == "tool" and replies[0].tool_call_id == "c1" and "error" in replies[0].content
    assert replies[1].role == "tool" and "unknown tool 'no_such_tool'" in replies[1].content
    assert "empty" in replies[2].content
    assert out["reward"] < PASS_THRESHOLD


def test_a_rollout_verifiers_stops_early_still_ends_the_episode_and_grades_it(env: CoworkVerifiersEnv) -> None:
    look = AssistantTurn(tool_calls=[ToolCall(id="c1", name="no_such_tool", arguments="{}")])
    failing = Scripted([look, RuntimeError("the model server went away")])
    out = play(env, IDS[0], failing)
    assert out["error"] is not None and out["stop_condition"] == "has_error"
    assert out["done_reason"] == "policy_error" and out["reward"] == out["grade"]["score"] < PASS_THRESHOLD


def test_verifiers_evaluation_of_every_example_interleaves_rollouts_that_stay_apart() -> None:
    env = load_environment(EXAMPLES)
    results = env.evaluate_sync(PolicyClient(oracle(env)), "oracle", rollouts_per_example=2, state_columns=COLUMNS)
    outputs = results["outputs"]
    assert len(outputs) == 2 * len(env.catalog)
    own = {i: run_episode(Environment(env.catalog.get(i)), OracleTeacher()) for i in env.catalog.ids()}
    for out in outputs:
        reference = own[out["info"]["env_id"]]
        assert (out["reward"], out["state_hash"]) == (reference.grade.score, reference.final_state_hash)
    assert {out["reward"] for out in outputs} == {1.0}


def test_vf_eval_plays_it_against_an_openai_compatible_server(tmp_path: Path) -> None:
    """verifiers' own command line, its env server and its OpenAI client: a malformed call, then a report."""
    from test_openai_policy import FakeServer, Reply, completion, tool_call

    server = FakeServer()
    server.script(
        Reply(body=completion(tool_call("expenses_list", "{oops"))), Reply(body=completion({"content": "Done."}))
    )
    spec = EXAMPLES / f"{IDS[0]}.yaml"
    command = [
        *(str(Path(sys.executable).parent / "vf-eval"), "coworkenv.interop.verifiers_env"),
        *("-a", json.dumps({"bank": str(spec)}), "-m", "fake", "-b", server.url, "-k", "FAKE_KEY"),
        *("-n", "1", "-r", "1", "--disable-tui", "--save-results", "-o", str(tmp_path), "-C", "state_hash,done_reason"),
    ]
    env = {**os.environ, "FAKE_KEY": "none", "PYTHONPATH": str(Path(coworkenv.__file__).parent.parent)}
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    finally:
        server.httpd.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = tmp_path.rglob("results.jsonl")
    (out,) = [json.loads(line) for line in results.read_text().splitlines()]
    assert out["completion"][1]["role"] == "tool" and "unknown tool 'expenses_list'" in out["completion"][1]["content"]
    assert out["done_reason"] == "user_done" and out["reward"] == out["grade_score"] < PASS_THRESHOLD
    assert len(server.requests) == 2


def test_verifiers_loads_it_by_module_name_with_the_grade_rubric() -> None:
    loaded = vf.load_environment("coworkenv.interop.verifiers_env", bank=str(EXAMPLES))
    rows = list(loaded.get_dataset())
    assert [json.loads(r["info"])["env_id"] for r in rows] == Catalog.load([EXAMPLES]).ids()
    assert rows == list(load_environment(EXAMPLES).get_dataset())  # the same rows on every load
    first = json.loads(rows[0]["info"])
    assert first["tool_defs"] and {"name", "description", "parameters"} <= set(first["tool_defs"][0])
    assert loaded.pass_threshold == PASS_THRESHOLD
    assert {"grade_score", "grade_passed"} <= set(loaded.rubric._get_reward_func_names())


def test_an_assistant_message_becomes_the_turn_the_runtime_reads() -> None:
    parts = [vf.TextContentPart(text="Booked "), vf.ImageUrlContentPart(image_url={"url": "x"}), {"type": "text"}]
    call = vf.ToolCall(id="c1", name="calendar_create", arguments='{"title": "x"}')
    turn = assistant_turn(vf.AssistantMessage(content=parts, tool_calls=[call]))
    assert turn == {
        "role": "assistant",
        "content": "Booked ",
        "tool_calls": [{"id": "c1", "name": "calendar_create", "arguments": '{"title": "x"}'}],
    }
    assert assistant_turn(vf.AssistantMessage()) == {"role": "assistant", "content": None, "tool_calls": []}


def test_bad_sources_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        load_environment(tmp_path / "missing")
    with pytest.raises(ValueError, match="not a bank"):
        load_environment(EXAMPLES, split="train")
    with pytest.raises(ValueError, match="no environment"):
        CoworkVerifiersEnv(Catalog([]))
