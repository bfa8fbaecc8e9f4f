"""Where rollouts get their environments: a verified bank, a folder of spec files, or one file.

A bank folder (it has ``manifest.json``) is read through :mod:`coworkenv.bank.store`, which
also knows its train/held-out split by blueprint; spec files (YAML/JSON) are for examples
and hand-written tasks and belong to no split.
"""

from __future__ import annotations

from pathlib import Path

from coworkenv.bank.store import heldout_blueprints as bank_heldout
from coworkenv.bank.store import load_bank
from coworkenv.spec import load_spec
from coworkenv.spec.io import SPEC_SUFFIXES
from coworkenv.spec.models import TaskSpec

SPLITS = ("train", "heldout")


def is_bank(path: Path) -> bool:
    return path.is_dir() and (path / "manifest.json").exists()


def load_specs(path: str | Path, split: str | None = None) -> list[TaskSpec]:
    """Specs ordered by id; ``split`` ("train" / "heldout") filters a bank by its blueprint split. An
    evaluation-only spec (an imported task) is held out whatever its blueprint: no bank's training split has one."""
    path = Path(path)
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of: {', '.join(SPLITS)}")
    if not path.exists():
        raise ValueError(f"{path} does not exist")
    if is_bank(path):
        specs = [spec for spec, _ in load_bank(path)]
        if split is not None:
            held = heldout_blueprints(path)
            specs = [s for s in specs if _held_out(s, held) == (split == "heldout")]
    elif split is not None:
        raise ValueError(f"{path} is not a bank; a split needs a bank folder with manifest.json")
    elif path.is_dir():
        specs = [load_spec(p) for p in sorted(path.iterdir()) if p.suffix in SPEC_SUFFIXES]
        if not specs:
            raise ValueError(f"{path} is neither a bank (no manifest.json) nor a folder of spec files")
    else:
        specs = [load_spec(path)]
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate spec ids")
    return sorted(specs, key=lambda s: s.id)


def _held_out(spec: TaskSpec, blueprints: set[str]) -> bool:
    return spec.provenance.blueprint in blueprints or bool(spec.provenance.evaluation_only)


def heldout_blueprints(bank: str | Path | None) -> set[str]:
    """The blueprints a bank keeps out of training (empty for anything that is not a bank)."""
    if bank is None or not is_bank(Path(bank)):
        return set()
    return set(bank_heldout(Path(bank)))
