"""The TRL environment_factory adapter: tool methods TRL can render, the oracle through them, two real GRPO steps."""

from __future__ import annotations

import json
import warnings

import pytest

pytest.importorskip("transformers", reason="needs the train extra")

from transformers.utils import get_json_schema

from coworkenv.agents import OracleTeacher
from coworkenv.interop.trl_env import MESSAGE_USER, OVER, environment_factory, prompt_rows, with_response_template
from coworkenv.runtime import Environment, run_episode
from train_helpers import lookup_spec

SPECS = [lookup_spec(0), lookup_spec(1)]


def test_methods_carry_the_environment_tool_schemas() -> None:
    env = environment_factory(SPECS)()
    local = {t["function"]["name"]: t["function"] for t in Environment(SPECS[0]).router.schemas()}
    for name, fn in local.items():
        rendered = get_json_schema(getattr(type(env), name))["function"]
        assert rendered["name"] == name
        assert set(rendered["parameters"]["properties"]) == set(fn["parameters"]["properties"])
        assert set(rendered["parameters"].get("required", [])) == set(fn["parameters"].get("required", []))
    assert get_json_schema(getattr(type(env), MESSAGE_USER))["function"]["parameters"]["required"] == ["message"]


def test_oracle_through_the_methods_earns_the_grade() -> None:
    env = environment_factory(SPECS)()
    spec = SPECS[0]
    assert env.reset(env_id=spec.id) == spec.user.opening and env.get_reward() < 0.75
    traj = run_episode(Environment(spec), OracleTeacher())
    for m in (m for m in traj.messages if m["role"] == "assistant"):
        for c in m.get("tool_calls", []):
            out = getattr(env, c["function"]["name"])(**json.loads(c["function"]["arguments"]))
        if not m.get("tool_calls"):
            out = env.message_user(message=m["content"])
    assert out.endswith(OVER) and env.get_reward() == traj.grade.score == 1.0
    assert env.contacts_search(query="x") == OVER


@pytest.mark.slow
def test_two_grpo_steps_with_the_tiny_model(tmp_path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from coworkenv.agents.tiny import make_tiny_model, make_tiny_tokenizer

    tokenizer = with_response_template(make_tiny_tokenizer())
    model = make_tiny_model(tokenizer)
    config = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        max_tool_calling_iterations=2,
        learning_rate=1e-3,
        use_cpu=True,
        bf16=False,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        seed=0,
    )
    resets: list[str] = []
    factory = environment_factory(SPECS)

    def tracked():
        env = factory()
        original = env.reset

        def reset(**row):
            resets.append(row.get("env_id"))
            return original(**row)

        env.reset = reset
        return env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(
            model=model,
            args=config,
            train_dataset=Dataset.from_list(prompt_rows(SPECS) * 2),
            processing_class=tokenizer,
            environment_factory=tracked,
        )
        trainer.train()
    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "rewards/CoworkEnvironment/mean" in h]
    assert len(logged) == 2 and set(resets) <= {s.id for s in SPECS} and len(resets) >= 4
    for h in logged:  # a random model calls no tool, so each rollout earns what an untouched environment scores
        if h["tools/call_frequency"] == 0:
            untouched = sum(Environment(s).grade().score for s in SPECS) / len(SPECS)
            assert h["rewards/CoworkEnvironment/mean"] == pytest.approx(untouched, abs=1e-6)
