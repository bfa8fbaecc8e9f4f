"""Documents: a virtual document store with folders (paths like "/Finance/Q3 report").

Paths are names inside the simulated store only; nothing here touches the host file system.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import AfterValidator, Field

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_email,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage

SNIPPET = 200


def _virtual_path(v: str) -> str:
    """A stored document's path as it is, or ValueError (pydantic names the field). A validator of the value alone,
    not a model's ``field_validator``: the record stays plain, so a write builds it without running the model."""
    if not v.startswith("/") or v.endswith("/") or "//" in v:
        raise ValueError("a document path looks like '/Folder/Document name'")
    return v


class Document(RecordModel):
    path: Annotated[str, AfterValidator(_virtual_path)]
    title: str = ""
    content: str = ""
    owner: str = "me"
    updated: str = ""
    shared_with: list[str] = []


def _path(path: str) -> str:
    """Normalise a virtual document path to '/Folder/Name' (no '.', '..' or empty parts)."""
    parts = [p.strip() for p in path.split("/") if p.strip()]
    if not parts or any(p in (".", "..") for p in parts):
        raise ToolError(f"invalid path {path!r}: expected something like '/Folder/Document name'")
    return "/" + "/".join(parts)


def _folder(folder: str) -> str:
    """A folder prefix ending in '/' ('/' for the root)."""
    clean = [p.strip() for p in folder.split("/") if p.strip()]
    if any(p in (".", "..") for p in clean):
        raise ToolError(f"invalid folder {folder!r}")
    return "/" + "".join(p + "/" for p in clean)


def _snippet(content: str, query: str) -> str:
    if len(content) <= SNIPPET:
        return content
    at = content.lower().find(query.split()[0].lower()) if query.strip() else -1
    start = max(0, min(at - 40, len(content) - SNIPPET)) if at > 0 else 0
    return content[start : start + SNIPPET]


def _summary(d: Record, query: str = "") -> Result:
    return {
        "id": d["id"],
        "path": d["path"],
        "title": d["title"],
        "owner": d["owner"],
        "updated": d["updated"],
        "snippet": _snippet(d["content"], query),
    }


def _search_text(d: Record) -> str:
    return f"{d['title']} {d['path']} {d['content']}"


class Documents(Service):
    name = "documents"
    description = "the shared document store (virtual folders and documents)"
    records = {"documents": Document}
    id_prefix = {"documents": "doc"}
    damage: ClassVar[dict[str, Damage]] = {
        "documents": Damage.setting("documents_update", "document_id", "content", "(cleared)")
    }

    def _by_path(self, path: str) -> Record | None:
        for d in self.db["documents"].values():
            if d["path"] == path:
                return d
        return None

    @tool("read")
    def search(
        self,
        query: str = "",
        folder: Annotated[str | None, Field(description="only documents under this folder, e.g. '/Finance'")] = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Search documents by words in title, path or content, optionally under a folder; returns snippets."""
        prefix = _folder(folder) if folder else "/"
        words = query_words(query)
        hits = [d for d in self.text_search("documents", words, _search_text) if d["path"].startswith(prefix)]
        hits.sort(key=lambda d: (d["path"], d["id"]))
        return page(hits, limit, offset, key="documents", shown=lambda d: _summary(d, query))

    @tool("read")
    def read(self, document_id: str) -> Result:
        """Read one document in full."""
        return self.get("documents", document_id)

    @tool("read")
    def list_folder(
        self,
        folder: Annotated[str, Field(description="folder path, '/' for the root")] = "/",
        limit: Annotated[int, Field(ge=1, le=100, description="page size")] = 50,
        offset: Offset = 0,
    ) -> Result:
        """List the sub-folders and documents directly inside a folder."""
        prefix = _folder(folder)
        subfolders: set[str] = set()
        docs = []
        for d in self.db["documents"].values():
            path = d["path"]
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix) :]
            if "/" in rest:
                subfolders.add(prefix + rest.split("/", 1)[0])
            else:
                docs.append({"id": d["id"], "path": path, "title": d["title"], "updated": d["updated"]})
        docs.sort(key=lambda d: (d["path"], d["id"]))
        return {
            "folder": prefix.rstrip("/") or "/",
            "folders": sorted(subfolders),
            **page(docs, limit, offset, "documents"),
        }

    @tool("write")
    def create(self, path: str, content: str, title: str | None = None) -> Result:
        """Create a document at a path such as '/Finance/Q3 report'; the path must not exist yet."""
        clean = _path(path)
        if self._by_path(clean) is not None:
            raise ToolError(f"a document already exists at {clean!r}")
        rec = self.insert(
            "documents",
            {"path": clean, "title": title or clean.rsplit("/", 1)[1], "content": content, "updated": "now"},
        )
        return {"created": True, "id": rec["id"], "path": clean}

    @tool("write")
    def append(self, document_id: str, text: str) -> Result:
        """Append text to the end of a document (on a new line)."""
        if not text:
            raise ToolError("text must not be empty")
        old = self.get("documents", document_id)["content"]
        content = f"{old}\n{text}" if old and not old.endswith("\n") else old + text
        self.update("documents", document_id, {"content": content, "updated": "now"})
        return {"id": document_id, "length": len(content)}

    @tool("write", name="update")
    def update_document(self, document_id: str, content: str) -> Result:
        """Replace the whole content of a document."""
        self.update("documents", document_id, {"content": content, "updated": "now"})
        return {"id": document_id, "length": len(content)}

    @tool("write")
    def share(self, document_id: str, email: str) -> Result:
        """Share a document with a person (email)."""
        check_email(email)
        doc = self.get("documents", document_id)
        if email.lower() in (e.lower() for e in doc["shared_with"]):
            return {"id": document_id, "shared_with": doc["shared_with"]}
        rec = self.update("documents", document_id, {"shared_with": [*doc["shared_with"], email]})
        return {"id": document_id, "shared_with": rec["shared_with"]}
