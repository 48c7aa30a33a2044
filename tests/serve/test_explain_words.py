"""What a campaign's epsilon buys in plain words: the explain route's ``plain`` sentences say the
predicted numbers themselves (the pages show them: tests/docs/test_pages.py drives both in Chromium)."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("starlette")

from dpdist.accuracy import explain
from dpdist.serve._explain_words import plain_words


@pytest.fixture()
def service(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from dpdist.serve import create_app
    from serve_support import ADMIN_TOKEN

    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN))

    def create(name: str, config: dict) -> str:
        created = client.post("/api/campaigns", json={"campaign": name, "config": config},
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert created.status_code == 201, created.text
        return f"/api/campaigns/{name}/explain"

    return client, create


def _half_width(config: dict, n: int, epsilon: float) -> float:
    return float(explain(config, n, epsilons=[epsilon])["interval"][0])


def test_a_frequency_campaign_says_its_half_width_the_trade_and_what_a_person_gives_up(service):
    client, create = service
    config = {"protocol": "oue", "epsilon": 1.0, "domain_size": 16}
    accuracy, trade, privacy, source = client.get(create("f", config), params={"n": 20_000}).json()["plain"]
    half = _half_width(config, 20_000, 1.0)
    assert accuracy == (f"With ε = 1 and 20,000 reports, each answer's share of the population is expected to be within "
                        f"±{half:.3g} ({100 * half:.3g} percentage points) of the truth, 95 times in 100 on average over "
                        "the answers (a common answer's share varies a little more).")
    assert trade == ("A smaller ε protects each person more and costs accuracy: "
                     f"at ε = 0.5, ±{_half_width(config, 20_000, 0.5):.3g}; at ε = 2, ±{_half_width(config, 20_000, 2.0):.3g}.")
    assert "e^ε = 2.72 times as likely" in privacy
    assert "exact variance" in source and "normal distribution" in source and "not this campaign's own" in source


def test_a_mean_campaign_says_it_in_the_datas_units(service):
    client, create = service
    config = {"protocol": "pm", "epsilon": 2.0, "bounds": [0.0, 100.0]}
    plain = client.get(create("m", config), params={"shape": "skewed"}).json()["plain"]  # no report yet: n 10,000
    half = float(explain(config, 10_000, epsilons=[2.0], shape="skewed")["interval"][0])
    assert plain[0].startswith(f"With ε = 2 and 10,000 reports, the mean is expected to be within ±{half:.3g} "
                               "(in the data's units)")
    assert "e^ε = 7.39" in plain[2] and "skewed distribution" in plain[3]


def test_a_simulated_prediction_says_so_and_where_its_n_stops():
    config = {"protocol": "sw", "epsilon": 1.0, "bins": 32, "bounds": [0.0, 10.0]}
    document = explain(config, 500, epsilons=[0.5, 1.0, 2.0], repeats=3).to_dict()
    document.update(epsilon=1.0, n_requested=100_000)
    accuracy, _, _, source = plain_words(document)
    assert accuracy.startswith("With ε = 1 and 500 reports, the median is expected to be within ±")
    # a mean of 3 simulated collections: each half-width with its own standard error, so two predictions whose
    # difference is within their spread do not read as a trend
    own = next(p for p in document["predictions"] if p["epsilon"] == 1.0)["errors"]["interval"]
    assert f"(give or take {own['standard_error']:.3g}: a prediction from simulations)" in accuracy
    assert "the estimated share of people below a value is off by up to" in accuracy
    assert "from 3 simulated collections" in source and "stop at 500 reports" in source


def test_no_sentence_without_a_prediction_at_the_campaigns_epsilon(service):
    document = explain({"protocol": "grr", "epsilon": 1.0, "domain_size": 4}, 1000, epsilons=[2.0]).to_dict()
    assert plain_words({**document, "epsilon": 1.0}) == []
    client, create = service  # explain covers no heavy hitters protocol: the route says so (the pages show it)
    refused = client.get(create("h", {"protocol": "pem", "epsilon": 4.0, "bits": 16, "k": 4}))
    assert refused.status_code == 400 and refused.json()["detail"]
