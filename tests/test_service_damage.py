"""Every built-in service declares its collateral damage, and each declared write is one it can make."""

from __future__ import annotations

import pytest

from coworkenv.runtime import Environment
from coworkenv.services.damage import Damage
from coworkenv.services.registry import SERVICES
from coworkenv.verify.perturb import DAMAGE
from minispec import call, tiny_spec


@pytest.mark.parametrize("cls", SERVICES.values(), ids=list(SERVICES))
def test_each_service_declares_its_damage(cls: type) -> None:
    assert "damage" in vars(cls), f"{cls.__name__} must say which write spoils a record (or that none does)"
    tools = cls.tools()
    for collection, damage in cls.damage.items():
        model = cls.records[collection]
        assert tools[damage.tool].kind == "write" and tools[damage.tool].service == cls.name
        params = tools[damage.tool].schema()["function"]["parameters"]["properties"]
        named = [arg for arg, _ in damage.from_record] or [damage.id_arg]
        assert set(named) | set(damage.extra) <= set(params), damage
        assert damage.field in model.model_fields, damage


def test_the_probe_table_is_every_declaration() -> None:
    assert {(c.name, coll): d for c in SERVICES.values() for coll, d in c.damage.items()} == DAMAGE
    assert all(isinstance(d, Damage) for d in DAMAGE.values())


@pytest.mark.parametrize(("service", "collection", "rid"), [("mail", "messages", "m1"), ("expenses", "expenses", "e1")])
def test_a_declared_write_spoils_the_record_it_names(service: str, collection: str, rid: str) -> None:
    env = Environment(tiny_spec(tools=None))
    env.reset()
    damage = SERVICES[service].damage[collection]
    record = env.workspace.records(service, collection)[rid]
    assert damage.applies_to(record, SERVICES[service].records[collection])
    step = damage.call(record)
    obs = env.step(call(step.call, step.args))
    assert "error" not in obs.messages[-1]["content"].lower()[:40], obs.messages[-1]
    assert env.workspace.records(service, collection)[rid][damage.field] == damage.value


def test_a_setting_damage_sets_the_field_through_its_own_argument_and_a_rejection_needs_an_open_record() -> None:
    setting = Damage.setting("mail_move", "message_id", "folder", "trash")
    assert setting.call({"id": "m1"}).args == {"message_id": "m1", "folder": "trash"}
    rejecting = Damage.rejecting("expenses_reject", "expense_id", ("submitted",))
    assert rejecting.call({"id": "e1"}).args == {"expense_id": "e1", "reason": "duplicate"}
    model = SERVICES["expenses"].records["expenses"]
    assert rejecting.applies_to({"status": "submitted"}, model) and not rejecting.applies_to({"status": "draft"}, model)
