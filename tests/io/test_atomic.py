"""The one atomic write and its lock, through links: a file reached by two names stays one file (one account).

A rename replaces the name it is given: through a symbolic link it would put a regular file in the link's place,
and a hard-linked file would keep its old content under its other names, so a budget file or a device ledger
reached by two names forked into two accounts on its first charge.  Symbolic links are followed (the write and the
lock are the real file's); a file with several hard links is refused by name.
"""

from __future__ import annotations

import os

import pytest

from dpdist import local
from dpdist._io._atomic import atomic_writer, exclusive_lock, real_path, write_text_atomically
from dpdist.budget import BudgetSession
from dpdist.errors import DPDistError, InvalidParameterError, PrivacyBudgetError
from dpdist.io import open_ledger
from dpdist.privacy import PrivacyGuarantee

POINT_EIGHT = PrivacyGuarantee(0.8, 0.0, "replace", "central")


def test_a_write_through_a_symbolic_link_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    target = tmp_path / "real" / "team.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "mine.json"
    link.symlink_to(target)
    write_text_atomically(link, "new")
    assert link.is_symlink() and target.read_text() == "new" and link.read_text() == "new"
    with atomic_writer(link) as handle:
        handle.write(b"newer")
    assert link.is_symlink() and target.read_bytes() == b"newer"
    assert real_path(link) == target.resolve()


def test_a_dangling_symbolic_link_names_the_file_to_create(tmp_path):
    link = tmp_path / "ledger.json"
    link.symlink_to(tmp_path / "kept.json")
    write_text_atomically(link, "made")
    assert link.is_symlink() and (tmp_path / "kept.json").read_text() == "made"


def test_a_hard_linked_file_is_refused_by_name_and_left_as_it_was(tmp_path):
    first = tmp_path / "team.json"
    first.write_text("old")
    os.link(first, tmp_path / "copy.json")
    with pytest.raises(InvalidParameterError, match=r"team\.json.*2 hard links"):
        write_text_atomically(first, "new")
    with pytest.raises(InvalidParameterError, match="hard links"):
        with exclusive_lock(tmp_path / "copy.json", "test"):
            pass
    assert first.read_text() == "old" and (tmp_path / "copy.json").read_text() == "old"


def test_two_names_of_one_file_take_one_lock(tmp_path):
    target = tmp_path / "state.bin"
    target.write_bytes(b"")
    link = tmp_path / "alias.bin"
    link.symlink_to(target)
    with exclusive_lock(link, "first"):
        with pytest.raises(DPDistError, match="locked by another process"):
            with exclusive_lock(target, "second"):
                pass
    assert not (tmp_path / "alias.bin.lock").exists()


def test_a_budget_file_charged_through_a_symbolic_link_and_its_name_is_one_account(tmp_path):
    """0.8 charged through a link, then 0.8 through the file's name, of a total of 1."""
    team = tmp_path / "team.json"
    BudgetSession.create(team, epsilon=1.0)
    mine = tmp_path / "mine.json"
    mine.symlink_to(team)
    BudgetSession.open(mine).charge(POINT_EIGHT, "through the link")
    with pytest.raises(PrivacyBudgetError, match="0.2 left"):
        BudgetSession.open(team).charge(POINT_EIGHT, "through the name")
    assert mine.is_symlink()
    assert [charge.label for charge in BudgetSession.open(team).charges] == ["through the link"]


def test_a_hard_linked_budget_file_is_refused_before_anything_is_charged(tmp_path):
    team = tmp_path / "team.json"
    BudgetSession.create(team, epsilon=1.0)
    os.link(team, tmp_path / "mine.json")
    with pytest.raises(InvalidParameterError, match="hard links"):
        BudgetSession.open(tmp_path / "mine.json").charge(POINT_EIGHT)
    os.unlink(tmp_path / "mine.json")
    assert BudgetSession.open(team).charges == ()


def test_a_device_ledger_opened_through_a_symbolic_link_and_its_name_is_one_budget(tmp_path):
    grr = local.make("grr", epsilon=1.0, domain_size=8)
    device = tmp_path / "device.json"
    with open_ledger(device, budget=10):
        pass
    link = tmp_path / "link.json"
    link.symlink_to(device)
    with open_ledger(link) as ledger:
        ledger.report(grr, [1] * 8, collector="https://c.example")
    with open_ledger(device) as ledger:
        assert ledger.spent() == 8.0
        with pytest.raises(PrivacyBudgetError, match="2 left"):
            ledger.report(grr, [1] * 8, collector="https://c.example")
    assert link.is_symlink()


def test_a_hard_linked_device_ledger_is_refused(tmp_path):
    device = tmp_path / "device.json"
    with open_ledger(device, budget=10):
        pass
    os.link(device, tmp_path / "other.json")
    with pytest.raises(InvalidParameterError, match="hard links"):
        with open_ledger(tmp_path / "other.json"):
            pass
