"""One campaign state, one interval, in every view.

The fixed-n band of a distribution is a parametric bootstrap; drawn afresh per query, one
campaign showed three "95 %" intervals of its mean (CLI [46k, 124k], API [52k, 117k],
dashboard [55k, 113k]): each view asks with its own query string, so each was a separate
computation.  The bootstrap's stream is now keyed by the state (config, aggregate, options):
these tests ask the service with the query strings of each view (the dashboard's and the
Python client's: none; ``dpdist campaign estimate``: ``level=0.95``; the dashboard with a
stop width) and print the CLI's text from the document, in process; ``tests/cli/test_serve.py``
and ``tests/serve/test_dashboard.py`` run the CLI and the page against a real server.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dpdist import local
from dpdist.serve import create_app
from dpdist.uncertainty import cdf_band
from serve_support import ADMIN_TOKEN

SW = {"protocol": "sw", "epsilon": 2.0, "bins": 32, "bounds": [0.0, 200_000.0]}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
#: the query string each view sends for the same estimate
VIEWS = {
    "dashboard and Python client": {},
    "dpdist campaign estimate": {"level": "0.95"},
    "dashboard with a stop width": {"width": "0.05"},
    "API, every parameter given": {"level": "0.95", "replicates": "100"},
}


def _fixed(document: dict, quantity: str, simultaneous: bool = False) -> dict:
    return next(i for i in document["estimate"]["intervals"]
                if i["quantity"] == quantity and not i["anytime_valid"] and i["simultaneous"] == simultaneous)


def _incomes(seed: int, size: int) -> np.ndarray:
    return np.clip(np.random.default_rng(seed).lognormal(np.log(60_000), 0.6, size), 0, 200_000)


@pytest.mark.slow  # 0.80 CPU-s: the service's views end to end
def test_one_campaign_state_gives_one_interval_in_every_view(tmp_path, capsys, monkeypatch):
    from dpdist.cli._campaign import _summary_lines

    # every view computes the new state at once: the cache may serve a view's last document for up to 2x the CPU time
    # of its last computation (its n says which state), so on a loaded machine some views answered the first state
    monkeypatch.setattr("dpdist.serve._estimate_cache.SPACING", 0.0)

    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    assert client.post("/api/campaigns", json={"campaign": "income", "config": SW}, headers=ADMIN).status_code == 201
    client.post("/api/campaigns/income/open", headers=ADMIN)
    protocol = local.from_config(SW)
    reports = protocol.privatize(_incomes(0, 3000), rng=1)
    assert client.put("/api/campaigns/income/batches/b1", json={"reports": reports.tolist()}).status_code in (200, 201)

    documents = {view: client.get("/api/campaigns/income/estimate", params=query, headers=ADMIN).json()
                 for view, query in VIEWS.items()}
    means = {view: (_fixed(d, "mean")["low"], _fixed(d, "mean")["high"]) for view, d in documents.items()}
    assert len(set(means.values())) == 1, means  # before: a different bootstrap per query string
    reference = documents["dashboard and Python client"]
    for view, document in documents.items():
        for quantity, simultaneous in (("quantile", False), ("cdf", False), ("cdf", True)):
            assert _fixed(document, quantity, simultaneous)["low"] == _fixed(reference, quantity, simultaneous)["low"], view
            assert _fixed(document, quantity, simultaneous)["high"] == _fixed(reference, quantity, simultaneous)["high"], view
        bootstrap = document["estimate"]["uncertainty"]["bootstrap"]  # its level and replicates are in the answer
        assert bootstrap["level"] == 0.95 and bootstrap["replicates"] == 100 and "every view" in bootstrap["stream"]
    low, high = means["dashboard and Python client"]
    assert low < reference["estimate"]["mean"] < high

    print("\n".join(_summary_lines(documents["dpdist campaign estimate"])))  # the CLI's text of its document
    text = capsys.readouterr().out
    mean_row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["mean"])
    assert " ".join(mean_row[2:4]) == f"[{low:.4g}, {high:.4g}]"
    assert "100 parametric-bootstrap replicates at 95%" in text

    # another state (one more batch): another interval, again the same in every view
    more = protocol.privatize(_incomes(2, 500), rng=3)
    assert client.put("/api/campaigns/income/batches/b2", json={"reports": more.tolist()}).status_code in (200, 201)
    later = {view: client.get("/api/campaigns/income/estimate", params=query, headers=ADMIN).json()
             for view, query in VIEWS.items()}
    later_means = {(_fixed(d, "mean")["low"], _fixed(d, "mean")["high"]) for d in later.values()}
    assert len(later_means) == 1 and later_means != {(low, high)}


def test_a_band_without_rng_is_a_function_of_the_aggregate_and_levels_nest():
    protocol = local.make("sw", epsilon=2.0, bins=32)
    aggregate = protocol.simulate(np.random.default_rng(4).beta(2, 5, 4000), rng=5)
    first, second = cdf_band(protocol, aggregate, replicates=40), cdf_band(protocol, aggregate, replicates=40)
    for name in ("lower", "upper", "simultaneous_lower", "simultaneous_upper"):
        np.testing.assert_array_equal(getattr(first.band, name), getattr(second.band, name))
    assert first.intervals()[3].low == second.intervals()[3].low  # the mean's interval, asked twice
    narrower = cdf_band(protocol, aggregate, replicates=40, level=0.8).band  # same replicates: the 80 % band inside
    assert np.all(narrower.simultaneous_lower >= first.band.simultaneous_lower - 1e-12)
    assert np.all(narrower.simultaneous_upper <= first.band.simultaneous_upper + 1e-12)
    other = protocol.simulate(np.random.default_rng(4).beta(2, 5, 4000), rng=6)  # another aggregate: another stream
    assert not np.array_equal(cdf_band(protocol, other, replicates=40).band.lower, first.band.lower)
    options = cdf_band(protocol, aggregate, replicates=40, method="em").band  # other options: another estimate's band
    assert not np.array_equal(options.lower, first.band.lower)
    seeded = cdf_band(protocol, aggregate, replicates=40, rng=7).band  # an explicit seed still gives its own stream
    assert not np.array_equal(seeded.lower, first.band.lower)


def test_an_ibu_bootstrap_interval_is_a_function_of_the_aggregate():
    protocol = local.make("grr", epsilon=1.0, domain_size=6)
    aggregate = protocol.simulate(np.random.default_rng(8).choice(6, 3000, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05]), rng=9)
    first = protocol.estimate(aggregate, estimator="ibu", bootstrap=50)
    second = protocol.estimate(aggregate, estimator="ibu", bootstrap=50)
    np.testing.assert_array_equal(first.variance, second.variance)
    np.testing.assert_array_equal(first.details["interval"][0], second.details["interval"][0])
    seeded = protocol.estimate(aggregate, estimator="ibu", bootstrap=50, rng=1)
    assert not np.array_equal(seeded.variance, first.variance)


def _poisoned_grr(client):
    """A poisoned campaign: GRR d = 128, 40,000 genuine reports (Zipf 1.1), then 2,100 maximal-gain fakes on 97, 111."""
    from dpdist import io, testing

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 128}
    assert client.post("/api/campaigns", json={"campaign": "poisoned", "config": config}, headers=ADMIN).status_code == 201
    client.post("/api/campaigns/poisoned/open", headers=ADMIN)
    protocol = local.from_config(config)
    weights = 1.0 / np.arange(1, 129) ** 1.1
    genuine = np.random.default_rng(0).choice(128, size=40_000, p=weights / weights.sum())
    aggregator = protocol.aggregator()
    for name, reports in (("9e1d0c2a4b6f4e8a9c0d1e2f3a4b5c6d", protocol.privatize(genuine, rng=1)),
                          ("0f1e2d3c4b5a49687766554433221100", testing.maximal_gain_attack(protocol, 2_100, targets=[97, 111], rng=2))):
        body = io.encode_record(protocol, reports, file_id=name)
        response = client.put(f"/api/campaigns/poisoned/batches/{name}", content=body,
                              headers={"Content-Type": "application/octet-stream"})
        assert response.status_code in (200, 201), response.text
        aggregator.add(reports)
    return protocol, aggregator


def test_an_empty_anytime_band_is_reported_as_empty_in_every_view_never_as_low_above_high(tmp_path, capsys):
    """The simultaneous anytime band intersected with the simplex is empty on a poisoned campaign (item 97
    showed [1, -0.02996]): the JSON says ``empty`` with null limits and a note, the CLI's text says "empty", the same in
    every view; honest reports give an empty band with probability at most 1 - level."""
    from dpdist.cli._campaign import _summary_lines

    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    _poisoned_grr(client)
    documents = {view: client.get("/api/campaigns/poisoned/estimate", params=query, headers=ADMIN).json()
                 for view, query in VIEWS.items() if "replicates" not in query}
    bands = []
    for view, document in documents.items():
        band = next(i for i in document["estimate"]["intervals"] if i["anytime_valid"] and i["simultaneous"])
        assert band["empty"] is True, view
        assert all(low is None for low in band["low"]) and all(high is None for high in band["high"]), view
        assert "is empty: no distribution is consistent" in band["method"]
        assert "empty" in document["estimate"]["uncertainty"]["note"] and "poisoning signal" in document["estimate"]["uncertainty"]["note"]
        bands.append((band["low"], band["high"], band["empty"]))
        per_item = next(i for i in document["estimate"]["intervals"] if i["anytime_valid"] and not i["simultaneous"])
        assert per_item["empty"] is False and all(lo <= hi for lo, hi in zip(per_item["low"], per_item["high"]))
    assert all(band == bands[0] for band in bands)
    print("\n".join(_summary_lines(documents["dpdist campaign estimate"])))
    text = capsys.readouterr().out
    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["97"])
    assert row[-1] == "empty", row
    assert "band of all values at once is empty" in text


def test_an_honest_campaigns_anytime_band_is_not_empty():
    """The same population without the fakes: the band is a proper interval per item (low <= high), not empty."""
    from dpdist.confidence_sequences import confidence_sequence

    protocol = local.make("grr", epsilon=1.0, domain_size=128)
    weights = 1.0 / np.arange(1, 129) ** 1.1
    aggregator = protocol.aggregator()
    aggregator.add(protocol.privatize(np.random.default_rng(0).choice(128, size=40_000, p=weights / weights.sum()), rng=1))
    sequence = confidence_sequence(protocol, aggregator, level=0.95, target_n=10_000)
    assert not sequence.simultaneous_empty and sequence.centring_note({}) is None
    assert np.all(sequence.simultaneous_low <= sequence.simultaneous_high)
    assert sequence.intervals()[1].empty is False


def test_a_recovered_estimate_is_served_without_the_plain_estimates_anytime_intervals_and_takes_targets(tmp_path, capsys):
    """``recover=ldprecover``: the confidence sequence bounds the plain unbiased estimate (fakes included), which the
    recovered values leave, so no anytime interval is shown and ``sequence_unavailable`` says why; ``targets`` (a JSON
    list or "97,111") reaches the recovery, and a bad value is a 400 naming the option."""
    from dpdist.cli._campaign import _summary_lines
    from dpdist.serve._uncertainty import NO_RECOVERED_SEQUENCE

    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    protocol, aggregator = _poisoned_grr(client)
    plain = client.get("/api/campaigns/poisoned/estimate", headers=ADMIN).json()["estimate"]
    assert any(i["anytime_valid"] for i in plain["intervals"])
    recovered = client.get("/api/campaigns/poisoned/estimate", params={"recover": "ldprecover", "level": "0.95"},
                           headers=ADMIN).json()
    estimate = recovered["estimate"]
    assert not any(i["anytime_valid"] for i in estimate["intervals"])
    assert estimate["uncertainty"]["sequence_unavailable"] == NO_RECOVERED_SEQUENCE
    print("\n".join(_summary_lines(recovered)))
    assert "anytime: none, no anytime interval is derived for the recovered (LDPRecover) estimate" in capsys.readouterr().out

    expected = protocol.estimate(aggregator, recover="ldprecover", targets=[97, 111]).frequencies
    for targets in ("97,111", "[97, 111]"):
        document = client.get("/api/campaigns/poisoned/estimate", params={"recover": "ldprecover", "targets": targets},
                              headers=ADMIN)
        assert document.status_code == 200, document.text
        np.testing.assert_allclose(document.json()["estimate"]["frequencies"], expected, atol=1e-12)
    refused = client.get("/api/campaigns/poisoned/estimate", params={"recover": "ldprecover", "targets": "97,x"},
                         headers=ADMIN)
    assert refused.status_code == 400 and "'targets'" in refused.text and "97,x" in refused.text


def test_a_shares_fixed_n_interval_is_clipped_to_what_a_share_can_be_in_every_view(tmp_path, capsys):
    """GRR, eps 1, 60 reports: the fixed-n intervals ran to [-1.02, -0.15] and [0.07, 1.22] while the
    anytime ones were clipped.  Clipped to [0, 1] (the same coverage: a share lies there), and the same limits in the
    API's document, the CLI's text, Python's intervals, table and describe; the CLI says so."""
    from dpdist.cli._campaign import _summary_lines
    from dpdist.estimates import FrequencyEstimate

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    assert client.post("/api/campaigns", json={"campaign": "small", "config": config}, headers=ADMIN).status_code == 201
    client.post("/api/campaigns/small/open", headers=ADMIN)
    protocol = local.from_config(config)
    values = np.random.default_rng(2).choice(8, 60, p=[0.4, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0])
    reports = protocol.privatize(values, rng=3)
    assert client.put("/api/campaigns/small/batches/b1", json={"reports": reports.tolist()}).status_code == 200
    document = client.get("/api/campaigns/small/estimate", headers=ADMIN).json()
    fixed = _fixed(document, "frequency")
    estimate = protocol.estimate(protocol.aggregator().add(reports))
    raw = estimate.frequencies[:, None] + 1.96 * estimate.standard_error[:, None] * np.array([-1, 1])
    assert raw.min() < 0 and raw.max() > 1  # what the old intervals were
    low, high = estimate.confidence_interval(0.95)
    assert np.all((0 <= low) & (low <= high) & (high <= 1)) and "clipped to [0, 1]" in fixed["method"]
    assert np.allclose(fixed["low"], low, rtol=0, atol=1e-12) and np.allclose(fixed["high"], high, rtol=0, atol=1e-12)
    assert np.allclose(document["estimate"]["band"]["low"], low) and np.allclose(estimate.table()["high"], high)
    read = FrequencyEstimate.from_dict(estimate.to_dict())  # a saved estimate keeps its intervals
    assert np.allclose(read.confidence_interval().low, low) and np.allclose(read.confidence_interval().high, high)
    anytime = next(i for i in document["estimate"]["intervals"] if i["anytime_valid"] and i["simultaneous"])
    assert min(anytime["low"]) >= 0 and max(anytime["high"]) <= 1
    print("\n".join(_summary_lines(document)))
    text = capsys.readouterr().out
    assert "clipped to [0, 1], what a share can be" in text
    shown = dict(re.findall(r"^ +(\d) +\S+ +(\[\S+, \S+\])", text, re.M))
    assert shown == {str(i): f"[{low[i]:.4g}, {high[i]:.4g}]" for i in range(8)}
    described = estimate.describe(k=8)
    assert "[-" not in described and ", 1.0000]" in described and all(f"[{low[i]:.4f}, {high[i]:.4f}]" in described
                                                                for i in range(8))


def test_replicates_in_other_digits_are_a_400_not_a_500(tmp_path):
    """``"²"`` is a digit to ``str.isdigit`` but not to ``int``: the option was a 500 ."""
    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    _poisoned_grr(client)
    refused = client.get("/api/campaigns/poisoned/estimate", params={"replicates": "2\u00b2"}, headers=ADMIN)
    assert refused.status_code == 400 and "'replicates'" in refused.text
