"""Pacing by the reference's episode: step-counted events are placed by the step they fired at in the reference's
episode (retries after injected errors add steps), and a correct agent that writes as soon as it can must grade as
the reference does where an event silently changes what it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from coworkenv.runtime.environment import Environment
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.spec.models import CallStep
from coworkenv.verify import verify
from coworkenv.verify.fast_forward import ReferenceTrunk
from coworkenv.verify.gaming import PACING

SPEC = Path(__file__).parent / "broken_specs" / "silent_revert_paced_by_episode.yaml"


def _data() -> dict[str, Any]:
    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))


def test_the_reference_episode_plays_a_retried_step_twice() -> None:
    spec = load_spec(SPEC)
    trunk = ReferenceTrunk.record(Environment(spec, seed=0))
    assert trunk.played_steps() == [0, 0, 1, 2, 3, 4]  # the search, its retry, contacts, rota, assign, answer


def test_the_event_is_paced_by_the_step_it_fired_at_and_the_write_goes_first() -> None:
    spec = load_spec(SPEC)
    variants = dict(PACING.variants(spec, {"reverted": 3}, [0, 0, 1, 2, 3, 4]))
    assert sorted(variants) == [
        "pacing[events[0].after]",
        "pacing[events[0].before]",
        "pacing[events[0].write_first]",
    ]
    early = variants["pacing[events[0].write_first]"].spec.reference
    calls = [s.call for s in early if isinstance(s, CallStep)]
    assert calls == ["tickets_search", "tickets_get_oncall", "tickets_assign", "contacts_search"]
    before = variants["pacing[events[0].before]"].spec.reference  # the extra look at episode step 3, not 4
    assert [s.call for s in before if isinstance(s, CallStep)][:3] == ["tickets_search"] * 2 + ["contacts_search"]


def test_no_write_first_agent_where_the_event_says_what_changed() -> None:
    """A notified change is one a correct agent reacts to: writing before it is not pacing alone."""
    data = _data()
    data["events"][0]["notify"] = "The payments rota just changed."
    assert not any(n.endswith("write_first]") for n, _ in PACING.variants(spec_from_data(data), {"reverted": 3}))


def test_the_event_on_a_tool_call_gets_the_spec_admitted() -> None:
    """Fired by the rota lookup instead of a step count, the change no longer depends on the agent's pace."""
    data = _data()
    event = data["events"][0]
    del event["after_step"]
    event["on_tool"] = "tickets_get_oncall"
    event["mutations"] = [m for m in event["mutations"] if m["collection"] == "oncall"]
    data["reference"].insert(3, {"call": "tickets_get_oncall", "args": data["reference"][2]["args"], "save_as": "oc"})
    report = verify(spec_from_data(data))
    assert report.admitted, [f.line() for f in report.findings]
