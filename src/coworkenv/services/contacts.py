"""Contacts: the company directory (people, roles, departments, reporting lines)."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.services.base import (
    Limit,
    Offset,
    Record,
    RecordModel,
    Result,
    Service,
    ToolError,
    check_email,
    joined,
    page,
    query_words,
    tool,
)
from coworkenv.services.damage import Damage


class Contact(RecordModel):
    name: str
    email: str
    phone: str = ""
    company: str = ""
    title: str = ""
    department: str = ""
    manager_email: str | None = None
    tags: list[str] = []


def _search_text(c: Record) -> str:
    return joined(c["name"], c["email"], c["title"], c["company"], c["department"])


class Contacts(Service):
    name = "contacts"
    description = "the company directory and address book"
    records = {"contacts": Contact}
    id_prefix = {"contacts": "con"}
    damage: ClassVar[dict[str, Damage]] = {
        "contacts": Damage.setting("contacts_update", "contact_id", "title", "Former employee")
    }

    def _email_taken(self, email: str, except_id: str | None = None) -> bool:
        return any(c["id"] != except_id for c in self.lookup("contacts", "email", email.lower(), lower=True))

    @tool("read")
    def search(
        self,
        query: str = "",
        company: str | None = None,
        department: str | None = None,
        tag: str | None = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Result:
        """Search people by words in name, email, title, company or department; filter by company, department, tag."""
        comp = company.lower() if company else None
        dept = department.lower() if department else None
        words = query_words(query)
        hits = [
            c
            for c in self.text_search("contacts", words, _search_text)
            if (comp is None or c["company"].lower() == comp)
            and (dept is None or c["department"].lower() == dept)
            and (tag is None or tag in c["tags"])
        ]
        hits.sort(key=lambda c: (c["name"], c["id"]))
        return page(hits, limit, offset, key="contacts")

    @tool("read", name="get")
    def get_contact(self, contact_id: str) -> Result:
        """Get one contact in full."""
        return self.get("contacts", contact_id)

    @tool("write")
    def create(
        self,
        name: str,
        email: str,
        phone: str = "",
        company: str = "",
        title: str = "",
        department: str = "",
        manager_email: str | None = None,
        tags: list[str] | None = None,
    ) -> Result:
        """Add a new contact; the email must be unique."""
        if not name.strip():
            raise ToolError("name must not be empty")
        check_email(email)
        if manager_email is not None:
            check_email(manager_email, "manager_email")
        if self._email_taken(email):
            raise ToolError(f"a contact with email {email!r} already exists")
        rec = self.insert(
            "contacts",
            {
                "name": name,
                "email": email,
                "phone": phone,
                "company": company,
                "title": title,
                "department": department,
                "manager_email": manager_email,
                "tags": tags or [],
            },
        )
        return {"created": True, "id": rec["id"], "contact": rec}

    @tool("write", name="update")
    def update_contact(
        self,
        contact_id: str,
        name: str | None = None,
        email: str | None = None,
        phone: str | None = None,
        company: str | None = None,
        title: str | None = None,
        department: str | None = None,
        manager_email: str | None = None,
        tags: list[str] | None = None,
    ) -> Result:
        """Change fields of a contact (fields left out stay as they are)."""
        self.get("contacts", contact_id)
        changes = {
            k: v
            for k, v in {
                "name": name,
                "email": email,
                "phone": phone,
                "company": company,
                "title": title,
                "department": department,
                "manager_email": manager_email,
                "tags": tags,
            }.items()
            if v is not None
        }
        if not changes:
            raise ToolError("nothing to update: give at least one field to change")
        if name is not None and not name.strip():
            raise ToolError("name must not be empty")
        if email is not None:
            check_email(email)
            if self._email_taken(email, except_id=contact_id):
                raise ToolError(f"a contact with email {email!r} already exists")
        if manager_email is not None:
            check_email(manager_email, "manager_email")
        rec = self.update("contacts", contact_id, changes)
        return {"updated": True, "id": contact_id, "contact": rec}
