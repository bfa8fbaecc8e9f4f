import pytest

from coworkenv.services.base import ToolError
from coworkenv.services.documents import Documents

FIXTURES = {
    "documents": [
        {"id": "d1", "path": "/Finance/Q3 report", "title": "Q3 report", "content": "Revenue grew. " * 40},
        {"id": "d2", "path": "/Finance/Budgets/2026", "title": "Budget 2026", "content": "Travel: 12000"},
        {"id": "d3", "path": "/HR/Handbook", "title": "Handbook", "content": "Travel policy: economy class."},
    ]
}


@pytest.fixture
def svc() -> Documents:
    return Documents(Documents.normalize_fixtures(FIXTURES))


def test_tools(check_tools):
    check_tools(
        Documents,
        {
            "documents_search": "read",
            "documents_read": "read",
            "documents_list_folder": "read",
            "documents_create": "write",
            "documents_append": "write",
            "documents_update": "write",
            "documents_share": "write",
        },
    )


def test_fixture_paths_are_virtual():
    with pytest.raises(ValueError, match="path"):
        Documents.normalize_fixtures({"documents": [{"id": "x", "path": "relative/path"}]})


def test_search_and_list_folder(svc):
    ids = lambda r: [d["id"] for d in r["documents"]]  # noqa: E731
    assert ids(svc.search(query="travel")) == ["d2", "d3"]
    assert ids(svc.search(query="travel", folder="/Finance")) == ["d2"]
    hit = svc.search(query="revenue")["documents"][0]
    assert len(hit["snippet"]) == 200 and "content" not in hit
    res = svc.search(limit=1, offset=1)
    assert ids(res) == ["d1"] and res["total"] == 3 and res["next_offset"] == 2
    listing = svc.list_folder(folder="/Finance")
    assert listing["folders"] == ["/Finance/Budgets"] and ids(listing) == ["d1"]
    assert svc.list_folder()["folders"] == ["/Finance", "/HR"]


def test_writes_copy_on_write(svc):
    created = svc.create(path="Finance/ Q4 plan ", content="Draft")
    doc = svc.read(document_id=created["id"])
    assert doc["path"] == "/Finance/Q4 plan" and doc["title"] == "Q4 plan"
    old = svc.db["documents"]["d2"]
    svc.append(document_id="d2", text="Events: 5000")
    assert old["content"] == "Travel: 12000"
    assert svc.db["documents"]["d2"]["content"] == "Travel: 12000\nEvents: 5000"
    svc.update_document(document_id="d2", content="new")
    svc.share(document_id="d2", email="ana@acme.com")
    svc.share(document_id="d2", email="ana@acme.com")
    assert svc.db["documents"]["d2"]["shared_with"] == ["ana@acme.com"] and old["shared_with"] == []


def test_validation(svc):
    with pytest.raises(ToolError, match="already exists"):
        svc.create(path="/Finance/Q3 report", content="x")
    with pytest.raises(ToolError):
        svc.create(path="/../etc/passwd", content="x")
    with pytest.raises(ToolError):
        svc.share(document_id="d1", email="ana")
    with pytest.raises(ToolError):
        svc.read(document_id="d9")
