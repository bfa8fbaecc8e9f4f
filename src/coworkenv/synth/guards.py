"""A collateral guard on each collection a blueprint's reference writes that no check guards yet.

A cheat that does the task and also rewrites another record of such a collection (a background mail moved to
the trash) would otherwise pass; composed chains add the same guards from what each step writes. Here the
collections come from the reference's write tools, and what the guard allows from the checks on that
collection: the records they look for (``where``) and the records they name (``record_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from coworkenv.services.registry import service_class, tool_table
from coworkenv.spec.checks import KINDS, CheckModel
from coworkenv.spec.declared import ServiceDecl
from coworkenv.synth.expr_builder import Expr, field, or_

GUARD_WEIGHT = 1.5


def written_guards(
    checks: Sequence[CheckModel],
    calls: Iterable[str],
    fixtures: Mapping[str, Mapping[str, object]],
    declared: Mapping[str, ServiceDecl],
    stage: str = "",
) -> list[CheckModel]:
    """Required ``unchanged`` checks, one per damageable collection of a service that ``calls`` write, in the
    fixtures and guarded by none of ``checks``; each allows what the other checks on it look for or name.
    A later ``stage``'s guards carry its id (check ids are unique across stages)."""
    table = tool_table(dict(declared) or None)
    written = {info.service for call in calls if (info := table.get(call)) is not None and info.kind == "write"}
    guarded = {target[:2] for c in checks if (target := c.collateral_guard()) is not None}
    taken = {c.id for c in checks}
    out: list[CheckModel] = []
    for service in sorted(written & set(fixtures)):
        damage = service_class(service, dict(declared) or None).damage
        for collection in sorted(set(fixtures[service]) & set(damage)):
            if (service, collection) in guarded or (
                id := f"{service}_{collection}_guard{stage and '_' + stage}"
            ) in taken:
                continue
            allows = _allowed(checks, service, collection)
            fields = {"service": service, "collection": collection}
            if allows:
                fields["allow"] = str(or_(*allows))
            data = {"kind": "unchanged", "id": id, "weight": GUARD_WEIGHT, "required": True, **fields}
            out.append(KINDS["unchanged"].model_validate(data))
    return out


def _allowed(checks: Sequence[CheckModel], service: str, collection: str) -> list[Expr]:
    """What the checks on ``service.collection`` look for or name, as conditions on a record."""
    out: list[Expr] = []
    for c in checks:
        names = c.names()
        if names.collection != (service, collection):
            continue
        if names.record_id is not None:
            out.append(field("id").eq(names.record_id))
        out += [Expr(f"({text})") for key, text in names.expressions if key == "where" and text and text != "true"]
    return out
