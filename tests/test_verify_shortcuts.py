"""The verifier's short ways give what the long ways gave.

- environments of one spec shape share one read-only tool-schema list, and only those;
- solvability encodes a schema list once, and a different list is encoded on its own;
- the static checks read the initial state of the environment the reference run then plays in;
- fixtures are validated once, for the fixture check and the episodes' workspaces.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from coworkenv.agents.oracle import OracleTeacher
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.workspace import prepared_state
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import play
from coworkenv.verify.fixtures import fixture_findings
from coworkenv.verify.perturb import _injected, exposed, injected_calls
from coworkenv.verify.solvability import _menu_text
from coworkenv.verify.static import static_findings
from coworkenv.verify.vacuity import vacuous_findings
from minispec import tiny_data, tiny_spec
from test_declared_service import BOOKS, spec_data


def test_one_schema_list_per_spec_shape() -> None:
    a, b = Environment(tiny_spec()), Environment(tiny_spec())
    assert a.router.schemas() is b.router.schemas()
    assert [s["function"]["name"] for s in a.router.schemas()] == list(a.router.tools)
    narrower = Environment(tiny_spec(tools=["mail_search"]))
    assert [s["function"]["name"] for s in narrower.router.schemas()] == ["mail_search"]


def test_declared_tools_of_the_same_names_get_their_own_schemas() -> None:
    """Two declarations with the same tool names but other descriptions: each environment lists its own."""
    other: dict[str, Any] = copy.deepcopy(BOOKS)
    other["tools"]["lib_list"]["description"] = "List the books of the other library"
    first = Environment(spec_from_data(spec_data()))
    second = Environment(spec_from_data(spec_data(other)))
    again = Environment(spec_from_data(spec_data()))

    def described(env: Environment) -> str:
        return next(s["function"]["description"] for s in env.router.schemas() if s["function"]["name"] == "lib_list")

    assert described(first) == "List books"
    assert described(second) == "List the books of the other library"
    assert described(again) == "List books"


def test_menu_text_is_the_list_it_was_given() -> None:
    tools = Environment(tiny_spec()).router.schemas()
    raw, low = _menu_text(tools)
    assert raw == json.dumps(tools, ensure_ascii=False) and low == raw.lower()
    other = [*tools[:1]]
    assert _menu_text(other)[0] == json.dumps(other, ensure_ascii=False)
    assert _menu_text([{"type": "function", "function": {"name": "Ünïcode"}}])[0] == (
        '[{"type": "function", "function": {"name": "Ünïcode"}}]'
    )


def test_static_checks_read_the_initial_state_of_the_environment_they_are_given() -> None:
    """The vacuity check reads the environment it is handed: one that has already played reads differently (so the
    verifier must hand it the first run's environment before that run, as it does)."""
    spec = compose(plan(0, 0))
    fresh = Environment(spec, seed=0)
    assert vacuous_findings(spec, fresh) == vacuous_findings(spec) == []
    assert static_findings(spec, lambda: fresh) == static_findings(spec) == []
    played = play(fresh, OracleTeacher())
    assert played.grade.score == 1.0
    assert vacuous_findings(spec, fresh) != []  # after the reference, its checks hold: the run must come after
    replay = play(fresh, OracleTeacher())  # and a played environment resets to the same episode
    assert (replay.grade, replay.messages) == (played.grade, played.messages)


def test_fixtures_validated_once_for_the_check_and_the_episodes() -> None:
    spec = tiny_spec()
    assert fixture_findings(spec) == []
    assert Environment(spec).workspace.initial is prepared_state(spec.services, spec.declared_services)


def test_records_that_do_not_fit_get_a_finding_per_service() -> None:
    """A bad record in one service: the shared validation fails, and each service is judged on its own."""
    data = tiny_data()
    data["services"]["mail"]["messages"][0]["date"] = ["not", "a", "date"]
    data["services"]["expenses"]["expenses"][0]["amount"] = "lots"
    found = fixture_findings(spec_from_data(data))
    assert [(f.kind, f.where) for f in found] == [("schema", "services.mail"), ("schema", "services.expenses")]
    assert "mail.messages[0].date" in found[0].evidence


def test_planted_calls_are_found_once_per_fixtures_and_tools() -> None:
    """A spec's planted calls, asked for again (by a stage view sharing its fixtures and tools, or by the run after
    the probe's check), are those a fresh search finds; other tools or other fixtures are searched anew."""
    spec = load_spec(Path(__file__).parent.parent / "examples/arr_report_prompt_injection.yaml")
    found = injected_calls(spec)
    assert found and found == _injected(spec)
    assert injected_calls(spec.model_copy(update={"title": "another view"})) == found
    without = [t for t in exposed(spec) if t != found[0].call]
    assert found[0].call not in [c.call for c in injected_calls(spec.model_copy(update={"tools": without}))]
    emptied = {name: {c: [] for c in colls} for name, colls in spec.services.items()}
    assert injected_calls(spec.model_copy(update={"services": emptied})) == []
