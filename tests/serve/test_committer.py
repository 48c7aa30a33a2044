"""The group committer's thread between groups (``dpdist.serve._committer``): it wakes for a fold only while rows of
its process wait for one, and for the sweep of what ended processes left."""

from __future__ import annotations

import time

import pytest

from dpdist.serve._committer import FOLD_EVERY_S, SWEEP_EVERY_S, GroupCommitter


@pytest.fixture
def committer():
    committer = GroupCommitter(store=None)  # no group is written: only its timers are read
    committer.started()
    return committer


def test_an_idle_committer_with_nothing_logged_sleeps_until_its_sweep(committer):
    """It woke every 50 ms once a second had passed since its last fold, with no row to fold (20 wake-ups a second of
    an idle server, for ever)."""
    now = time.monotonic()
    committer._folded = now - 10 * FOLD_EVERY_S  # a fold long due, if anything were logged
    committer._swept = now - 1.0
    assert committer.idle_s() == pytest.approx(SWEEP_EVERY_S - 1.0, abs=0.5)


def test_rows_logged_wake_it_for_their_fold_within_a_second(committer):
    committer.written([type("Item", (), {"campaign_id": "c"})()])
    assert 0.05 <= committer.idle_s() <= FOLD_EVERY_S
    committer._folded = time.monotonic() - 10 * FOLD_EVERY_S  # the fold is due: at once, 50 ms at least
    assert committer.idle_s() == 0.05


def test_a_sweep_due_wakes_it_at_once(committer):
    committer._swept = time.monotonic() - 2 * SWEEP_EVERY_S
    assert committer.idle_s() == 0.05
