"""Drive steps: the right file (not its archived copy, not another team's) is shared or has access revoked."""

from __future__ import annotations

import re

import pytest
from step_cases import admitted, answered, edit_call, reads, records, score, twice, without

CHAINS = {
    "drive_share": ("locate_file", "act_drive_share", "notify_dm_person", "report"),
    "drive_revoke": ("locate_folder_file", "act_drive_revoke", "notify_channel", "report"),
    "drive_create_file": ("start_drive_folder", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(71, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_sharing_the_old_copy_fails_and_sharing_twice_is_harmless() -> None:
    spec = admitted(72, *CHAINS["drive_share"])
    old = next(f for f in records(spec, "drive", "files") if "(old)" in f["name"])
    wrong = edit_call(spec, "drive_share", lambda a: {**a, "item_id": old["id"]})
    assert score(spec, wrong) < 0.75
    assert score(spec, twice(spec, "drive_share")) == 1.0


def test_revoking_keeps_the_other_persons_access() -> None:
    spec = admitted(73, *CHAINS["drive_revoke"])
    perms = records(spec, "drive", "permissions")
    assert len(perms) == 2
    stays = perms[1]["person"]
    wrong = edit_call(spec, "drive_revoke", lambda a: {**a, "person": stays})
    assert score(spec, wrong) < 0.75


def test_the_old_copys_total_is_read_and_reporting_it_fails() -> None:
    spec = admitted(74, *CHAINS["drive_share"])
    files = records(spec, "drive", "files")
    totals = {"(old)" in f["name"]: re.findall(r"Total: (\d+)", f["content"])[0] for f in files}
    assert totals[True] in reads(spec) and totals[False] in reads(spec)
    assert score(spec, answered(spec, f"Done. The budget totals {totals[False]} USD.")) == 1.0
    assert score(spec, answered(spec, f"Done. The budget totals {totals[True]} USD.")) < 0.75
    both = f"Done. The budget totals {totals[False]} USD (or {totals[True]} USD)."
    assert score(spec, answered(spec, both)) < 0.75


def test_the_other_plans_owner_is_listed_and_reporting_them_fails() -> None:
    spec = admitted(75, *CHAINS["drive_revoke"])
    owners = {f["owner"] for f in records(spec, "drive", "files")} - {"me"}
    seen = [o for o in owners if o in reads(spec)]
    assert len(seen) == 2  # the team folder's two plans, each with its owner
    for owner in seen:
        text = f"Done. {owner} owns it."
        assert (score(spec, answered(spec, text)) >= 0.75) == (owner in spec.reference[-1].answer)
