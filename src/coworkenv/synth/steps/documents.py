"""Document steps: find a project plan or a meeting's notes among look-alikes, then share, edit or add to it.

``locate_document`` finds a project's plan by search (an archived copy and another
project's plan look alike); ``locate_meeting_notes`` finds one meeting's notes in a folder
listing (other dates' notes sit beside it). Both bind ``document`` and have the report
state what the document says. ``start_handover_doc`` writes a new document.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import Expr, and_, field, not_
from coworkenv.synth.steps.base import Binding, Chain, Record, Step
from coworkenv.synth.steps.people import colleague, named_colleague

PROJECTS = ("Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Iris", "Juniper")
DECISIONS = (
    "launch slips one week",
    "scope excludes the mobile app",
    "budget is frozen until Q3",
    "pilot runs in EMEA",
)
ACTIONS = ("send the revised quote", "book the venue", "draft the FAQ", "review the contract", "update the roadmap")


def _doc(chain: Chain, path: str, content: str) -> Record:
    world = chain.world
    record = {"path": path, "title": path.rsplit("/", 1)[1], "content": content, "updated": world.day(-4)}
    return world.add("documents", "documents", record)


def _edit(chain: Chain, document: Binding, tool: str, args: Record, check: str, edit: str, *says: Expr) -> None:
    """The workflow's key write, an edit of the bound document in place: its call, the required check that the
    document then ``says`` each thing, that the write may change that document only, and ``edit`` bound."""
    this = field("id").eq(document.record["id"])
    chain.call(tool, args, main=True)
    chain.checks.record_exists(check, "documents", "documents", and_(this, *says), 3.0, required=True)
    chain.allow("documents", "documents", this)
    chain.bind("edit", {"content": edit}, document.ref, "documents")


class ProjectPlan(Step):
    """A project's plan under /Projects (its archived copy and another project's plan look alike)."""

    kind = "locate"
    name = "locate_document"
    gives: ClassVar[tuple[str, ...]] = ("document",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        project, other = sorted(world.rng.sample(PROJECTS, 2))
        launch, old = world.day(world.rng.randrange(15, 60)), world.day(-world.rng.randrange(40, 90))
        owner = world.person()
        target = _doc(
            chain, f"/Projects/{project} plan", f"Project {project}.\nOwner: {owner.name}\nLaunch: {launch}\n"
        )
        _doc(chain, f"/Archive/{project} plan", f"Project {project} (superseded).\nLaunch: {old}\n")
        _doc(chain, f"/Projects/{other} plan", f"Project {other}.\nLaunch: {world.day(70)}\n")
        chain.facts["project"] = stated("project", project)
        chain.facts["folder"] = stated("folder", "/Projects")
        chain.subject = f"the {project} plan"
        args = {"query": "${facts.project} plan", "folder": "${facts.folder}"}
        chain.call("documents_search", args, save_as="plan")
        chain.call("documents_read", {"document_id": "${plan.documents[0].id}"})
        chain.bind("document", target | {"launch": launch}, "${plan.documents[0].id}", "documents", "documents")
        chain.report_found(launch, f"The {project} plan has the launch on {launch}.")
        chain.clause(
            "open the current {project} plan in {folder} (not the archived one) and tell me the launch date",
            "find the {project} project plan under {folder} and check when it launches",
            "pull up the live {project} plan in {folder} and let me know its launch date",
        )


class MeetingNotes(Step):
    """One meeting's notes in the /Meetings folder listing (the notes of other dates sit beside them)."""

    kind = "locate"
    name = "locate_meeting_notes"
    gives: ClassVar[tuple[str, ...]] = ("document",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        team = world.rng.choice(("Platform", "Sales", "Design", "Finance"))
        days = sorted(world.day(-d) for d in world.rng.sample(range(1, 20), 3))
        pick = world.rng.randrange(3)
        actions = world.rng.sample(ACTIONS, 3)
        notes = [
            _doc(chain, f"/Meetings/{day} {team} sync", f"{team} sync, {day}.\nAction: {act}\n")
            for day, act in zip(days, actions, strict=True)
        ]
        target = notes[pick]
        chain.facts["when"] = stated("when", days[pick])
        chain.facts["team"] = stated("team", team)
        chain.subject = f"the {days[pick]} {team} sync"
        chain.facts["folder"] = stated("folder", "/Meetings")
        chain.call("documents_list_folder", {"folder": "${facts.folder}"}, save_as="meetings")
        chain.call("documents_read", {"document_id": f"${{meetings.documents[{pick}].id}}"})
        chain.bind("document", target, f"${{meetings.documents[{pick}].id}}", "documents", "documents")
        chain.report_found(actions[pick], f"The action from that meeting: {actions[pick]}.")
        chain.clause(
            "find the notes of the {team} sync on {when} in {folder} and tell me the action item",
            "look in {folder} for the {when} {team} sync notes and check what the action was",
            "open the {team} sync notes from {when} (in {folder}) and tell me what we agreed to do",
        )


class Share(Step):
    """Share the document with a colleague the request names (the directory gives the address)."""

    kind = "act"
    name = "act_share_document"
    needs: ClassVar[tuple[str, ...]] = ("document",)
    gives: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        document = chain.need("document")
        who = named_colleague(chain)
        args = {"document_id": document.ref, "email": "${who.contacts[0].email}"}
        chain.update("documents_share", args, document, {"shared_with": [who.email]}, "doc_shared")
        chain.clause("share it with {person}", "give {person} access to it", "share the document with {person}")


class ChangeLaunch(Step):
    """Move the plan's launch date to the one the request gives, keeping the rest of the plan."""

    kind = "act"
    name = "act_update_document"
    needs: ClassVar[tuple[str, ...]] = ("document",)
    gives: ClassVar[tuple[str, ...]] = ("edit",)

    def fits(self, chain: Chain) -> bool:
        return super().fits(chain) and "launch" in chain.bound["document"].record

    def apply(self, chain: Chain) -> None:
        document = chain.need("document")
        old, launch = document.record["content"], document.record["launch"]
        new = chain.world.day(chain.world.rng.randrange(61, 90))
        chain.facts["new_launch"] = stated("new_launch", new)
        args = {"document_id": document.ref, "content": old.replace(launch, new)}
        owner = old.split("\n")[1]
        content = field("content")
        said = (content.contains(f"Launch: {new}"), not_(content.contains(launch)), content.contains(owner))
        _edit(chain, document, "documents_update", args, "launch_moved", new, *said)
        chain.clause(
            "move its launch date to {new_launch} (keep the rest as it is)",
            "change the launch in it to {new_launch}, leaving the other lines",
            "update the plan's launch to {new_launch} without touching the rest",
        )


class AddDecision(Step):
    """Append the decision the request gives to the document, once."""

    kind = "act"
    name = "act_append_document"
    needs: ClassVar[tuple[str, ...]] = ("document",)
    gives: ClassVar[tuple[str, ...]] = ("edit",)

    def apply(self, chain: Chain) -> None:
        document = chain.need("document")
        decision = chain.world.rng.choice(DECISIONS)
        chain.facts["decision"] = stated("decision", decision)
        args = {"document_id": document.ref, "text": "Decision: ${facts.decision}"}
        once = field("content").count(decision).eq(1)
        _edit(chain, document, "documents_append", args, "decision_added", decision, once)
        chain.clause(
            "add a line to it recording that the {decision}",
            "append the decision that the {decision}",
            "note in it that the {decision}",
        )


class Handover(Step):
    """A new handover document for a colleague, with their address in it (a workflow's first step)."""

    kind = "act"
    name = "start_handover_doc"

    def apply(self, chain: Chain) -> None:
        world = chain.world
        who = colleague(chain)
        project = world.rng.choice(PROJECTS)
        path = f"/Handover/{project} handover"
        world.ensure("documents", "documents")
        chain.facts["project"] = stated("project", project)
        content = f"Handover of {project} to {who.name} (${{who.contacts[0].email}})."
        chain.call("documents_create", {"path": path, "content": content}, main=True)
        made = field("path").eq(path) & field("content").contains(who.email)
        chain.checks.record_exists("handover_written", "documents", "documents", made, 3.0)
        chain.allow("documents", "documents", field("path").eq(path))
        chain.report_found(who.email, f"I wrote {path} for {who.name} ({who.email}).")
        chain.clause(
            f"write a handover doc at {path} for {{person}} with their email address in it",
            f"create {path}, handing {{project}} over to {{person}} (put their email in it)",
            f"start a document {path} that hands {{project}} to {{person}}, including their address",
        )


LOCATE: tuple[Step, ...] = (ProjectPlan(), MeetingNotes())
START: tuple[Step, ...] = (Handover(),)
READ: tuple[Step, ...] = ()
ACT: tuple[Step, ...] = (Share(), ChangeLaunch(), AddDecision())
