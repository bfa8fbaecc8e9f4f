"""Imported tasks are evaluation-only wherever a user could hand them to training: a bank's training split (even
of a bank put together by hand), SFT demonstrations made from specs, TRL's environment, GRPO."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claw_tasks import task_folder
from coworkenv.bank.sources import load_specs
from coworkenv.bank.store import load_bank, read_manifest, synthesize_bank
from coworkenv.data.demo_mix import oracle_mix
from coworkenv.interop.claw_import import import_task
from coworkenv.interop.trl_env import environment_factory
from coworkenv.spec import load_spec
from coworkenv.spec.models import TaskSpec

EXAMPLE = Path(__file__).parent.parent / "src" / "coworkenv" / "examples" / "sick_day_calendar_clear.yaml"


@pytest.fixture()
def imported(tmp_path: Path) -> TaskSpec:
    spec, _ = import_task(task_folder(tmp_path / "tasks"))
    assert spec.provenance.evaluation_only
    return spec


def _slip_into_train_shard(bank: Path, spec: TaskSpec) -> None:
    """Append ``spec`` to the bank's first training shard, as a hand-made merge of banks would."""
    shard = next(s for s in read_manifest(bank)["shards"] if Path(s).name.startswith("train-"))  # type: ignore[union-attr]
    first = json.loads((bank / shard).read_text(encoding="utf-8").splitlines()[0])
    record = {**first, "id": spec.id, "spec": spec.model_dump(mode="json", exclude_none=True)}
    with (bank / shard).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def test_an_imported_task_in_a_banks_training_shard_is_held_out(tmp_path: Path, imported: TaskSpec) -> None:
    bank = tmp_path / "bank"
    synthesize_bank(bank, 3, seed=1)
    before = {s.id for s in load_specs(bank, "train")}
    assert before, "the bank needs a training split to slip the task into"
    _slip_into_train_shard(bank, imported)
    assert {s.id for s in load_specs(bank, "train")} == before
    assert imported.id in {s.id for s in load_specs(bank, "heldout")}
    assert imported.id in {s.id for s in load_specs(bank)}  # the whole bank still has it, for evaluation
    assert imported.id not in {s.id for s, _ in load_bank(bank, "train")}
    assert imported.id in {s.id for s, _ in load_bank(bank, "heldout")}


def test_sft_demonstrations_from_specs_refuse_an_imported_task(imported: TaskSpec) -> None:
    example = load_spec(EXAMPLE)
    assert oracle_mix([example])  # a hand-written task makes demonstrations
    with pytest.raises(ValueError, match=rf"SFT demonstrations: 1 evaluation-only .*{imported.id}"):
        oracle_mix([example, imported])


def test_trls_environment_refuses_an_imported_task(imported: TaskSpec) -> None:
    assert environment_factory([load_spec(EXAMPLE)])() is not None
    with pytest.raises(ValueError, match=rf"TRL environment: 1 evaluation-only .*{imported.id}"):
        environment_factory([imported])


def test_grpo_refuses_an_imported_task_before_touching_the_model(imported: TaskSpec, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="GRPO needs the train extra")
    from coworkenv.train.grpo import train_grpo

    with pytest.raises(ValueError, match="GRPO: 1 evaluation-only"):
        train_grpo(None, None, [imported], tmp_path / "out")  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()
