"""explain_plan: a campaign repeated over a year, per device, under each accountant, memoized and relayed."""

from __future__ import annotations

import json

import pytest

import dpdist
from dpdist.accounting import guess_bound, guess_odds
from dpdist.accounting._odds import percent
from dpdist.cli import main
from dpdist.errors import InvalidParameterError


# a year of daily campaigns is 2.5 CPU-s (365-fold PLD compositions, 14 of them in the fit): the full suite; the
# fast loop plans a year of weekly campaigns through the same rows (0.45 CPU-s)
@pytest.mark.parametrize("every, campaigns, pld_band", [
    ("week", 52, None),
    pytest.param("day", 365, (3.897, 3.95), marks=pytest.mark.slow),
])
def test_a_year_of_grr_states_each_accountant_and_fits_the_target(every, campaigns, pld_band):
    planned = dpdist.explain_plan({"protocol": "grr", "epsilon": 0.1, "domain_size": 16}, n=100_000, every=every,
                                  target=4.0)
    repeated, fitted = planned.row("repeated"), planned.row("fit to target")
    assert planned.campaigns == campaigns
    assert repeated.totals["basic"] == pytest.approx(0.1 * campaigns)
    assert repeated.totals["tightest"] == repeated.totals["pld"] <= repeated.totals["zcdp"] <= repeated.totals["basic"]
    if pld_band is not None:
        assert pld_band[0] <= repeated.totals["pld"] <= pld_band[1]
    assert fitted.totals["tightest"] <= 4.0 and fitted.epsilon > 0.1 > 4.0 / campaigns
    assert fitted.error < repeated.error  # a larger epsilon per day: a smaller error
    memo = planned.row("memoized l-grr")
    assert memo.totals["unchanged value"] == 4.0 and memo.totals["changing value"] > 4.0
    assert json.loads(json.dumps(planned.to_dict()))["rows"][0]["option"] == "repeated"
    # the guess of a device's unchanged value from its reports over the horizon: exact for fresh GRR reports, the memo's
    # bound at its epsilon_inf for the memoized rows
    protocol = dpdist.local.make("grr", epsilon=0.1, domain_size=16)
    assert repeated.guess.exact == (True,) and repeated.guess.probability == guess_odds(protocol, campaigns).probability
    assert memo.guess.probability[0] == pytest.approx(guess_bound(4.0, chance=1 / 16)) and not memo.guess.exact[0]
    assert fitted.guess.probability[0] > repeated.guess.probability[0] > 1 / 16
    assert f"<= {percent(memo.guess.probability[0], bound=True)} (6.25%)" in planned.describe()  # a bound: rounded up


@pytest.mark.slow
def test_the_relayed_row_fits_the_target_centrally():
    planned = dpdist.explain_plan({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, n=10**5, every="week",
                                  target=2.0, relay_n=10**5)
    relayed = planned.row("relayed")
    assert relayed.totals["central"] <= 2.0 and relayed.epsilon > 1.0
    # if the relay colludes, what is left is the same reports' local total: far above the target it fits centrally
    local_total = dpdist.explain_plan({"protocol": "grr", "epsilon": relayed.epsilon, "domain_size": 8}, n=10**5,
                                      every="week").row("repeated").totals["tightest"]
    assert relayed.totals["relay colludes"] == pytest.approx(local_total) and local_total > 10 * 2.0
    assert relayed.holds_against == "the collector, relay honest" and planned.row("repeated").holds_against == "anyone"
    assert relayed.error < planned.row("fit to target").error
    assert relayed.guess.probability[0] == pytest.approx(guess_bound(relayed.totals["central"], planned.delta, chance=1 / 8))


def test_cli_plan_prints_the_table_and_refuses_its_options_without_plan(capsys):
    config = '{"protocol": "grr", "epsilon": 0.5, "domain_size": 4}'
    assert main(["explain", "--config", config, "--n", "1000", "--plan", "--every", "week", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "52 campaign(s)" in out and "memoized loloha" in out and "holds against" in out.splitlines()[1]
    assert main(["explain", "--config", config, "--n", "1000", "--target", "3"]) == 2
    assert "--target" in capsys.readouterr().err
    with pytest.raises(InvalidParameterError, match="releases"):
        dpdist.explain_plan(config and {"protocol": "grr", "epsilon": 0.5, "domain_size": 4}, 1000, every="release")


@pytest.mark.parametrize("options, given", [(["--every", "release"], "Got --every 'release' without --releases."),
                                            (["--releases", "4"], "Got --every 'day'.")])
def test_cli_plan_names_the_releases_option_not_the_python_argument(options, given, capsys):
    """`explain --plan --every release` without --releases printed "The 'releases' parameter of
    explain_plan ... releases=None", the Python argument, not the option."""
    config = '{"protocol": "grr", "epsilon": 0.5, "domain_size": 4}'
    assert main(["explain", "--config", config, "--n", "1000", "--plan", *options, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "'--releases'" in err and given in err and "explain_plan" not in err and len(err.splitlines()) == 1
