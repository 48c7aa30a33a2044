"""A budget file's losses derived again when read (an edited stored loss is corruption, never a smaller spend), and a
memo's campaigns charged as one mechanism (one report costs epsilon_1, not epsilon_inf; two cost epsilon_2)."""

from __future__ import annotations

import itertools
import json
import math
import pathlib

import numpy as np
import pytest

from dpdist import accounting, amplification, local
from dpdist.budget import BudgetSession
from dpdist.errors import IncompatibleStateError, PrivacyBudgetError
from dpdist.privacy import PrivacyGuarantee

ONE = PrivacyGuarantee(1.0, 0.0, "replace", "central")


def _edit(path, change):
    document = json.loads(path.read_text())
    for charge in document["charges"]:
        change(charge)
    path.write_text(json.dumps(document))


def test_an_edit_of_only_the_stored_losses_is_detected_and_nothing_more_is_charged(tmp_path):
    """Each charge's rho and distribution replaced by "no loss" (what `budget show` does not print): the spend read
    1e-300 of a (3, 1e-6) budget and 3 more charges of 1 were accepted; now the file is refused by name."""
    path = tmp_path / "team.json"
    session = BudgetSession.create(path, epsilon=3.0, delta=1e-6)
    for i in range(3):
        session.charge(ONE, f"release {i}")
    before = path.read_text()

    def nothing(charge):
        charge["loss"]["rho"] = 1e-9
        charge["loss"]["distribution"] = {"kind": "atoms", "losses": [0.0], "masses": [1.0], "infinity": 0.0}

    _edit(path, nothing)
    edited = path.read_text()
    with pytest.raises(IncompatibleStateError, match=r"Corruption detected.*'release 0'.*'loss\.rho' is 1e-09"):
        BudgetSession.open(path).spent
    with pytest.raises(IncompatibleStateError, match="Corruption detected"):
        BudgetSession.open(path).charge(ONE, "more")
    assert path.read_text() == edited != before


@pytest.mark.parametrize("edit", [
    lambda charge: charge["loss"]["distribution"]["parts"][0]["loss"]["masses"].reverse(),  # the PLD, mirrored
    lambda charge: charge["loss"].update(rho=charge["loss"]["rho"] / 100),
    lambda charge: charge["loss"]["derivation"].update(reports=1),  # a year's campaign read as one day's
    lambda charge: charge["loss"]["derivation"]["config"].update(domain_size=1024),
], ids=["distribution", "rho", "reports", "config"])
def test_an_edited_protocol_charge_is_refused_as_corruption(edit, tmp_path):
    path = tmp_path / "year.json"
    BudgetSession.create(path, 5.0, 1e-8).campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=365)
    _edit(path, edit)
    with pytest.raises(IncompatibleStateError, match="Corruption detected"):
        BudgetSession.open(path).charges


def test_every_kind_of_charge_reads_back_as_it_was_charged(tmp_path):
    """Protocols, memos, discrete Laplace, Gaussian, a shuffle's rounds, disjoint parts and plain guarantees: the file
    states what the same charges state in memory."""
    grr = local.make("grr", epsilon=2.0, domain_size=8)
    charges = [
        lambda s: s.campaign(local.make("oue", epsilon=0.5, domain_size=8), reports=3),
        lambda s: s.campaign(local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=4), reports=2),
        lambda s: s.charge(accounting.discrete_laplace(0.3, 2, neighbouring="replace"), "laplace"),
        lambda s: s.charge(accounting.gaussian(6.0, delta=1e-8, neighbouring="replace"), "gaussian"),
        lambda s: s.charge(amplification.shuffled_loss(grr, 1000, 1e-9, rounds=2), "relayed"),
        lambda s: s.charge_parallel([ONE, accounting.discrete_laplace(0.5, neighbouring="replace")], "groups"),
        lambda s: s.charge(PrivacyGuarantee(0.2, 0.0, "add-remove", "central"), "cdf"),
    ]
    memory, kept = BudgetSession(40.0, 1e-6), BudgetSession.create(tmp_path / "b.json", 40.0, 1e-6)
    for charge in charges:
        charge(memory)
        charge(kept)
    opened = BudgetSession.open(tmp_path / "b.json")
    assert opened.spent.epsilon == pytest.approx(memory.spent.epsilon, rel=1e-9)
    assert opened.spent.epsilon < memory.spent.epsilon_at(1e-6, "basic")  # the exact losses were kept
    assert [c.loss for c in opened.charges] == [c.loss for c in memory.charges]


def test_a_loss_made_by_hand_is_charged_to_a_file_at_its_guarantees_worst_case(tmp_path):
    """A file keeps only losses it can derive again: a hand-made 'no loss' distribution counts as randomized
    response of its epsilon, when charged and when read."""
    nothing = accounting.PrivacyLoss(ONE, 1e-9, accounting.Atoms((0.0,), (1.0,)), "made by hand")
    kept = BudgetSession.create(tmp_path / "b.json", 3.0, 1e-6)
    for _ in range(3):
        kept.charge(nothing, "hand-made")
    with pytest.raises(PrivacyBudgetError):
        kept.charge(nothing, "one too many")
    worst = BudgetSession(3.0, 1e-6)
    for _ in range(3):
        worst.charge(ONE)
    assert BudgetSession.open(tmp_path / "b.json").spent.epsilon == pytest.approx(worst.spent.epsilon)


def test_a_guarantee_charged_with_its_assumptions_reads_them_back_and_a_malformed_list_is_refused(tmp_path):
    """A hand-made loss's (or a shuffled guarantee's) assumptions are kept in its derivation, so the file read again
    states them; a derivation whose assumptions are not a list of text is refused by name."""
    nothing = accounting.PrivacyLoss(ONE, 1e-9, accounting.Atoms((0.0,), (1.0,)), "made by hand", ("a public key",))
    path = tmp_path / "b.json"
    BudgetSession.create(path, 3.0, 1e-6).charge(nothing, "hand-made")
    assert json.loads(path.read_text())["charges"][0]["loss"]["derivation"]["assumptions"] == ["a public key"]
    assert BudgetSession.open(path).charges[0].loss.assumptions == ("a public key",)
    assert "a public key" in BudgetSession.open(path).describe()
    _edit(path, lambda charge: charge["loss"]["derivation"].update(assumptions=3))
    with pytest.raises(IncompatibleStateError, match="assumptions must be a list of non-empty str"):
        BudgetSession.open(path).spent
    _edit(path, lambda charge: charge["loss"]["derivation"].update(assumptions=["x"], extra=1))
    with pytest.raises(IncompatibleStateError, match="must be one of the kinds"):
        BudgetSession.open(path).spent


def test_a_charge_written_before_derivations_is_read_at_its_worst_case(tmp_path):
    """Its stored loss cannot be checked, so it is not read: a campaign of 365 GRR reports over 16 items at 0.1
    (3.90 at 1e-8 by its exact channel) counts as its guarantee, 36.5; ten campaigns of 0.1 as ten randomized
    responses."""
    path = tmp_path / "year.json"
    BudgetSession.create(path, 40.0, 1e-8).campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=365)
    assert BudgetSession.open(path).spent.epsilon == pytest.approx(3.8985, abs=2e-3)
    _edit(path, lambda charge: charge["loss"].pop("derivation"))
    assert BudgetSession.open(path).spent.epsilon == pytest.approx(36.5)
    days = tmp_path / "days.json"
    session = BudgetSession.create(days, 40.0, 1e-8)
    for _ in range(10):
        session.campaign(local.make("grr", epsilon=0.1, domain_size=16))
    exact = session.spent.epsilon
    _edit(days, lambda charge: charge["loss"].pop("derivation"))
    randomized_responses = BudgetSession(40.0, 1e-8)
    for _ in range(10):
        randomized_responses.charge(PrivacyGuarantee(0.1, 0.0, "replace", "central"))
    assert exact < BudgetSession.open(days).spent.epsilon == pytest.approx(randomized_responses.spent.epsilon)


# ---------------------------------------------------------------------- a memo's campaigns are one mechanism

def test_one_report_of_a_memoized_protocol_costs_epsilon_1_and_two_campaigns_cost_epsilon_2():
    """l-grr(eps_inf = 8, eps_1 = 1, d = 2): one campaign of one report was charged eps_inf = 8, two of them 16,
    against 2.0008 for the same two reports in one campaign (docs/how-to/plan-a-budget.md's table: guarantee_over(K))."""
    memo = local.make("l-grr", epsilon=8.0, epsilon_1=1.0, domain_size=2)
    daily = BudgetSession(100.0, 1e-8)
    assert daily.campaign(memo).charge.charged.epsilon == pytest.approx(memo.guarantee_over(1).epsilon)
    second = daily.campaign(memo).charge.charged.epsilon
    assert second == pytest.approx(memo.guarantee_over(2).epsilon - memo.guarantee_over(1).epsilon)
    together = BudgetSession(100.0, 1e-8)
    together.campaign(memo, reports=2)
    for accountant in ("basic", "pld", "tightest"):
        assert daily.spent.epsilon_at(1e-8, accountant) == pytest.approx(memo.guarantee_over(2).epsilon)
        assert together.spent.epsilon_at(1e-8, accountant) == pytest.approx(memo.guarantee_over(2).epsilon)


def _exact_pure_loss(protocol, reports: int) -> float:
    """The largest log-likelihood ratio of ``reports`` l-grr reports through one memo, over every pair of histories
    (the exact joint law: a permanent response per distinct value, an instantaneous one per report)."""
    d = protocol.domain_size
    keep = np.full((d, d), protocol._q1) + np.eye(d) * (protocol._p1 - protocol._q1)
    again = np.full((d, d), protocol._q2) + np.eye(d) * (protocol._p2 - protocol._q2)
    laws = {}
    for history in itertools.product(range(d), repeat=reports):
        values = sorted(set(history))
        law = np.zeros((d,) * reports)
        for memo in itertools.product(range(d), repeat=len(values)):
            held = dict(zip(values, memo))
            joint = np.ones(())
            for value in history:
                joint = np.multiply.outer(joint, again[held[value]])
            law += math.prod(keep[v, held[v]] for v in values) * joint
        laws[history] = law
    return max(float(np.max(np.log(p / q))) for p, q in itertools.permutations(laws.values(), 2))


def test_campaigns_through_one_memo_are_never_charged_less_than_their_exact_loss():
    """Charging each campaign guarantee_over(1) as a fresh mechanism would state 2 where two reports of
    l-grr(3, 1, d = 4) through one memo lose 2.064 exactly; gathered, the session states 2.189."""
    memo = local.make("l-grr", epsilon=3.0, epsilon_1=1.0, domain_size=4)
    session = BudgetSession(100.0, 1e-8)
    session.campaign(memo)
    session.campaign(memo.config())
    exact = _exact_pure_loss(memo, 2)
    assert exact > 2 * memo.guarantee_over(1).epsilon + 0.05  # the fresh composition would undercount
    for accountant in ("basic", "pld", "tightest"):
        assert exact <= session.spent.epsilon_at(1e-8, accountant) <= memo.guarantee_over(2).epsilon * (1 + 1e-9)


def test_memo_campaigns_gather_across_opens_of_a_file_and_a_second_dbitflippm_campaign_is_refused(tmp_path):
    path = tmp_path / "b.json"
    memo = {"protocol": "l-osue", "epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}
    BudgetSession.create(path, 50.0).campaign(memo, reports=2)
    BudgetSession.open(path).campaign(memo, reports=3)
    assert BudgetSession.open(path).spent.epsilon == pytest.approx(local.from_config(memo).guarantee_over(5).epsilon)
    flip = {"protocol": "dbitflippm", "epsilon": 2.0, "domain_size": 8, "sampled_bits": 1}
    BudgetSession.open(path).campaign(flip)
    with pytest.raises(PrivacyBudgetError, match="1 report.*through the same memo.*no second randomization"):
        BudgetSession.open(path).campaign(flip)
    assert len(BudgetSession.open(path).charges) == 3


# ---------------------------------------------------------------------- what a charge assumes is checked too

def _shuffled_file(path):
    session = BudgetSession.create(path, 8.0, 1e-6)
    session.charge(amplification.shuffled(local.make("grr", epsilon=4.0, domain_size=8), n=1000, delta=1e-8),
                   "relayed")
    session.charge(ONE, "central")
    return path


@pytest.mark.parametrize("edit", [
    lambda loss: loss["derivation"].pop("assumptions"),  # the shuffler's assumptions left the statement
    lambda loss: loss.update(assumptions=loss["assumptions"][:1]),
    lambda loss: loss["derivation"].update(assumptions=loss["derivation"]["assumptions"] + ["the relay is audited"]),
    lambda loss: loss.update(assumptions=loss["assumptions"] + ["the relay is audited"]),
], ids=["derivation dropped", "stored one dropped", "derivation added", "stored added"])
def test_an_edit_of_one_list_of_assumptions_is_refused_as_corruption_naming_the_charge(edit, tmp_path):
    path = _shuffled_file(tmp_path / "b.json")
    assert "the shuffler (relay) does not collude" in BudgetSession.open(path).describe()
    document = json.loads(path.read_text())
    edit(document["charges"][0]["loss"])
    path.write_text(json.dumps(document))
    with pytest.raises(IncompatibleStateError, match=r"Corruption detected.*'relayed'.*'loss\.assumptions"):
        BudgetSession.open(path).describe()
    with pytest.raises(IncompatibleStateError, match="Corruption detected"):
        BudgetSession.open(path).charge(ONE, "more")
    assert json.loads(path.read_text()) == document  # nothing charged, nothing healed


def test_an_assumption_added_to_a_plain_charges_derivation_alone_is_refused(tmp_path):
    path = _shuffled_file(tmp_path / "b.json")
    _edit(path, lambda charge: charge["label"] == "central"
          and charge["loss"]["derivation"].update(assumptions=["the relay does not collude"]))
    with pytest.raises(IncompatibleStateError, match=r"Corruption detected.*'central'"):
        BudgetSession.open(path).spent


@pytest.mark.parametrize("texts", [["a\x1b[2Jb"], ["two\nlines"], ["y" * 1001], [f"a{i}" for i in range(101)]],
                         ids=["escape", "newline", "too long", "too many"])
def test_assumptions_with_control_characters_or_too_large_are_refused_when_charged_and_when_read(texts, tmp_path):
    path = tmp_path / "b.json"
    session = BudgetSession.create(path, 3.0, 1e-6)
    with pytest.raises(IncompatibleStateError, match="control characters"):
        session.charge(accounting.PrivacyLoss.of_guarantee(ONE).assuming(*texts), "hand-made")
    session.charge(accounting.PrivacyLoss.of_guarantee(ONE).assuming("a public key"), "hand-made")

    def edit(charge):
        charge["loss"]["assumptions"] = charge["loss"]["derivation"]["assumptions"] = texts
    _edit(path, edit)
    with pytest.raises(IncompatibleStateError, match="control characters"):
        BudgetSession.open(path).spent


def test_a_loss_with_a_derivation_keeps_what_it_assumes_beyond_it_in_a_file(tmp_path):
    """An assumption added to a derivable loss is kept in its derivation (the file read again states it), not
    dropped on reading nor refused as corruption."""
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    path = tmp_path / "b.json"
    BudgetSession.create(path, 9.0, 1e-6).charge(accounting.protocol_loss(grr, 2).assuming("a trusted clock"), "x")
    assert "a trusted clock" in BudgetSession.open(path).describe()
    assert BudgetSession.open(path).charges[0].loss.derivation["kind"] == "protocol"


def test_a_file_written_by_the_previous_main_loads_and_states_the_same(tmp_path):
    """tests/budget/data/written_by_1e7383e8.json: charges of every kind (a shuffled guarantee, which 1e7383e8 charged
    without its assumptions; shuffled_loss, a memo, a protocol, noises, disjoint parts, a central release) written
    by dpdist at 1e7383e8, before derivations held assumptions; its describe() then is the .describe.txt beside it."""
    data = pathlib.Path(__file__).parent / "data"
    path = tmp_path / "old.json"
    path.write_text((data / "written_by_1e7383e8.json").read_text())
    expected = (data / "written_by_1e7383e8.describe.txt").read_text().rstrip("\n").format(path=str(path))
    opened = BudgetSession.open(path)
    assert opened.describe() == expected
    assert len(opened.charges) == 9
    opened.charge(ONE, "one more")  # and charging it rewrites it, readable again
    assert len(BudgetSession.open(path).charges) == 10
