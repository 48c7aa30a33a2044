"""Every view of a campaign's distribution draws the same thing.

``GET .../estimate.png`` (``dpdist campaign estimate --plot``) draws the fixed-n CDF band the JSON, the text and
the dashboard show; the dashboard draws the density the estimate's figure draws (on its display bins), not the
estimate bin by bin, whose 1024 bins showed several peaks for a single-peaked population.
"""

from __future__ import annotations

import asyncio

import httpx
import numpy as np
import pytest
from scipy.signal import find_peaks

from dpdist import io, local
from dpdist.plotting import display_edges

pytest.importorskip("starlette")

from dpdist.serve import create_app  # noqa: E402 - after the extra's check

ADMIN = "admin-token-0123456789"
HEADERS = {"authorization": f"Bearer {ADMIN}"}


def test_the_png_draws_the_band_the_json_serves(tmp_path, monkeypatch):
    import dpdist.plotting
    from dpdist.serve import _estimate_cache

    drawn = []
    # in this process (not the estimator's), so that the estimate handed to the figure can be seen
    monkeypatch.setattr(_estimate_cache, "_compute", lambda function, *arguments: (function(*arguments), 0.0))
    monkeypatch.setattr(dpdist.plotting, "save_estimate", lambda estimate, buffer, **options: drawn.append(estimate))
    config = {"protocol": "sw", "epsilon": 2.0, "bins": 64}
    protocol = local.from_config(config)
    reports = protocol.privatize(np.random.default_rng(1).beta(2, 5, 2000), rng=2)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)

    async def work():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            await client.post("/api/campaigns", json={"campaign": "sw", "config": config})
            await client.post("/api/campaigns/sw/open")
            await client.put("/api/campaigns/sw/batches/b1", content=io.encode_record(protocol, reports),
                             headers={"content-type": "application/octet-stream"})
            query = {"replicates": "20", "level": "0.9"}
            document = (await client.get("/api/campaigns/sw/estimate", params=query)).json()
            picture = await client.get("/api/campaigns/sw/estimate.png", params=query)
            return document, picture

    document, picture = asyncio.run(work())
    assert picture.status_code == 200
    (estimate,) = drawn
    served = document["estimate"]["band"]
    assert served is not None and estimate.band is not None  # the figure used to be drawn without it
    assert estimate.band.level == served["level"] == 0.9 and estimate.band.replicates == 20
    np.testing.assert_array_equal(estimate.band.lower, served["lower"])
    np.testing.assert_array_equal(estimate.band.simultaneous_upper, served["simultaneous_upper"])
    np.testing.assert_array_equal(estimate.probabilities, document["estimate"]["probabilities"])


def _peaks(density: np.ndarray) -> int:
    """Local maxima standing out by a fifth of the highest density."""
    return len(find_peaks(np.r_[0.0, density, 0.0], prominence=0.2 * density.max())[0])


def test_the_served_density_is_the_figures_not_the_estimate_bin_by_bin():
    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("sw", epsilon=2.0, bounds=(0, 1440))  # 1024 bins
    minutes = np.clip(np.random.default_rng(1).normal(700, 150, 20_000), 0, 1440)  # one peak
    aggregate = protocol.simulate(minutes, rng=101)
    estimate = protocol.estimate(aggregate)
    document = served_estimate(protocol, aggregate, estimate, level=0.95, width=None, replicates=0, target_n=10_000,
                               options={})
    shown = document["display"]
    edges = display_edges(estimate)
    assert shown["bins"] == 40 and np.array_equal(shown["edges"], edges)
    # what the figure's density panel draws (Distribution.figure: the CDF's differences on the display bins)
    np.testing.assert_allclose(shown["density"], np.diff(estimate.cdf(edges)) / np.diff(edges), rtol=1e-12)
    own = np.asarray(estimate.probabilities) / estimate.widths
    assert _peaks(own) == 3 and _peaks(np.asarray(shown["density"])) == 1  # seeded: the bin-by-bin view's false peaks


def _modes(density) -> int:
    """Every local maximum of a step density (a plateau once, equal within 1e-9 of the highest; an end when it is
    above its neighbour): no threshold of prominence."""
    density = np.asarray(density)
    steps = density[np.r_[True, np.abs(np.diff(density)) > 1e-9 * density.max()]]
    return int((np.r_[True, steps[1:] > steps[:-1]] & np.r_[steps[:-1] > steps[1:], True]).sum())


@pytest.mark.slow  # two bootstraps of the service's 100 replicates (3 CPU-s each)
def test_the_served_density_shows_only_the_peaks_its_band_supports():
    """Issue 64 item 7: an SW campaign of one peak (n = 6,600, epsilon 2) drew a density with spikes (11 local maxima
    on the figure's 40 equal bins).  The served density is the estimate on the same bins with only the peaks the
    simultaneous band supports (the taut string's): one for one peak, two for two, the mass kept, and nearer the
    truth than the estimate drawn as it is."""
    from scipy.stats import norm

    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("sw", epsilon=2.0, bounds=(0, 120))
    rng = np.random.default_rng(0)
    one = (np.clip(rng.normal(40, 12, 6600), 0, 120), lambda x: norm.pdf(x, 40, 12))
    two = (np.clip(np.where(rng.random(6600) < 0.5, rng.normal(30, 6, 6600), rng.normal(85, 6, 6600)), 0, 120),
           lambda x: 0.5 * norm.pdf(x, 30, 6) + 0.5 * norm.pdf(x, 85, 6))
    for (values, truth), peaks in ((one, 1), (two, 2)):
        aggregate = protocol.simulate(values, rng=1)
        estimate = protocol.estimate(aggregate)
        edges = display_edges(estimate)
        drawn = np.diff(estimate.cdf(edges)) / np.diff(edges)  # what the display drew before
        if peaks == 1:
            assert _modes(drawn) >= 5
        document = served_estimate(protocol, aggregate, estimate, level=0.95, width=None, replicates=100,
                                   target_n=10_000, options={})
        shown = document["display"]
        density = np.asarray(shown["density"])
        assert _modes(density) == shown["peaks"] == peaks and f"{peaks} peak" in shown["method"]
        assert np.array_equal(shown["edges"], edges) and shown["bins"] == density.size == 40
        assert np.sum(density * np.diff(edges)) == pytest.approx(1, abs=1e-12) and density.min() >= 0
        cdf = np.r_[0.0, np.cumsum(density * np.diff(edges))]  # a density the band supports: its CDF inside it
        band = document["band"]
        assert np.all(cdf >= np.interp(edges, band["edges"], band["simultaneous_lower"]) - 1e-9)
        assert np.all(cdf <= np.interp(edges, band["edges"], band["simultaneous_upper"]) + 1e-9)
        true = truth((edges[:-1] + edges[1:]) / 2)
        assert np.sum(np.abs(density - true)) < np.sum(np.abs(drawn - true))  # nearer the truth, not only smoother
