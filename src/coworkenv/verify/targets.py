"""Changes that name their record by ``where``: the selector must parse, read only the record,
and pick out exactly one live record each time the reference run makes the change.

Such a change reaches a record that only exists once somebody made it (the ticket the agent
opened yesterday), so whether its target exists is known only when it is made: the verifier
reads what the reference run noted (``missed``) and rejects a change that found nothing to
change (it would be a silent no-op, and the task would not be the one the spec describes) or
several records (which one changes would depend on what else the agent created).
"""

from __future__ import annotations

from coworkenv.expr import check_syntax, root_names
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.events import Miss
from coworkenv.spec.models import Mutation, TaskSpec
from coworkenv.verify.findings import Finding
from coworkenv.verify.stages import event_places


def selector_findings(mutation: Mutation, where: str) -> list[Finding]:
    """A selector that does not parse, or reads anything but the record ``r``."""
    if mutation.where is None:
        return []
    err = check_syntax(mutation.where)
    if err:
        return [Finding(kind="schema", where=f"{where}.where", evidence=err, hint="fix the expression")]
    bad = sorted(root_names(mutation.where) - {"r"})
    if bad:
        return [
            Finding(
                kind="unresolved_reference",
                where=f"{where}.where",
                evidence=f"reads {bad[0]!r}; a selector reads only the record, as 'r'",
                hint="select the record by its own fields (r.title, r.team, r.author ...)",
            )
        ]
    return []


def target_findings(spec: TaskSpec, env: Environment) -> list[Finding]:
    """The changes by ``where`` that found no record or several when the reference run (just played in ``env``)
    made them."""
    missed = list(env.scheduler.missed) + (list(env.stages.missed) if env.stages is not None else [])
    owners = {event.id: (where, event.mutations) for where, event in event_places(spec)}
    owners |= {f"stage:{stage.id}": (f"stages[{k}]", stage.mutations) for k, stage in enumerate(spec.stages or [])}
    found: dict[str, Finding] = {}
    for miss in missed:
        place, mutations = owners[miss.owner]
        where = f"{place}.mutations[{miss.index}]"
        found.setdefault(where, _finding(mutations[miss.index], miss, where))
    return list(found.values())


def _finding(mutation: Mutation, miss: Miss, where: str) -> Finding:
    when = f"when the reference run makes this {mutation.op}"
    what = f"{mutation.service}.{mutation.collection}"
    if miss.matches == 0:
        evidence = f"{when}, no {what} record matches {mutation.where!r}: it changes nothing"
        hint = "fire it after the record is made (on the call that makes it, or in a later stage), or fix the selector"
    else:
        evidence = f"{when}, {miss.matches} {what} records match {mutation.where!r}: which one changes is ambiguous"
        hint = "narrow the selector so that it picks out one record"
    return Finding(kind="unresolved_reference", where=where, evidence=evidence, hint=hint)
