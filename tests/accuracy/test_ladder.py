"""The trust ladder: every row's error against a Monte Carlo of its exact samplers, its promises, and its refusals.

Each row's predicted mean squared error (mean over the items) must match the mean of ``repeats`` simulated runs
within 3 standard errors of that mean (seeded), on 3 small (n, d) settings here (the smallest in the fast loop, the
other two slow-marked: a Monte Carlo of 400 runs per model) and 4 larger ones marked slow: 7 in all.  Settings with colluding devices make the relay's honest reports, the threshold (K - 10) and the secure aggregation
factor (2 with half the devices colluding) matter.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpdist import explain_ladder, local
from dpdist.accounting import guess_bound, guess_odds
from dpdist.accounting._odds import percent
from dpdist.accounting._threshold import threshold_delta
from dpdist.accuracy._ladder_simulation import simulate_row
from dpdist.amplification import shuffled
from dpdist.errors import InvalidParameterError
from shuffle_support import exact_device_delta

MODELS = ("local", "shuffled", "sample-and-threshold", "central (discrete Laplace)", "central (Gaussian)",
          "secure aggregation")
#: (protocol, d, n, delta, colluding, shape)
FAST = [("grr", 4, 400, 1e-4, 0, "normal"), ("oue", 8, 1_000, 1e-5, 10, "zipf"), ("grr", 16, 3_000, 1e-6, 0, "uniform")]
#: the Monte Carlo's settings in the fast loop: the smallest (every model's simulation, 1 CPU-s each for the others)
FAST_MONTE_CARLO = [FAST[0], *(pytest.param(setting, marks=pytest.mark.slow) for setting in FAST[1:])]
SLOW = [("grr", 8, 10_000, 1e-8, 0, "uniform"), ("grr", 64, 10_000, 1e-8, 5_000, "normal"),
        ("oue", 32, 50_000, 1e-8, 0, "skewed"), ("grr", 128, 200_000, 1e-9, 1_000, "bimodal")]
_BUILT: dict = {}


def built(setting):
    if setting not in _BUILT:
        protocol, d, n, delta, colluding, shape = setting
        _BUILT[setting] = explain_ladder({"protocol": protocol, "epsilon": 1.0, "domain_size": d}, n, delta=delta,
                                         colluding=colluding, shape=shape)
    return _BUILT[setting]


def check_rows(setting, repeats: int) -> None:
    rungs = built(setting)
    for index, model in enumerate(MODELS):
        row = rungs.row(model)
        runs = simulate_row(rungs, model, repeats // 8 if model == "central (Gaussian)" else repeats, seed=17 + index)
        standard_error = runs.std(ddof=1) / math.sqrt(runs.size)
        tolerance = 3 * standard_error + 1e-9 * row.mse  # a row whose every run is the same (all suppressed): exact
        assert abs(runs.mean() - row.mse) <= tolerance, (setting, model, row.mse, runs.mean(), standard_error)


@pytest.mark.parametrize("setting", FAST_MONTE_CARLO, ids=lambda s: f"{s[0]}-d{s[1]}-n{s[2]}")
@pytest.mark.slow  # 0.40 CPU-s: a Monte Carlo of every row
def test_every_row_matches_its_monte_carlo_within_3_standard_errors(setting):
    check_rows(setting, 400)


@pytest.mark.slow
@pytest.mark.parametrize("setting", SLOW, ids=lambda s: f"{s[0]}-d{s[1]}-n{s[2]}")
def test_every_row_matches_its_monte_carlo_at_larger_n_and_d(setting):
    check_rows(setting, 400)


def test_each_row_states_the_target_and_the_accountants_agree():
    rungs = built(FAST[1])
    n, colluding = rungs.n, 10
    relayed = rungs.row("shuffled")
    assert relayed.parameters["honest_reports"] == n - colluding
    protocol = local.make("oue", epsilon=relayed.parameters["epsilon0"], domain_size=8)
    assert shuffled(protocol, n - colluding, rungs.delta).epsilon <= rungs.epsilon  # amplified among honest ones only
    assert shuffled(local.make("oue", epsilon=relayed.parameters["epsilon0"] * 1.01, domain_size=8), n - colluding,
                    rungs.delta).epsilon > rungs.epsilon
    thresholded = rungs.row("sample-and-threshold")
    assert threshold_delta(rungs.epsilon, thresholded.parameters["sampling"], 20, colluding=colluding,
                           neighbouring="replace") <= rungs.delta
    for row in rungs.rows:
        assert row.guarantee.epsilon <= rungs.epsilon * (1 + 1e-12) and row.guarantee.delta <= rungs.delta
        assert row.guarantee.neighbouring == "replace" and row.guarantee.model == "central"
    assert rungs.row("secure aggregation").mse == pytest.approx(rungs.row("central (discrete Laplace)").mse * n / (n - colluding),
                                                               rel=1e-3)
    assert not rungs.row("sample-and-threshold").runs_in_dpdist and not rungs.row("secure aggregation").runs_in_dpdist


def test_every_row_says_what_each_party_must_do():
    rungs = built(FAST[1])
    parties = {row.model: {party for party, _ in row.assumptions} for row in rungs.rows}
    assert {"relay", "issuer", "other devices", "collector"} <= parties["shuffled"]
    assert {"aggregation server", "other devices"} <= parties["sample-and-threshold"]
    assert "curator" in parties["central (discrete Laplace)"] and "server" in parties["secure aggregation"]
    relay = dict(rungs.row("shuffled").assumptions)
    assert "10 are the collector's" in relay["other devices"] and "990 reports are honest" in relay["other devices"]
    server = dict(rungs.row("sample-and-threshold").assumptions)["aggregation server"]
    assert "outside the stated guarantee" in server  # STAR's group sizes are not covered
    text = rungs.describe()
    assert all(model in text for model in MODELS) and "computed" in text
    document = rungs.to_dict()
    assert [row["model"] for row in document["rows"]] == list(MODELS)
    assert document["rows"][2]["parameters"]["threshold"] == 20 and document["neighbouring"] == "replace"


def test_rare_items_are_suppressed_and_said_so():
    rungs = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 64}, 2_000, delta=1e-8, shape="normal")
    row = rungs.row("sample-and-threshold")
    assert row.suppressed > 10 and row.mse > row.variance  # the suppressed items' bias is counted
    assert "suppressed" in " ".join(row.notes)


def test_the_relay_row_is_not_offered_where_it_cannot_hold():
    memo = explain_ladder({"protocol": "l-grr", "epsilon": 1.0, "epsilon_1": 0.5, "domain_size": 4}, 500, delta=1e-5)
    assert memo.row("shuffled").guarantee is None and "memoizes" in memo.row("shuffled").notes[0]
    filled = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 4}, 500, delta=1e-5, colluding=100,
                            tokens_each=5)
    assert filled.row("shuffled").guarantee is None and "hides among no others" in filled.row("shuffled").notes[0]
    assert math.isnan(filled.row("shuffled").mse)


def test_a_given_sampling_probability_that_misses_the_target_is_refused_by_name():
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    with pytest.raises(InvalidParameterError, match="'sampling' probability 0.5"):
        explain_ladder(config, 10_000, delta=1e-8, sampling=0.5)
    kept = explain_ladder(config, 10_000, delta=1e-8, sampling=0.105, shape="uniform")
    assert kept.row("sample-and-threshold").parameters["sampling"] == 0.105
    assert kept.row("sample-and-threshold").variance == pytest.approx(0.125 * 0.895 / (0.105 * 10_000), rel=1e-6)


@pytest.mark.parametrize("kwargs, name", [
    ({"n": 1}, "'n'"), ({"delta": 0.0}, "'delta'"), ({"delta": 0.01}, "below 1/n"), ({"threshold": 0}, "'threshold'"),
    ({"colluding": 1_000}, "'colluding'"), ({"tokens_each": 0}, "'tokens_each'"), ({"sampling": 1.5}, "'sampling'"),
    ({"shape": "cubes"}, "shape"),
])
def test_bad_arguments_are_refused_by_name(kwargs, name):
    arguments = {"n": 1_000, "delta": 1e-6, **kwargs}
    with pytest.raises(InvalidParameterError, match=name):
        explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 4}, **arguments)


@pytest.mark.parametrize("config, name", [("grr", "'config'.*Got the str 'grr'"), ({"protocol": "sw", "epsilon": 1.0}, "frequency protocol"),
                                          ({"protocol": "cms", "epsilon": 1.0, "domain_size": 8}, "frequency protocol"),
                                          (42, "'config'")])
def test_a_config_the_ladder_cannot_place_is_refused(config, name):
    with pytest.raises(InvalidParameterError, match=name):
        explain_ladder(config, 1_000, delta=1e-6)


@pytest.mark.slow  # a figure drawn, 0.6 CPU-s: the rows it draws are checked in the fast loop above
def test_the_figure_draws_every_offered_row_as_a_point_labelled_with_whom_it_holds_against(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ladder = built(FAST[0])
    axis = ladder.plot()
    assert len(axis.lines) == 6 and not axis.patches  # points, not bars from an arbitrary left edge of a log axis
    assert np.allclose(sorted(line.get_xdata()[0] for line in axis.lines), sorted(r.rmse for r in ladder.rows))
    labels = [label.get_text() for label in axis.get_yticklabels()]
    assert labels == [f"{row.model}\nholds against {row.holds_against}" for row in ladder.rows]


@pytest.mark.slow
def test_cli_ladder_prints_the_table_json_and_a_figure_and_refuses_in_one_line(capsys, tmp_path):
    from dpdist.cli import main

    config = '{"protocol": "grr", "epsilon": 1.0, "domain_size": 4}'
    figure = tmp_path / "ladder.png"
    assert main(["explain", "--config", config, "--ladder", "--n", "400", "--delta", "1e-4", "--colluding", "2",
                 "--plot", str(figure)]) == 0
    out = capsys.readouterr().out
    assert "sample-and-threshold" in out and "relay: does not collude with the collector" in out
    assert figure.stat().st_size > 1000
    assert main(["explain", "--config", config, "--ladder", "--n", "400", "--delta", "1e-4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["delta"] == 1e-4 and len(document["rows"]) == 6
    for argv, words in ((["--ladder", "--n", "400"], "needs '--delta': the central delta"),
                        (["--n", "400", "--threshold", "5"], "'--threshold' option needs '--ladder'"),
                        (["--ladder", "--plan", "--n", "400", "--delta", "1e-4"], "give one of them"),
                        (["--ladder", "--n", "400", "--delta", "1e-4", "--epsilons", "1,2"], "cannot be used with '--epsilons'"),
                        (["--ladder", "--n", "400", "--delta", "0.5"], "below 1/n"),
                        (["--ladder", "--n", "400", "--delta", "1e-4", "--sampling", "0.9"], "'sampling' probability")):
        assert main(["explain", "--config", config, *argv]) == 2
        error = capsys.readouterr().err
        assert words in error and error.count("\n") == 1 and "Traceback" not in error


# the fast loop holds the row at 1 and 2 tokens (one report, and the group bound of several); 10 tokens (1 CPU-s: the
# search over epsilon0 at a smaller one) in the whole suite
@pytest.mark.parametrize("tokens_each", [1, 2, pytest.param(10, marks=pytest.mark.slow)])
@pytest.mark.slow  # 0.71 CPU-s: a relayed campaign end to end
def test_the_relay_row_holds_per_device_when_a_device_spends_all_its_tokens(tokens_each):
    """With tokens_each = 10 the row stated (0.9984, 1e-8) per device at epsilon0 = 5.13, but a device
    sending its 10 reports had delta 0.43 at that epsilon (2 reports: 5.7e-4).  Now one report is held to (eps/T,
    delta/sum e^(j eps/T)) and the device's T reports to their group bound: the exact delta stays below the stated."""
    row = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, 10_000, delta=1e-8,
                         tokens_each=tokens_each, shape="uniform").row("shuffled")
    stated = row.guarantee
    assert stated.epsilon <= 1.0 and stated.delta <= 1e-8
    for reports in sorted({1, min(2, tokens_each), tokens_each}):
        assert exact_device_delta(row.parameters["epsilon0"], 8, 10_000, reports, stated.epsilon) <= stated.delta
    device = dict(row.assumptions)["issuer"]
    assert f"sends at most {tokens_each} report(s) per round" in device and "per device" in device
    if tokens_each > 1:
        assert row.parameters["epsilon0"] < 4.0 and "group bound" in row.notes[0]  # it buys less than one token each


@pytest.mark.slow  # 0.48 CPU-s: every row of the ladder simulated
def test_every_row_is_held_against_one_adversary_counted_in_reports():
    """With --colluding 4 --tokens-each 5 the relay's row counted 20 known reports but sample-and-threshold
    4 forged ones (accounted at K - 4), whose delta against the relay row's adversary (20 reports) was 0.2."""
    rungs = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, 10_000, delta=1e-8, colluding=2,
                           tokens_each=5, shape="uniform")
    row = rungs.row("sample-and-threshold")
    assert row.parameters["colluding_reports"] == rungs.row("shuffled").parameters["colluding_reports"] == 10
    assert threshold_delta(1.0, row.parameters["sampling"], 20, colluding=10, neighbouring="replace") <= 1e-8
    assert "accounted at K - 10" in dict(row.assumptions)["other devices"]
    assert "2 colluding device(s) x 5 report(s) each = 10 known or forged report(s)" in rungs.describe().splitlines()[0]


def test_each_row_says_whom_its_guarantee_holds_against():
    """The sample-and-threshold row's (1, 1e-8) holds against the analyst, not against the aggregation
    server (with one item unrevealed it knows its count: delta >= p), yet stood beside rows that hold against their
    operator with nothing to tell them apart."""
    rungs = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, 2_000, delta=1e-7, shape="uniform")
    against = {row.model: row.holds_against for row in rungs.rows}
    assert against["sample-and-threshold"] == against["central (Gaussian)"] == "analyst only"
    assert against["local"] == "everyone" and "collector" in against["shuffled"]
    said = {row["model"]: row["holds_against"] for row in rungs.to_dict()["rows"]}
    assert "not the aggregation server" in said["sample-and-threshold"] and "delta >= p" in said["sample-and-threshold"]
    header, *table = rungs.describe().splitlines()[1:8]
    assert "holds against" in header and all(row.holds_against in line for row, line in zip(rungs.rows, table))


def test_each_party_guesses_with_its_reports_odds_or_the_rows_bound():
    """The collector of the local row and the relay with the collector of the shuffled one guess with one report's
    exact odds (at the row's epsilon, epsilon0); the parties the stated guarantee holds against with at most its bound,
    under a uniform prior and the data shape's; the curator guesses every item; the aggregation server is not bounded."""
    rungs = built(FAST[0])
    d, counts = 4, np.asarray(rungs.counts, dtype=float)
    chances = (1 / d, counts.max() / counts.sum())
    local_row, relayed = rungs.row("local"), rungs.row("shuffled")
    (collector,) = local_row.guesses
    one = local.make("grr", epsilon=rungs.epsilon, domain_size=d)
    assert collector.exact and collector.uniform == pytest.approx(guess_odds(one).probability[0])
    assert collector.shape == pytest.approx(guess_odds(one, prior=counts).probability[0])
    analyst, pooled = relayed.guesses
    report = local.make("grr", epsilon=relayed.parameters["epsilon0"], domain_size=d)
    assert pooled.exact and pooled.uniform == pytest.approx(guess_odds(report).probability[0])
    assert pooled.uniform > analyst.uniform  # the relay's report, read with the collector: epsilon0, not epsilon
    stated = relayed.guarantee
    assert not analyst.exact and (analyst.uniform, analyst.shape) == tuple(
        pytest.approx(guess_bound(stated.epsilon, stated.delta, chance=c)) for c in chances)
    assert rungs.row("central (Gaussian)").guesses[1].uniform == 1.0  # the curator
    assert rungs.row("sample-and-threshold").guesses[1].uniform is None
    assert [len(rungs.row(model).guesses) for model in MODELS] == [1, 2, 2, 2, 2, 1]
    text = rungs.describe()
    assert f"guess (1/{d})" in text.splitlines()[1] and f"<= {percent(analyst.uniform, bound=True)}" in text
    assert "? guesses a device's item: the aggregation server: not bounded" in text
    assert json.loads(json.dumps(rungs.to_dict()))["rows"][1]["guesses"][1]["party"] == "the relay and the collector together"
