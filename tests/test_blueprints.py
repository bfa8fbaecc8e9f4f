"""The blueprint set as a whole; each blueprint's own cases are in tests/blueprints/test_<name>.py."""

from __future__ import annotations

from pathlib import Path

from coworkenv.synth.blueprints import BLUEPRINTS, HELD_OUT
from coworkenv.synth.composer import capabilities_of
from coworkenv.synth.world import World


def test_the_bank_has_enough_distinct_workflows() -> None:
    assert len(BLUEPRINTS) >= 20
    assert set(HELD_OUT) <= set(BLUEPRINTS) and len(HELD_OUT) == 5
    for split in (set(HELD_OUT), set(BLUEPRINTS) - set(HELD_OUT)):
        assert all("multi_turn" in capabilities_of(name) for name in split)


def test_both_splits_have_multi_day_workflows() -> None:
    """At least four blueprints build later stages, and one of them is held out."""
    multi_day = {name for name, bp in BLUEPRINTS.items() if bp.build(World(5), frozenset()).stages}
    assert {"hiring_loop", "vendor_dispute", "incident_postmortem", "month_end_close"} <= multi_day
    assert multi_day & set(HELD_OUT) and multi_day - set(HELD_OUT)


def test_every_blueprint_has_its_own_test_file() -> None:
    here = Path(__file__).parent / "blueprints"
    assert {p.stem.removeprefix("test_") for p in here.glob("test_*.py")} == set(BLUEPRINTS)
