"""The privacy budget session (dpdist.budget): charges, refusals on public inputs only, files, concurrency."""

from __future__ import annotations

import functools
import json
import multiprocessing
import threading

import numpy as np
import pytest

from dpdist import accounting, central, local, privacy
from dpdist.privacy import PrivacyGuarantee, local_guarantee
from dpdist._guarantee import with_assumptions
from dpdist.budget import BudgetSession, SessionGuarantee, planned_guarantee
from dpdist.cli import main
from dpdist.errors import IncompatibleStateError, InvalidParameterError, PrivacyBudgetError

X = np.random.default_rng(0).uniform(0, 1, 500)
BOUNDS = (0.0, 1.0)


def test_charges_add_up_and_the_overspending_release_is_refused_with_what_is_left():
    session = BudgetSession(1.0)
    session.release(central.histogram_queries, X, epsilon=0.5, bounds=BOUNDS)
    session.release(central.adaptive_quantiles, X, epsilon=0.25, bounds=BOUNDS)
    assert session.remaining.epsilon == pytest.approx(0.25)
    with pytest.raises(PrivacyBudgetError, match=r"0\.25 left") as refusal:
        session.release(central.histogram_queries, X, epsilon=0.3, bounds=BOUNDS)
    assert refusal.value.remaining == pytest.approx(0.25)
    assert refusal.value.remaining_delta == 0.0
    assert len(session.charges) == 2  # the refused one charged nothing
    session.release(central.histogram_queries, X, epsilon=0.25, bounds=BOUNDS)  # exactly what is left
    assert session.remaining.epsilon == pytest.approx(0.0, abs=1e-12)


def test_shares_of_privacy_split_spend_the_whole_total():
    session = BudgetSession(1.0)
    for share in privacy.split(privacy.PrivacyGuarantee(1.0, 0.0, "replace", "central"), 7):
        session.charge(share, "share")
    assert session.spent.epsilon == pytest.approx(1.0)
    with pytest.raises(PrivacyBudgetError):
        session.charge(privacy.PrivacyGuarantee(1e-9, 0.0, "replace", "central"))


def test_a_seeded_release_is_refused_by_name_unless_the_session_is_reproducible_and_then_says_so():
    session = BudgetSession(1.0)
    oue = local.make("oue", epsilon=0.5, domain_size=8)
    for seed in (0, np.random.default_rng(0)):  # a seed, or a generator: noise anyone holding it draws again
        for call in (lambda: session.release(central.cdf, X, 0.5, BOUNDS, rng=seed),
                     lambda: session.privatize(oue, np.arange(8), rng=seed),
                     lambda: session.estimate(oue, np.arange(800) % 8, rng=seed)):
            with pytest.raises(InvalidParameterError, match=r"The 'rng' argument of .* is .* not reproducible: .*"
                                                            r"reproducible=True"):
                call()
    assert session.charges == () and "reproducible" not in session.describe()
    seeded = BudgetSession(2.0, reproducible=True)
    cdf = seeded.release(central.cdf, X, 0.5, BOUNDS, rng=0)
    said = "reproducible, seeded: no privacy against anyone who knows the seed"
    assert said in cdf.guarantee.describe() and said in seeded.describe()
    assert cdf.guarantee.budget is not None and cdf.guarantee.budget.to_dict()["reproducible"] is True
    assert cdf.mean() == seeded.release(central.cdf, X, 0.5, BOUNDS, rng=0).mean()  # the same noise again
    with pytest.raises(InvalidParameterError, match="reproducible"):
        BudgetSession(1.0, reproducible="yes")


def test_a_refused_release_never_runs_on_the_data():
    calls = []

    @functools.wraps(central.histogram_queries)
    def spy(x, *args, **kwargs):
        calls.append(len(x))
        return central.histogram_queries(x, *args, **kwargs)

    class Unreadable:
        """The schema of a column whose values must not be read."""

        dtype, ndim = np.dtype(np.float64), 1

        def __getitem__(self, key):
            assert key == slice(None, 0), "a value was read"
            return np.empty(0)

        def __array__(self, *args, **kwargs):
            raise AssertionError("the data were read")

    session = BudgetSession(0.5)
    with pytest.raises(PrivacyBudgetError):
        session.release(spy, Unreadable(), epsilon=1.0, bounds=BOUNDS)
    assert calls == [0]  # only the dry run on no records
    session.release(spy, X, epsilon=0.5, bounds=BOUNDS)
    assert calls == [0, 0, X.size]


def test_bad_public_arguments_are_refused_before_anything_is_charged():
    session = BudgetSession(1.0)
    with pytest.raises(InvalidParameterError, match="bounds"):
        session.release(central.histogram_queries, X, epsilon=0.5, bounds=(1, 0))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        session.release(central.cdf, X, epsilon=-1, bounds=BOUNDS)
    assert session.charges == ()


RELEASES = [
    (central.histogram_queries, (X, 0.5, BOUNDS), {}),
    (central.histogram_queries, (X, 0.5, BOUNDS), {"neighbouring": "add-remove"}),
    (central.adaptive_quantiles, (X, 0.5, BOUNDS), {}),
    (central.polynomial_projection, (X, 0.5, 1e-6, BOUNDS), {}),
    (central.matching_pursuit, (X, 0.5, BOUNDS), {}),
    (central.cdf, (X, 0.5, BOUNDS), {}),
    (central.tree_cdf, (X, 0.5, BOUNDS), {"neighbouring": "replace"}),
    (central.quantiles, (X, [0.5]), {"epsilon": 0.5, "bounds": BOUNDS}),
    (central.quantiles, (X, [0.25, 0.75]), {"epsilon": 0.5, "bounds": BOUNDS, "method": "aq"}),
    (central.quantiles, (X, [0.5]), {"epsilon": 0.5, "bounds": BOUNDS, "method": "jointexp"}),
    (central.TreeHistogram.release, (X, 0.5, BOUNDS), {}),
]


@pytest.mark.parametrize("release, args, kwargs", RELEASES, ids=lambda v: getattr(v, "__qualname__", ""))
def test_what_is_charged_is_what_every_central_release_spends(release, args, kwargs):
    planned = planned_guarantee(release, args, kwargs)
    realized = release(*args, rng=1, **kwargs).guarantee
    assert planned == realized


def test_replace_sessions_charge_add_remove_releases_by_group_privacy_and_add_remove_sessions_refuse_replace():
    replace = BudgetSession(3.0, 1e-5)
    statement = replace.charge(privacy.PrivacyGuarantee(0.5, 1e-7, "add-remove", "central"))
    assert statement.charge.charged == privacy.PrivacyGuarantee(1.0, (1 + np.exp(0.5)) * 1e-7, "replace", "central")
    removal = BudgetSession(3.0, neighbouring="add-remove")
    removal.release(central.cdf, X, epsilon=0.5, bounds=BOUNDS)
    assert removal.spent.epsilon == 0.5
    with pytest.raises(InvalidParameterError, match="cannot charge"):
        removal.release(central.histogram_queries, X, epsilon=0.5, bounds=BOUNDS)
    with pytest.raises(InvalidParameterError, match="cannot charge"):
        removal.campaign(local.make("grr", epsilon=1.0, domain_size=4))


def test_campaigns_are_charged_their_local_guarantee_per_report():
    session = BudgetSession(10.0)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    assert session.campaign(grr).charge.charged.epsilon == 1.0
    assert session.campaign(grr.config(), reports=3).charge.charged.epsilon == pytest.approx(3.0)
    memo = local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=4)
    assert session.campaign(memo, reports=3).charge.charged.epsilon == pytest.approx(memo.guarantee_over(3).epsilon)
    with pytest.raises(InvalidParameterError, match="reports"):
        session.campaign(grr, reports=0)


def test_results_carry_the_session_in_their_guarantee():
    session = BudgetSession(2.0)
    cdf = session.release(central.cdf, X, 0.5, BOUNDS)
    assert isinstance(cdf.guarantee, SessionGuarantee)
    assert cdf.guarantee.epsilon == 0.5 and cdf.guarantee.neighbouring == "add-remove"
    assert "budget session: charged 1 of 2-DP (replace)" in cdf.guarantee.describe()
    assert cdf.guarantee.to_dict()["budget"]["remaining"] == {"epsilon": 1.0, "delta": 0.0}
    estimate = session.estimate(local.make("oue", epsilon=0.5, domain_size=8), np.arange(800) % 8)
    assert estimate.guarantee.budget.spent.epsilon == pytest.approx(1.5)
    json.dumps(cdf.to_dict())


def test_a_charged_results_guarantee_costs_what_the_release_states_in_another_session(tmp_path):
    """A result of one session's release charged (or checked) in a second session costs the release's own guarantee
    in the second session's relation; the first session's account is not part of what is charged, nor of the file."""
    first = BudgetSession(2.0)
    cdf = first.release(central.cdf, X, 0.5, BOUNDS)
    own = PrivacyGuarantee(0.5, 0.0, "add-remove", "central")
    for second in (BudgetSession(5.0, neighbouring="add-remove"), BudgetSession.create(tmp_path / "b.json", 5.0)):
        cost = 0.5 if second.total.neighbouring == "add-remove" else 1.0
        assert second.check(cdf.guarantee, "again") == second.cost(own)
        statement = second.charge(cdf.guarantee, "again")
        assert type(statement.charge.guarantee) is PrivacyGuarantee and statement.charge.guarantee == own
        assert statement.charge.charged.epsilon == cost and second.remaining.epsilon == pytest.approx(5.0 - cost)
        assert "budget" not in json.dumps(statement.charge.to_dict()["guarantee"])
        second.charge(accounting.PrivacyLoss.of_guarantee(cdf.guarantee), "its loss")
        assert second.remaining.epsilon == pytest.approx(5.0 - 2 * cost)
    assert BudgetSession.open(tmp_path / "b.json").remaining.epsilon == pytest.approx(3.0)  # the file reads again
    assert first.remaining.epsilon == 1.0  # the first session's account is its own
    with pytest.raises(PrivacyBudgetError, match="again is refused"):
        BudgetSession(0.5).charge(cdf.guarantee, "again")


def test_refusals_name_a_spent_statement_within_their_sentence_without_its_assumptions():
    """privacy.convert's and a charge's refusals name a guarantee mid-sentence: as describe(assumptions=False) writes
    it (a Spent's line ends with "; assuming: ..." otherwise, which would end the sentence)."""
    year = BudgetSession(4.0, delta=1e-8)
    year.campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=365)
    spent = year.spent
    line = PrivacyGuarantee.describe(spent)
    assert spent.describe(assumptions=False) == line
    assert spent.describe() == f"{line}; assuming: {accounting.FRESH_RANDOMNESS}"
    with pytest.raises(InvalidParameterError) as refused:
        privacy.convert(spent, "add-remove")
    assert str(refused.value).startswith(f"privacy.convert: {line} states nothing under 'add-remove' neighbours: ")
    with pytest.raises(PrivacyBudgetError) as refused:
        BudgetSession(1.0, delta=1e-8).charge(spent, "last year")
    assert str(refused.value).startswith(f"last year is refused: it states {line} (any ")
    assert "assuming" not in str(refused.value)
    with pytest.raises(InvalidParameterError) as refused:
        BudgetSession(5.0, neighbouring="add-remove").check(spent, "last year")
    assert f"cannot charge it: privacy.convert: {line} states nothing" in str(refused.value)
    assert "assuming" not in str(refused.value)
    charged = BudgetSession(2.0).release(central.cdf, X, 0.5, BOUNDS).guarantee
    assert "assuming" in charged.describe() and "assuming" not in charged.describe(assumptions=False)
    assert charged.describe(assumptions=False) == charged.describe().split("; its account assuming: ")[0]
    assert year.charges[0].loss.describe(assumptions=False) in year.charges[0].loss.describe()


def test_a_sessions_lines_end_with_what_its_account_assumes():
    """The session's line, a charged result's guarantee and the charge's statement end with the assumptions of the
    spent statement (those of ``to_dict()["accountant"]``): a shuffled charge's relay among them."""
    from dpdist.amplification import SHUFFLE_ASSUMPTIONS, shuffled_loss

    session = BudgetSession(4.0, delta=1e-6)
    cdf = session.release(central.cdf, X, 0.5, BOUNDS)
    assumed = cdf.guarantee.to_dict()["budget"]["accountant"]["assumptions"]
    assert assumed == [accounting.FRESH_RANDOMNESS] and cdf.guarantee.budget.assumptions == tuple(assumed)
    assert cdf.guarantee.describe().endswith(f" left; its account assuming: {accounting.FRESH_RANDOMNESS}")
    assert cdf.guarantee.budget.describe().endswith(f" left; assuming: {accounting.FRESH_RANDOMNESS}")
    assert session.describe().endswith(f" left; assuming: {accounting.FRESH_RANDOMNESS}")
    relayed = session.charge(shuffled_loss(local.make("grr", epsilon=2.0, domain_size=4), 1000, 1e-8), "relayed")
    line = relayed.describe()
    assert line.startswith("budget session: charged ") and "; assuming: (1) " in line
    assert all(f") {text}" in line for text in SHUFFLE_ASSUMPTIONS) and accounting.FRESH_RANDOMNESS in line
    assert line.split(" left", 1)[1] == session.describe().split(" left", 1)[1]  # the same account, the same words
    assert "assuming" not in BudgetSession(1.0).describe()  # nothing spent: nothing assumed


def test_a_shuffled_guarantee_states_the_shufflers_assumptions_and_a_session_charging_it_keeps_them(tmp_path):
    """privacy.shuffled's guarantee is a PrivacyGuarantee (same to_dict, read back equal) whose describe
    ends with the shuffler's assumptions; a session charging it, in memory or in a file read again, states them as it
    does for shuffled_loss; they name the batch size n (a file's charge line said "n distinct devices" of
    an n written nowhere), and a guarantee read back from its document has the generic ones."""
    from dpdist.amplification import SHUFFLE_ASSUMPTIONS, ShuffledGuarantee
    from dpdist.amplification._accounting import assumptions_of

    assumed = assumptions_of(1000)  # scoped to its shuffle: two shuffles' assumptions in one line do not contradict
    assert assumed[0] == SHUFFLE_ASSUMPTIONS[0] and assumed[1].startswith("the shuffle of n = 1000: each round's batch")
    assert assumed[1].removeprefix("the shuffle of n = 1000: ").replace("1000 distinct", "n distinct") == SHUFFLE_ASSUMPTIONS[1]

    grr = local.make("grr", epsilon=4.0, domain_size=8)
    guarantee = privacy.shuffled(grr, n=1000, delta=1e-8)
    assert isinstance(guarantee, ShuffledGuarantee) and isinstance(guarantee, PrivacyGuarantee)
    plain = PrivacyGuarantee(guarantee.epsilon, 1e-8, "replace", "central")
    assert guarantee.to_dict() == plain.to_dict() and PrivacyGuarantee.from_dict(guarantee.to_dict()) == guarantee
    assert guarantee == plain and plain == guarantee and hash(guarantee) == hash(plain)
    assert guarantee.assumptions == assumed and ShuffledGuarantee.from_dict(guarantee.to_dict()).assumptions == SHUFFLE_ASSUMPTIONS
    assert privacy.shuffled(grr, n=1000, delta=1e-8, rounds=3).assumptions[1].startswith("the shuffle of n = 1000 (3 rounds): ")
    assert guarantee.describe() == with_assumptions(plain.describe(), assumed)
    assert guarantee.describe(assumptions=False) == plain.describe()
    assert accounting.PrivacyLoss.of_guarantee(guarantee).assumptions == assumed
    for session in (BudgetSession(4.0, delta=1e-6), BudgetSession.create(tmp_path / "s.json", 4.0, delta=1e-6)):
        line = session.charge(guarantee, "relayed round").describe()
        assert all(f") {text}" in line for text in assumed) and accounting.FRESH_RANDOMNESS in line
        assert session.spent.assumptions[:2] == assumed
    reread = BudgetSession.open(tmp_path / "s.json")
    assert reread.spent.assumptions[:2] == assumed
    assert reread.charges[0].loss.assumptions == assumed
    assert reread.describe() == session.describe()


def test_a_spents_repr_names_what_its_statement_assumes():
    """A Spent's repr names what its statement assumes, as its describe() does; a plain charge's repr assumes nothing."""
    session = BudgetSession(4.0, delta=1e-6)
    session.charge(privacy.shuffled(local.make("grr", epsilon=4.0, domain_size=8), n=1000, delta=1e-8), "relayed round")
    assert repr(session.spent).endswith(f"assumptions={session.spent.assumptions!r})")
    assert "assumptions" not in repr(BudgetSession(1.0).charge(PrivacyGuarantee(0.5, 0.0, "replace", "central"), "x").charge)


def test_estimate_options_are_checked_before_the_charge():
    session = BudgetSession(1.0)
    with pytest.raises(InvalidParameterError, match="postprocess"):
        session.estimate(local.make("oue", epsilon=0.5, domain_size=8), [1, 2], postprocess="nope")
    assert session.charges == ()


def test_threads_never_spend_the_same_budget_twice():
    session = BudgetSession(1.0)
    outcomes = []

    def charge():
        try:
            session.charge(privacy.PrivacyGuarantee(0.1, 0.0, "replace", "central"))
            outcomes.append(True)
        except PrivacyBudgetError:
            outcomes.append(False)

    threads = [threading.Thread(target=charge) for _ in range(25)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(True) == 10 and len(session.charges) == 10


def _charge_file(path: str, attempts: int) -> int:
    session = BudgetSession.open(path)
    granted = 0
    for _ in range(attempts):
        try:
            session.charge(privacy.PrivacyGuarantee(0.1, 0.0, "replace", "central"), "worker")
            granted += 1
        except PrivacyBudgetError:
            pass
    return granted


# six processes (a fork each: 0.4 CPU-s) in the whole suite; the fast loop charges the file from six threads below, each
# with its own session and its own handle on the lock file (flock excludes open files, not processes): the same lock,
# the same re-read under it
@pytest.mark.slow
def test_processes_charging_one_file_never_double_spend(tmp_path):
    path = tmp_path / "budget.json"
    BudgetSession.create(path, 1.0)
    with multiprocessing.get_context("fork").Pool(6) as pool:
        granted = pool.starmap(_charge_file, [(str(path), 4)] * 6)
    assert sum(granted) == 10  # 24 attempts of 0.1 against a total of 1
    reopened = BudgetSession.open(path)
    assert len(reopened.charges) == 10 and reopened.spent.epsilon == pytest.approx(1.0)


def test_sessions_charging_one_file_never_double_spend(tmp_path):
    """Six sessions opened on one file, charging it at once (one thread each): the file's lock, not a session's own,
    keeps them from spending the same budget twice."""
    path = tmp_path / "budget.json"
    BudgetSession.create(path, 1.0)
    granted = [0] * 6

    def charge(index):
        granted[index] = _charge_file(str(path), 4)

    threads = [threading.Thread(target=charge, args=(index,)) for index in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(granted) == 10  # 24 attempts of 0.1 against a total of 1
    reopened = BudgetSession.open(path)
    assert len(reopened.charges) == 10 and reopened.spent.epsilon == pytest.approx(1.0)


def test_budget_files_are_never_reset_and_damage_is_refused(tmp_path):
    path = tmp_path / "budget.json"
    BudgetSession.create(path, 1.0).charge(privacy.PrivacyGuarantee(0.5, 0.0, "replace", "central"), "first")
    with pytest.raises(InvalidParameterError, match="exists already"):
        BudgetSession.create(path, 5.0)
    assert BudgetSession.open(path).remaining.epsilon == pytest.approx(0.5)
    path.write_text(path.read_text()[:-20])
    with pytest.raises(IncompatibleStateError):
        BudgetSession.open(path)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        BudgetSession.open(tmp_path / "missing.json")


def test_cli_budget_file_charges_releases_and_refuses_before_reading_the_data(tmp_path, capsys):
    budget = tmp_path / "b.json"
    data = tmp_path / "d.csv"
    data.write_text("age\n" + "\n".join(str(v) for v in X * 90) + "\n")
    assert main(["budget", "create", str(budget), "--epsilon", "1", "--neighbouring", "add-remove"]) == 0
    args = ["release", str(data), "--column", "age", "--epsilon", "0.6", "--bounds", "0,90"]
    assert main(args + ["--seed", "1", "--budget-file", str(budget)]) == 2  # seeded noise: no budget is charged for it
    assert "option cannot be used with '--budget-file' (seeded noise is drawn again" in capsys.readouterr().err
    assert main(args + ["--budget-file", str(budget)]) == 0
    printed = capsys.readouterr().out
    assert ("budget session: charged 0.6 of 1-DP (add-remove); 0.6 spent in 1 charge(s), 0.4 left; "
            f"its account assuming: {accounting.FRESH_RANDOMNESS}\n") in printed  # the account ends the line
    missing = ["release", str(tmp_path / "absent.csv")] + args[2:] + ["--budget-file", str(budget)]
    assert main(missing) == 2  # refused on the budget before the (absent) data are looked for
    assert "0.4 left. Nothing was charged and no data were read." in capsys.readouterr().err
    assert main(args[:2] + ["--column", "nope", "--epsilon", "0.1"] + args[6:] + ["--budget-file", str(budget)]) == 2
    capsys.readouterr()
    assert main(["budget", "show", str(budget), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["charges"]) == 1 and shown["remaining"]["epsilon"] == pytest.approx(0.4)


def test_cli_privatize_charges_one_report_per_user(tmp_path, capsys):
    budget = tmp_path / "b.json"
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(i % 4) for i in range(100)) + "\n")
    main(["budget", "create", str(budget), "--epsilon", "1.5"])
    config = '{"protocol": "grr", "epsilon": 1, "domain_size": 4}'
    run = ["privatize", str(data), "--config", config, "--column", "x", "--out", str(tmp_path / "r.bin"),
           "--budget-file", str(budget)]
    assert main(run) == 0
    assert "charged 1 of 1.5-DP (replace)" in capsys.readouterr().out
    assert main(run) == 2
    assert "0.5 left" in capsys.readouterr().err
    assert main(run[:-2] + ["--memo", str(tmp_path / "m.json"), "--budget-file", str(budget)]) == 2
    assert "--memo" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_campaign_open_charges_the_campaign_and_refuses_past_the_budget(tmp_path, capsys, monkeypatch):
    from serve_support import ADMIN_TOKEN, ServerProcess

    server = ServerProcess(str(tmp_path / "c.sqlite")).start()
    try:
        monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
        budget = str(tmp_path / "b.json")
        main(["budget", "create", budget, "--epsilon", "2.5"])
        common = ["--server", server.url, "--budget-file", budget]
        config = '{"protocol": "grr", "epsilon": 1, "domain_size": 4}'
        assert main(["campaign", "create", "--name", "a", "--config", config, "--open"] + common) == 0
        assert "charged 1 of 2.5-DP (replace)" in capsys.readouterr().out
        assert main(["campaign", "create", "--name", "b", "--config", config, "--server", server.url]) == 0
        assert main(["campaign", "open", "b", "--reports-per-device", "2"] + common) == 2  # 2 more: refused
        assert "1.5 left" in capsys.readouterr().err
        assert main(["campaign", "show", "b", "--server", server.url]) == 0
        assert json.loads(capsys.readouterr().out)["state"] == "created"  # refused before it opened
        assert main(["campaign", "open", "a"] + common) == 2  # already open: not charged twice
        assert len(BudgetSession.open(budget).charges) == 1
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------- accountants
def test_a_year_of_daily_grr_campaigns_costs_the_pld_total_not_the_sum():
    """The session's default accountant ('tightest') charges 365 daily GRR campaigns (eps 0.1, d = 16) their
    composed privacy loss at the session's delta: within 1.05x of the exact 3.90, never below; the sum is 36.5."""
    session = BudgetSession(epsilon=4.0, delta=1e-8)
    grr = local.make("grr", epsilon=0.1, domain_size=16)
    statement = session.campaign(grr, reports=365)
    assert session.accountant == "tightest" and statement.accountant == "pld"
    assert 3.897 <= session.spent.epsilon <= 1.05 * 3.8975
    assert session.spent.epsilon_at(1e-8, "basic") == pytest.approx(36.5)
    assert session.spent.epsilon_at(1e-6) < session.spent.epsilon_at(1e-8) < session.spent.epsilon_at(1e-10)
    with pytest.raises(PrivacyBudgetError, match=r"'tightest'|tightest accountant") as refused:
        session.campaign(grr, reports=20, label="twenty more days")
    assert "twenty more days" in str(refused.value) and "left" in str(refused.value)
    assert refused.value.remaining == pytest.approx(4.0 - session.spent.epsilon)


def test_spent_is_stated_at_another_delta_by_the_sessions_own_accountant_unless_another_is_named():
    """A zcdp session answers epsilon_at with zCDP's conversion (not the tighter PLD figure it did not charge)."""
    grr = local.make("grr", epsilon=0.1, domain_size=16)
    spent = {}
    for accountant in ("zcdp", "pld"):
        session = BudgetSession(epsilon=100.0, delta=1e-6, accountant=accountant)
        session.campaign(grr, reports=365)
        spent[accountant] = session.spent
    assert spent["zcdp"].epsilon_at(1e-6) == pytest.approx(spent["zcdp"].epsilon)
    assert spent["zcdp"].statement_at(1e-8).accountant == "zcdp"
    assert spent["zcdp"].epsilon_at(1e-6, "pld") == pytest.approx(spent["pld"].epsilon)
    assert spent["pld"].epsilon < spent["zcdp"].epsilon


@pytest.mark.parametrize("arguments, named", [(("0.1",), "delta"), ((None,), "delta"), ((2.0,), "delta"),
                                              ((1e-6, "bogus"), "accountant")])
def test_spent_at_another_delta_refuses_a_bad_argument_by_name(arguments, named):
    session = BudgetSession(epsilon=10.0, delta=1e-6)
    session.campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=20)
    with pytest.raises(InvalidParameterError, match=f"'{named}' parameter of Spent.epsilon_at"):
        session.spent.epsilon_at(*arguments)


@pytest.mark.slow
def test_365_separate_daily_campaigns_are_charged_as_one_composition():
    """365 charges one by one (as a year of campaigns opens them) state what one composition of 365 states."""
    session = BudgetSession(epsilon=13.0, delta=1e-8, accountant="pld")
    grr = local.make("grr", epsilon=0.1, domain_size=2)
    for _ in range(365):
        session.campaign(grr)
    assert 11.952 <= session.spent.epsilon <= 1.05 * 11.952
    assert session.spent.epsilon <= 0.35 * 36.5


def test_each_accountant_refuses_by_name_what_it_cannot_state():
    approximate = PrivacyGuarantee(0.5, 1e-9, "replace", "central")
    with pytest.raises(PrivacyBudgetError, match="'zcdp' accountant cannot state it .* no zCDP"):
        BudgetSession(2.0, 1e-6, accountant="zcdp").charge(approximate, "a Gaussian release stated in (eps, delta)")
    bare = accounting.PrivacyLoss(PrivacyGuarantee(0.5, 0.0, "replace", "central"), 0.1, None, "a zCDP-only release")
    with pytest.raises(PrivacyBudgetError, match="'pld' accountant cannot state it .* no privacy loss distribution"):
        BudgetSession(2.0, 1e-6, accountant="pld").charge(bare, "zcdp-only")
    gauss = accounting.gaussian(3.0, 1.0, delta=1e-7, neighbouring="replace")
    with pytest.raises(PrivacyBudgetError, match="no accountant can state it at delta 0"):
        BudgetSession(2.0).charge(gauss, "a Gaussian in a pure session")
    with pytest.raises(InvalidParameterError, match="zcdp.*needs a delta > 0"):
        BudgetSession(2.0, accountant="zcdp")
    with pytest.raises(InvalidParameterError, match="'accountant' parameter of BudgetSession"):
        BudgetSession(2.0, 1e-6, accountant="rdp")


def test_a_zcdp_session_states_its_gaussian_charges_by_rho():
    session = BudgetSession(3.0, 1e-6, accountant="zcdp")
    gauss = accounting.gaussian(4.0, 1.0, delta=1e-6, neighbouring="replace")
    for _ in range(4):
        session.charge(gauss, "gaussian")
    assert session.spent.statement.rho == pytest.approx(4 * gauss.rho)
    assert session.spent.epsilon == pytest.approx(accounting.zcdp_epsilon(4 * gauss.rho, 1e-6))
    assert session.spent.epsilon < 4 * gauss.guarantee.epsilon


def test_a_session_saved_and_opened_keeps_its_accountant_and_its_charges_losses(tmp_path):
    path = tmp_path / "year.json"
    kept = BudgetSession.create(path, 5.0, 1e-8, accountant="pld")
    kept.campaign(local.make("grr", epsilon=0.1, domain_size=16), reports=100)
    opened = BudgetSession.open(path)
    assert opened.accountant == "pld" and json.loads(path.read_text())["version"] == 2
    assert opened.spent.epsilon == pytest.approx(kept.spent.epsilon)
    assert opened.charges[0].loss == kept.charges[0].loss
    basic = BudgetSession.create(tmp_path / "basic.json", 5.0, accountant="basic")
    assert basic.accountant == "basic" and json.loads((tmp_path / "basic.json").read_text())["version"] == 1


def test_a_budget_file_written_before_the_accountants_is_read_as_a_sum(tmp_path):
    path = tmp_path / "old.json"
    charge = {"label": "old", "guarantee": {"epsilon": 1.0, "delta": 0.0, "neighbouring": "replace", "model": "local"},
              "charged": {"epsilon": 1.0, "delta": 0.0, "neighbouring": "replace", "model": "central"},
              "parts": 1, "time": "", "id": "x"}
    path.write_text(json.dumps({"format": "dpdist-budget", "version": 1, "charges": [charge] * 3,
                                "total": {"epsilon": 4.0, "delta": 1e-6, "neighbouring": "replace", "model": "central"}}))
    session = BudgetSession.open(path)
    assert session.accountant == "basic" and session.spent.epsilon == 3.0
    with pytest.raises(PrivacyBudgetError, match="basic accountant"):
        session.charge(local_guarantee(1.5), "more")


def test_cli_budget_create_keeps_the_accountant_and_show_states_it(tmp_path, capsys):
    path = tmp_path / "team.json"
    assert main(["budget", "create", str(path), "--epsilon", "4", "--delta", "1e-8", "--accountant", "pld"]) == 0
    BudgetSession.open(path).campaign({"protocol": "grr", "epsilon": 0.1, "domain_size": 16}, reports=50)
    capsys.readouterr()
    assert main(["budget", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["accountant"] == "pld" and shown["statement"]["accountant"] == "pld"
    assert shown["spent"]["epsilon"] < 0.35 * 50 * 0.1  # 1.42 against the sum 5


def test_a_session_per_person_charges_releases_per_person_and_refuses_releases_per_record(tmp_path):
    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(300), rng.integers(1, 9, 300))
    x = rng.random(ids.size)
    session = BudgetSession.create(tmp_path / "b.json", 2.0, neighbouring="add-remove", unit="person")
    with pytest.warns(Warning):
        released = session.release(central.quantiles, x, [0.5], epsilon=1.5, bounds=(0, 1), privacy_id=ids,
                                   max_contributions=3)
    assert released.guarantee.unit == "person" and session.remaining.epsilon == pytest.approx(0.5)
    with pytest.raises(InvalidParameterError, match="protects nothing of a person"):
        session.release(central.cdf, x, epsilon=0.1, bounds=(0, 1))
    reopened = BudgetSession.open(tmp_path / "b.json")
    assert reopened.total.unit == "person" and reopened.remaining.epsilon == pytest.approx(0.5)
    assert planned_guarantee(central.unbounded_quantile, (x, 0.4), {"privacy_id": ids, "max_contributions": 2}).unit \
        == "person"
    # a session per record charges a release per person at twice its epsilon (convert)
    records = BudgetSession(10.0, neighbouring="add-remove")
    with pytest.warns(Warning):
        records.release(central.cdf, x, epsilon=1.0, bounds=(0, 1), privacy_id=ids, max_contributions=2)
    assert records.remaining.epsilon == pytest.approx(8.0)


@pytest.mark.parametrize("given, named", [({"epsilon": 0}, "The 'epsilon' parameter of BudgetSession must be"),
                                          ({"epsilon": 1, "delta": 1.5}, "The 'delta' parameter of BudgetSession must be")])
def test_a_bad_total_names_budget_session_not_privacy_guarantee(given, named):
    """``BudgetSession(epsilon=0)`` said "'epsilon' parameter of PrivacyGuarantee"."""
    with pytest.raises(InvalidParameterError) as refused:
        BudgetSession(**given)
    assert str(refused.value).startswith(named)
