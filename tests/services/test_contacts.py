import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.contacts import Contacts

FIXTURES = {
    "contacts": [
        {
            "id": "c1",
            "name": "Ana Diaz",
            "email": "ana@acme.com",
            "company": "Acme",
            "department": "Finance",
            "title": "Controller",
            "manager_email": "zoe@acme.com",
        },
        {
            "id": "c2",
            "name": "Bob Lee",
            "email": "bob@acme.com",
            "company": "Acme",
            "department": "Sales",
            "tags": ["vip"],
        },
        {"id": "c3", "name": "Cy Ng", "email": "cy@globex.com", "company": "Globex", "department": "Finance"},
    ]
}


@pytest.fixture
def svc() -> Contacts:
    return Contacts(Contacts.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Contacts,
        {"contacts_search": "read", "contacts_get": "read", "contacts_create": "write", "contacts_update": "write"},
    )


def test_search_filters_and_pagination(svc):
    ids = lambda r: [c["id"] for c in r["contacts"]]  # noqa: E731
    assert ids(svc.search(department="finance")) == ["c1", "c3"]
    assert ids(svc.search(query="controller")) == ["c1"]
    assert ids(svc.search(company="Acme", tag="vip")) == ["c2"]
    assert ids(svc.search(query="globex.com")) == ["c3"]
    res = svc.search(limit=2, offset=1)
    assert ids(res) == ["c2", "c3"] and res["total"] == 3 and res["next_offset"] is None
    assert svc.get_contact(contact_id="c1")["manager_email"] == "zoe@acme.com"


def test_create_and_update_copy_on_write(svc):
    new = svc.create(name="Dee", email="dee@acme.com", department="Legal")
    assert svc.get_contact(contact_id=new["id"])["department"] == "Legal"
    old = svc.db["contacts"]["c2"]
    svc.update_contact(contact_id="c2", title="VP Sales", phone="+1 555 0100")
    assert old["title"] == "" and svc.db["contacts"]["c2"]["title"] == "VP Sales"
    assert svc.db["contacts"]["c2"]["tags"] == ["vip"]


def test_validation(svc):
    with pytest.raises(ToolError, match="already exists"):
        svc.create(name="Ana 2", email="ANA@acme.com")
    with pytest.raises(ToolError):
        svc.create(name="X", email="nope")
    with pytest.raises(ToolError, match="already exists"):
        svc.update_contact(contact_id="c3", email="bob@acme.com")
    with pytest.raises(ToolError):
        svc.update_contact(contact_id="c3")
    with pytest.raises(ToolError):
        svc.get_contact(contact_id="c9")
