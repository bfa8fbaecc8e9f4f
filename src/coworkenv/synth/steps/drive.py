"""Drive steps: find a file by search or by browsing folders, then share it, take someone's access away, or file one.

``locate_file`` searches for a budget sheet and opens it and its archived copy (the old total
in view); ``locate_folder_file`` browses from the top-level folders into one team's folder,
whose listing shows the owner of each of its plans. Both bind
``file`` and have the report state what the file says. ``start_drive_folder`` creates a
folder with a first file in it.
"""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.draft import stated
from coworkenv.synth.expr_builder import and_, field
from coworkenv.synth.steps.base import Chain, Record, Step
from coworkenv.synth.steps.documents import PROJECTS
from coworkenv.synth.steps.people import colleague, named_colleague

TEAMS = ("Design", "Finance", "Legal", "Marketing", "Research")
ROLES = ("viewer", "commenter", "editor")


def _folder(chain: Chain, name: str, parent: str | None = None) -> Record:
    return chain.world.add("drive", "folders", {"name": name, "parent_id": parent})


def _file(chain: Chain, folder: Record, name: str, content: str, owner: str = "me") -> Record:
    record = {"name": name, "folder_id": folder["id"], "content": content, "updated": chain.world.day(-3)}
    record["owner"] = owner
    return chain.world.add("drive", "files", record)


def _plan(chain: Chain, folder: Record, name: str, owner: str) -> Record:
    """A team's plan, owned by ``owner`` (the folder's listing shows each file's owner: the other plan's in view)."""
    return _file(chain, folder, name, f"{folder['name']} {name}. Owner: {owner}.", owner)


def _ensure(chain: Chain) -> None:
    chain.world.ensure("drive", "folders", "files", "permissions")


class Budget(Step):
    """A project's budget sheet, found by search (the archived copy's name sorts after it)."""

    kind = "locate"
    name = "locate_file"
    gives: ClassVar[tuple[str, ...]] = ("file",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        _ensure(chain)
        project = world.rng.choice(PROJECTS)
        total = world.rng.randrange(20, 90) * 1000
        finance, archive = _folder(chain, "Finance"), _folder(chain, "Archive")
        target = _file(chain, finance, f"{project} budget", f"{project} budget. Total: {total} USD.")
        _file(chain, archive, f"{project} budget (old)", f"{project} budget draft. Total: {total - 5000} USD.")
        chain.facts["project"] = stated("project", project)
        chain.subject = f"the {project} budget"
        chain.call("drive_search_files", {"query": "${facts.project} budget"}, save_as="found")
        chain.call("drive_read_file", {"file_id": "${found.files[0].id}"})
        chain.call("drive_read_file", {"file_id": "${found.files[1].id}"})  # the old copy: its total in view
        chain.bind("file", target, "${found.files[0].id}", "drive", "files")
        chain.report_found(str(total), f"The {project} budget totals {total} USD.")
        chain.clause(
            "find the {project} budget file on the drive (not the old copy) and tell me its total",
            "look up the current {project} budget sheet and check the total",
            "open the {project} budget in the drive and let me know the total",
        )


class Browse(Step):
    """A team's file, found by browsing: the top-level folders, then the team's folder."""

    kind = "locate"
    name = "locate_folder_file"
    gives: ClassVar[tuple[str, ...]] = ("file",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        _ensure(chain)
        teams = sorted(world.rng.sample(TEAMS, 3))
        team = world.rng.randrange(3)
        folders = [_folder(chain, t) for t in teams]
        owner = world.person()
        names = sorted(world.rng.sample(("Q1 plan", "Q2 plan", "Q3 plan", "Q4 plan"), 2))
        mine = world.rng.randrange(2)
        owners = [owner if i == mine else world.person() for i in range(2)]
        files = [_plan(chain, folders[team], n, o.name) for n, o in zip(names, owners, strict=True)]
        for i, folder in enumerate(folders):
            if i != team:
                _plan(chain, folder, names[mine], world.person().name)
        chain.facts["team"] = stated("team", teams[team])
        chain.facts["plan"] = stated("plan", names[mine])
        chain.subject = f"the {teams[team]} {names[mine]}"
        chain.call("drive_list_folder", {}, save_as="top")
        chain.call("drive_list_folder", {"folder_id": f"${{top.folders[{team}].id}}"}, save_as="team")
        chain.call("drive_read_file", {"file_id": f"${{team.files[{mine}].id}}"})
        chain.bind("file", files[mine], f"${{team.files[{mine}].id}}", "drive", "files")
        chain.report_found(owner.name, f"{owner.name} owns it.")
        chain.clause(
            "go into the {team} folder on the drive, open the {plan} file and tell me who owns it",
            "browse to {team}'s folder, find their {plan} and check whose it is",
            "look in the drive's {team} folder for the {plan} and tell me its owner",
        )


class ShareFile(Step):
    """Share the file with a colleague the request names, in the role it names."""

    kind = "act"
    name = "act_drive_share"
    needs: ClassVar[tuple[str, ...]] = ("file",)
    gives: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        file = chain.need("file")
        who = named_colleague(chain)
        role = chain.world.rng.choice(ROLES)
        chain.facts["role"] = stated("role", role)
        args = {"item_id": file.ref, "person": "${who.contacts[0].email}", "role": "${facts.role}"}
        mine = field("item_id").eq(file.record["id"]) & field("person").eq(who.email)
        chain.write(
            "drive_share",
            args,
            "permissions",
            ("file_shared", mine & field("role").eq(role)),
            mine,
            weight=3.0,
            main=True,
        )
        chain.clause(
            "share it with {person} as {role}", "give {person} {role} access to it", "add {person} to it as a {role}"
        )


class Revoke(Step):
    """Take a former team member's own access to the file away (another person's access stays)."""

    kind = "act"
    name = "act_drive_revoke"
    needs: ClassVar[tuple[str, ...]] = ("file",)
    gives: ClassVar[tuple[str, ...]] = ("person",)

    def apply(self, chain: Chain) -> None:
        world = chain.world
        file = chain.need("file")
        who = named_colleague(chain)
        stays = world.person()
        for person in (who.email, stays.email):
            world.add("drive", "permissions", {"item_id": file.record["id"], "person": person, "role": "editor"})
        chain.call("drive_list_access", {"item_id": file.ref})
        chain.call("drive_revoke", {"item_id": file.ref, "person": "${who.contacts[0].email}"}, main=True)
        theirs = field("item_id").eq(file.record["id"]) & field("person").eq(who.email)
        chain.checks.count("access_revoked", "drive", "permissions", theirs, 0, 3.0, required=True)
        chain.allow("drive", "permissions", theirs)
        chain.clause("remove {person}'s access to it", "take {person} off it", "revoke {person}'s access")


class NewFolder(Step):
    """A new project folder with a contacts sheet naming a colleague's address (a workflow's first step)."""

    kind = "act"
    name = "start_drive_folder"

    def apply(self, chain: Chain) -> None:
        world = chain.world
        _ensure(chain)
        _folder(chain, "Finance")
        who = colleague(chain)
        project = world.rng.choice(PROJECTS)
        chain.facts["project"] = stated("project", project)
        chain.call("drive_create_folder", {"name": "${facts.project}"}, save_as="folder")
        content = f"{project} contact: {who.name}, ${{who.contacts[0].email}}"
        args = {"folder_id": "${folder.id}", "name": "Contacts", "content": content}
        chain.call("drive_create_file", args, main=True)
        chain.checks.record_exists("folder_made", "drive", "folders", field("name").eq(project), 2.0)
        made = and_(field("name").eq("Contacts"), field("content").contains(who.email))
        chain.checks.record_exists("file_made", "drive", "files", made, 3.0)
        chain.allow("drive", "folders", field("name").eq(project))
        chain.allow("drive", "files", field("name").eq("Contacts"))
        chain.report_found(who.email, f"The {project} folder has a Contacts file with {who.name} ({who.email}).")
        chain.clause(
            "make a {project} folder on the drive with a file called Contacts listing {person} and their email",
            "create a drive folder {project} and put a Contacts file in it with {person}'s address",
            "set up a {project} folder with a Contacts file naming {person} and their email",
        )


LOCATE: tuple[Step, ...] = (Budget(), Browse())
START: tuple[Step, ...] = (NewFolder(),)
READ: tuple[Step, ...] = ()
ACT: tuple[Step, ...] = (ShareFile(), Revoke())
