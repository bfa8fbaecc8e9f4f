"""Drive: files in nested folders, shared with people in a role; a folder's sharing reaches everything in it.

A service of its own rather than an extension of ``documents``: there a document is a path
with a flat ``shared_with`` list, and every existing spec and blueprint reads it that way.
Access here is a record per (item, person, role), folders are records with parents, and the
access a person has to a file is computed through its folders, so revoking a file's own
permission does not remove access that a folder grants (the error says where it comes from).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from coworkenv.services.base import (
    Email,
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_choice,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

Role = Literal["viewer", "commenter", "editor"]
RANK = {"viewer": 1, "commenter": 2, "editor": 3}
MAX_DEPTH = 64


class Folder(RecordModel):
    name: str
    parent_id: str | None = None
    owner: str = "me"


class File(RecordModel):
    name: str
    folder_id: str
    content: str = ""
    owner: str = "me"
    updated: str = ""


class Permission(RecordModel):
    item_id: str
    person: Email
    role: Role


def _file_text(f: Record) -> str:
    return joined(f["name"], f["content"])


class Drive(Service):
    name = "drive"
    description = "the shared drive: files in folders, shared with people as viewer, commenter or editor"
    records = {"folders": Folder, "files": File, "permissions": Permission}
    id_prefix = {"folders": "fld", "files": "file", "permissions": "perm"}
    damage: ClassVar[dict[str, Damage]] = {
        "permissions": Damage.setting(
            "drive_share", "item_id", "role", "editor", (("item_id", "item_id"), ("person", "person"))
        )
    }

    def _item(self, item_id: str) -> tuple[str, Record]:
        """('file' | 'folder', record) for an id of either kind."""
        file, folder = self.db["files"].get(item_id), self.db["folders"].get(item_id)
        if file is not None and folder is not None:
            raise ToolError(f"id {item_id!r} names both a file and a folder")
        if file is not None:
            return "file", file
        if folder is not None:
            return "folder", folder
        raise ToolError(f"no file or folder with id {item_id!r}")

    def _chain(self, kind: str, rec: Record) -> list[Record]:
        """The item and the folders above it, nearest first (a cycle or dangling parent ends the walk)."""
        chain = [rec]
        seen = {id(rec)}  # the chain's records by identity: a walk back into one of them is a cycle
        folders = self.db["folders"]
        parent = rec["folder_id"] if kind == "file" else rec["parent_id"]
        while parent is not None and len(chain) < MAX_DEPTH:
            folder = folders.get(parent)
            if folder is None or id(folder) in seen:
                break
            chain.append(folder)
            seen.add(id(folder))
            parent = folder["parent_id"]
        return chain

    def _path(self, kind: str, rec: Record, chain: list[Record] | None = None) -> str:
        """The item's path (``chain``: its :meth:`_chain`, when the caller has it already)."""
        return "/" + "/".join([r["name"] for r in reversed(chain or self._chain(kind, rec))])

    def _access(self, kind: str, rec: Record, chain: list[Record] | None = None) -> dict[str, dict[str, str]]:
        """person (lower-cased) -> {person, role, via}: the strongest grant on the item or a folder above."""
        out: dict[str, dict[str, str]] = {}
        for holder in chain or self._chain(kind, rec):
            for p in self.lookup("permissions", "item_id", holder["id"]):
                key = p["person"].lower()
                if key not in out or RANK[p["role"]] > RANK[out[key]["role"]]:
                    out[key] = {"person": p["person"], "role": p["role"], "via": holder["id"]}
        return out

    @tool("read")
    def list_folder(
        self,
        folder_id: Annotated[str | None, Field(description="the folder; omit for the top level")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="page size")] = 50,
        offset: Offset = 0,
    ) -> Result:
        """List the sub-folders and files directly inside a folder (or the top-level folders)."""
        if folder_id is not None:
            self.get("folders", folder_id)
        subs = sorted(self.lookup("folders", "parent_id", folder_id), key=lambda f: (f["name"], f["id"]))
        files = sorted(self.lookup("files", "folder_id", folder_id), key=lambda f: (f["name"], f["id"]))
        short = [{k: f[k] for k in ("id", "name", "owner", "updated")} for f in files]
        return {"folder_id": folder_id, "folders": subs, **page(short, limit, offset, "files")}

    @tool("read")
    def search_files(self, query: str = "", limit: Limit = 10, offset: Offset = 0) -> Result:
        """Search files by words in their name or content; returns each file's path."""
        words = query_words(query)
        hits = list(self.text_search("files", words, _file_text))
        hits.sort(key=lambda f: (f["name"], f["id"]))

        def shown(f: Record) -> Result:
            return {"id": f["id"], "name": f["name"], "path": self._path("file", f)}

        return page(hits, limit, offset, key="files", shown=shown)

    @tool("read")
    def read_file(self, file_id: str) -> Result:
        """Read one file in full, with its path."""
        f = self.get("files", file_id)
        return {**f, "path": self._path("file", f)}

    @tool("write")
    def create_folder(
        self, name: str, parent_id: Annotated[str | None, Field(description="omit for a top-level folder")] = None
    ) -> Result:
        """Create a folder, at the top level or inside another; names are unique within their folder."""
        self._check_name(name, parent_id, "folders", "parent_id")
        rec = self.insert("folders", {"name": name.strip(), "parent_id": parent_id})
        return {"created": True, "id": rec["id"], "path": self._path("folder", rec)}

    @tool("write")
    def create_file(self, folder_id: str, name: str, content: str) -> Result:
        """Create a file in a folder; it inherits the folder's sharing."""
        self._check_name(name, folder_id, "files", "folder_id")
        rec = self.insert("files", {"name": name.strip(), "folder_id": folder_id, "content": content, "updated": "now"})
        return {"created": True, "id": rec["id"], "path": self._path("file", rec)}

    def _check_name(self, name: str, parent: str | None, collection: str, field: str) -> None:
        if not name.strip() or "/" in name:
            raise ToolError(f"invalid name {name!r}: must be non-empty and contain no '/'")
        if parent is not None:
            self.get("folders", parent)
        if any(r["name"].lower() == name.strip().lower() for r in self.lookup(collection, field, parent)):
            raise ToolError(f"{name.strip()!r} already exists in that folder")

    @tool("write")
    def share(
        self,
        item_id: Annotated[str, Field(description="a file or folder id")],
        person: Annotated[str, Field(description="their email")],
        role: Role,
    ) -> Result:
        """Share a file or folder with a person as viewer, commenter or editor (a folder's sharing covers its contents).

        Sharing again with the same person changes their role on that item.
        """
        kind, rec = self._item(item_id)
        check_email(person, "person")
        check_choice(role, RANK, "role")
        mine = [p for p in self.lookup("permissions", "item_id", item_id) if p["person"].lower() == person.lower()]
        if mine:
            self.update("permissions", mine[0]["id"], {"role": role})
        else:
            self.insert("permissions", {"item_id": item_id, "person": person, "role": role})
        return {"item_id": item_id, "path": self._path(kind, rec), "person": person, "role": role}

    @tool("write")
    def revoke(self, item_id: Annotated[str, Field(description="a file or folder id")], person: str) -> Result:
        """Remove a person's own permission on a file or folder.

        Access a folder above grants is not removed; the result says where it still comes from.
        """
        kind, rec = self._item(item_id)
        mine = [p for p in self.lookup("permissions", "item_id", item_id) if p["person"].lower() == person.lower()]
        if not mine:
            left = self._access(kind, rec).get(person.lower())
            where = f"; their access comes from folder {left['via']!r}" if left else ""
            raise ToolError(f"{person} has no permission of their own on {item_id!r}{where}")
        for p in mine:
            self.delete("permissions", p["id"])
        still = self._access(kind, rec).get(person.lower())
        return {"item_id": item_id, "person": person, "revoked": True, "still_has": still}

    @tool("read")
    def list_access(self, item_id: Annotated[str, Field(description="a file or folder id")]) -> Result:
        """Who can open a file or folder, in which role, and through which item (itself or a folder above)."""
        kind, rec = self._item(item_id)
        chain = self._chain(kind, rec)  # walked once for both the access and the path
        people = sorted(self._access(kind, rec, chain).values(), key=lambda a: a["person"].lower())
        return {"item_id": item_id, "path": self._path(kind, rec, chain), "owner": rec["owner"], "access": people}
