import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.drive import Drive

ANA, BOB, EXT = "ana@acme.com", "bob@acme.com", "kim@partner.example"
FIXTURES = {
    "folders": [
        {"id": "f1", "name": "Finance"},
        {"id": "f2", "name": "Q3", "parent_id": "f1"},
        {"id": "f3", "name": "Legal"},
    ],
    "files": [
        {"id": "d1", "name": "Budget", "folder_id": "f2", "content": "Q3 budget: 120k"},
        {"id": "d2", "name": "Contract", "folder_id": "f3", "content": "Master services agreement"},
    ],
    "permissions": [
        {"id": "p1", "item_id": "f1", "person": ANA, "role": "editor"},
        {"id": "p2", "item_id": "d1", "person": BOB, "role": "viewer"},
        {"id": "p3", "item_id": "d1", "person": ANA, "role": "viewer"},
    ],
}


@pytest.fixture
def svc() -> Drive:
    return Drive(Drive.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Drive,
        {
            "drive_list_folder": "read",
            "drive_search_files": "read",
            "drive_read_file": "read",
            "drive_create_folder": "write",
            "drive_create_file": "write",
            "drive_share": "write",
            "drive_revoke": "write",
            "drive_list_access": "read",
        },
    )


def test_reads(svc):
    assert [f["name"] for f in svc.list_folder()["folders"]] == ["Finance", "Legal"]
    inside = svc.list_folder(folder_id="f1")
    assert [f["id"] for f in inside["folders"]] == ["f2"] and inside["files"] == []
    assert svc.search_files(query="budget")["files"] == [{"id": "d1", "name": "Budget", "path": "/Finance/Q3/Budget"}]
    assert svc.read_file(file_id="d2")["path"] == "/Legal/Contract"


def test_folder_access_is_inherited_and_strongest_role_wins(svc):
    access = {a["person"]: a for a in svc.list_access(item_id="d1")["access"]}
    assert access[ANA] == {"person": ANA, "role": "editor", "via": "f1"}  # the folder's editor beats the file's viewer
    assert access[BOB] == {"person": BOB, "role": "viewer", "via": "d1"}
    new = svc.create_file(folder_id="f2", name="Forecast", content="...")
    assert [a["person"] for a in svc.list_access(item_id=new["id"])["access"]] == [ANA]


def test_share_and_revoke(svc):
    svc.share(item_id="f3", person=EXT, role="commenter")
    assert svc.list_access(item_id="d2")["access"] == [{"person": EXT, "role": "commenter", "via": "f3"}]
    svc.share(item_id="f3", person=EXT, role="viewer")  # sharing again changes the role, adds no second grant
    assert len([p for p in svc.db["permissions"].values() if p["item_id"] == "f3"]) == 1
    res = svc.revoke(item_id="d1", person=ANA)
    assert res["still_has"] == {"person": ANA, "role": "editor", "via": "f1"}  # the folder still grants it
    with pytest.raises(ToolError, match="access comes from folder 'f1'"):
        svc.revoke(item_id="d1", person=ANA)
    svc.revoke(item_id="f3", person=EXT)
    assert svc.list_access(item_id="d2")["access"] == []


def test_a_cycle_in_fixtures_does_not_hang(svc):
    svc.store("folders", "f1", {"id": "f1", "name": "Finance", "parent_id": "f2", "owner": "me"})
    assert svc.read_file(file_id="d1")["path"] == "/Finance/Q3/Budget"


@pytest.mark.parametrize(
    ("method", "args", "match"),
    [
        ("share", {"item_id": "nope", "person": BOB, "role": "viewer"}, "no file or folder"),
        ("share", {"item_id": "d1", "person": "bob", "role": "viewer"}, "email"),
        ("share", {"item_id": "d1", "person": BOB, "role": "owner"}, "invalid role"),
        ("revoke", {"item_id": "d2", "person": BOB}, "no permission of their own"),
        ("create_folder", {"name": "Q3", "parent_id": "f1"}, "already exists"),
        ("create_folder", {"name": "a/b"}, "invalid name"),
        ("create_file", {"folder_id": "nope", "name": "x", "content": ""}, "no folders record"),
        ("create_file", {"folder_id": "f2", "name": "budget", "content": ""}, "already exists"),
        ("list_folder", {"folder_id": "d1"}, "no folders record"),
    ],
)
def test_validation(svc, rejected, method, args, match):
    rejected(svc, method, args, match)


def test_fixture_permissions_name_people_by_email():
    with pytest.raises(ValueError, match=r"drive.permissions\[0\].person"):
        Drive.normalize_fixtures({"permissions": [{"id": "p", "item_id": "f1", "person": "team", "role": "viewer"}]})
