"""Tests of the result objects in dpdist.estimates: Distribution and FrequencyEstimate."""

import dataclasses
from itertools import pairwise

import matplotlib
import numpy as np
import pytest
from scipy import integrate, stats

from dpdist import Distribution, FrequencyEstimate, local
from dpdist.errors import DPDistError, InvalidParameterError
from dpdist.privacy import PrivacyGuarantee

matplotlib.use("Agg")  # Distribution.plot imports pyplot lazily, after this

# Uneven bins with zero-mass bins at the start, in the middle and at the end.
EDGES = np.array([-1.0, -0.5, 0.0, 0.3, 1.0, 1.2, 2.0])
MASSES = np.array([0.0, 0.2, 0.0, 0.5, 0.3, 0.0])


@pytest.fixture
def distribution():
    return Distribution(EDGES, MASSES, method="test", epsilon=1.0, n=10, guarantee=PrivacyGuarantee(1.0))


# ---------------------------------------------------------------- Distribution: functions
def test_cdf_is_piecewise_linear_through_the_edges(distribution):
    cumulative = np.concatenate([[0.0], np.cumsum(MASSES)])
    np.testing.assert_allclose(distribution.cdf(EDGES), cumulative, atol=1e-15)
    middles = (EDGES[:-1] + EDGES[1:]) / 2
    np.testing.assert_allclose(distribution.cdf(middles), (cumulative[:-1] + cumulative[1:]) / 2, atol=1e-15)
    assert distribution.cdf(-5.0) == 0.0 and distribution.cdf(5.0) == 1.0
    np.testing.assert_array_equal(distribution.cumulative, distribution.cdf(EDGES))


def test_pdf_is_mass_over_width_and_right_continuous(distribution):
    heights = MASSES / np.diff(EDGES)
    middles = (EDGES[:-1] + EDGES[1:]) / 2
    np.testing.assert_allclose(distribution.pdf(middles), heights)
    # right-continuous at inner edges: the density at an edge is that of the bin it opens
    np.testing.assert_allclose(distribution.pdf(EDGES[1:-1]), heights[1:])
    np.testing.assert_array_equal(distribution.pdf([-1.01, 2.01]), [0.0, 0.0])
    # the pdf integrates to 1
    total = sum(integrate.quad(distribution.pdf, a, b)[0] for a, b in pairwise(EDGES))
    assert total == pytest.approx(1.0, abs=1e-12)


def test_quantile_is_the_generalized_inverse_of_the_cdf(distribution):
    levels = np.linspace(0.0, 1.0, 1001)
    quantiles = distribution.quantile(levels)
    assert np.all(np.diff(quantiles) >= 0)
    np.testing.assert_allclose(distribution.cdf(quantiles[1:]), levels[1:], atol=1e-12)
    # smallest x with cdf(x) >= q: just below it the cdf is below q
    assert np.all(distribution.cdf(quantiles[1:] - 1e-9) < levels[1:])
    # flat parts (zero-mass bins): q = 0.2 is reached at x = 0, the start of the flat bin
    assert distribution.quantile(0.2) == pytest.approx(0.0, abs=1e-15)
    assert distribution.quantile(1.0) == pytest.approx(1.2)  # the last bin is empty
    assert distribution.quantile(0.0) == pytest.approx(-1.0)
    with pytest.raises(InvalidParameterError, match="'q'"):
        distribution.quantile([0.5, 1.5])
    with pytest.raises(InvalidParameterError):
        distribution.quantile(np.nan)


def test_mean_and_variance_match_numerical_integration(distribution):
    def moment(power):
        return sum(integrate.quad(lambda x: x**power * distribution.pdf(x), a, b)[0] for a, b in pairwise(EDGES))

    mean = moment(1)
    assert distribution.mean() == pytest.approx(mean, rel=1e-12)
    assert distribution.var() == pytest.approx(moment(2) - mean**2, rel=1e-12)


def test_range_query_is_the_mass_of_the_range(distribution):
    assert distribution.range_query(-1.0, 2.0) == pytest.approx(1.0)
    assert distribution.range_query(0.0, 0.3) == pytest.approx(0.0, abs=1e-15)
    assert distribution.range_query(0.3, 1.0) == pytest.approx(0.5)
    # half of bin [-0.5, 0] and half of bin [0.3, 1.0]
    assert distribution.range_query(-0.25, 0.65) == pytest.approx(0.1 + 0.25)
    low, high = np.array([-2.0, 0.5]), np.array([0.0, 3.0])
    np.testing.assert_allclose(distribution.range_query(low, high), distribution.cdf(high) - distribution.cdf(low))
    with pytest.raises(InvalidParameterError, match="low <= high"):
        distribution.range_query(0.5, 0.4)


def test_sample_follows_the_distribution(distribution):
    values = distribution.sample(20_000, rng=0)
    assert values.shape == (20_000,)
    assert np.all((values >= -1.0) & (values <= 2.0))
    # No sample in a zero-mass bin.
    empty = (values < -0.5) | ((values > 0.0) & (values < 0.3)) | (values > 1.2)
    assert not empty.any()
    # Fixed seed, so deterministic; a correct sampler gives p ~ U(0, 1), a wrong one p ~ 0.
    assert stats.kstest(values, distribution.cdf).pvalue > 1e-3
    np.testing.assert_array_equal(values, distribution.sample(20_000, rng=0))


def test_plot_returns_axes(distribution):
    for kind in ("pdf", "cdf"):
        ax = distribution.plot(kind=kind)
        assert isinstance(ax, matplotlib.axes.Axes)
        assert ax.get_xlim() == distribution.bounds
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    assert distribution.plot(ax, label="mine") is ax
    with pytest.raises(InvalidParameterError, match="'kind'"):
        distribution.plot(kind="histogram")
    plt.close("all")


# ---------------------------------------------------------------- Distribution: construction
def test_constructors_properties_and_round_trip(distribution):
    assert distribution.bounds == (-1.0, 2.0)
    assert distribution.bins == 6
    np.testing.assert_allclose(distribution.widths, np.diff(EDGES))
    again = Distribution.from_cdf(EDGES, distribution.cumulative)
    np.testing.assert_allclose(again.probabilities, distribution.probabilities, atol=1e-15)
    uniform = Distribution.uniform_bins([0.25, 0.75], bounds=(2.0, 4.0))
    np.testing.assert_array_equal(uniform.edges, [2.0, 3.0, 4.0])
    as_dict = distribution.to_dict()  # the JSON of docs/reference/results.md; from_dict reads it back
    rebuilt = Distribution.from_dict(as_dict)
    np.testing.assert_array_equal(rebuilt.probabilities, distribution.probabilities)
    assert rebuilt.method == "test" and rebuilt.epsilon == 1.0 and rebuilt.n == 10
    assert rebuilt.guarantee == distribution.guarantee
    # an epsilon without its guarantee reads as a release whose privacy statement was removed: refused
    with pytest.raises(InvalidParameterError, match="'guarantee' is null where the document states epsilon 1.0"):
        Distribution.from_dict({**as_dict, "guarantee": None})
    assert "bins=6" in repr(distribution)


def test_distribution_is_immutable_and_renormalized():
    distribution = Distribution([0.0, 1.0, 2.0], [0.5, 0.5 + 5e-7])
    assert distribution.probabilities.sum() == pytest.approx(1.0, abs=1e-15)
    assert distribution.cumulative[-1] == 1.0
    with pytest.raises(ValueError):
        distribution.probabilities[0] = 0.9
    with pytest.raises(dataclasses.FrozenInstanceError):
        distribution.method = "other"


@pytest.mark.parametrize(
    "edges, probabilities, name",
    [
        ([0.0, 1.0, 1.0], [0.5, 0.5], "edges"),  # not strictly increasing
        ([0.0, np.inf], [1.0], "edges"),
        ([0.0], [], "edges"),
        ([[0.0, 1.0]], [1.0], "edges"),
        ([0.0, 1.0, 2.0], [1.0], "probabilities"),  # shape mismatch
        ([0.0, 1.0, 2.0], [1.2, -0.2], "probabilities"),
        ([0.0, 1.0, 2.0], [0.5, 0.4], "probabilities"),  # sums to 0.9
        ([0.0, 1.0, 2.0], [0.5, np.nan], "probabilities"),
    ],
)
def test_distribution_rejects_bad_input(edges, probabilities, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}'") as raised:
        Distribution(edges, probabilities)
    assert isinstance(raised.value, DPDistError)


# ---------------------------------------------------------------- FrequencyEstimate
def test_confidence_interval_uses_the_normal_quantile():
    estimate = FrequencyEstimate([0.5, 0.3, 0.2], n=100, variance=[0.04, 0.01, 0.0025])
    interval = estimate.confidence_interval(0.9)
    half = stats.norm.ppf(0.95) * np.array([0.2, 0.1, 0.05])
    np.testing.assert_allclose(interval.low, estimate.frequencies - half, rtol=1e-12)
    np.testing.assert_allclose(interval.high, estimate.frequencies + half, rtol=1e-12)
    np.testing.assert_allclose(estimate.standard_error, [0.2, 0.1, 0.05])


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_confidence_interval_covers_the_truth_at_its_level(level):
    # GRR estimates are nearly normal at n = 20000; 400 runs x 5 items = 2000 intervals.
    # The coverage's standard error is sqrt(level (1 - level) / 2000) <= 0.009; we allow
    # 5 of them (0.045 at level 0.8, 0.025 at 0.95) around the nominal level.
    protocol = local.make("grr", epsilon=1.0, domain_size=5)
    values = np.repeat(np.arange(5), [8000, 6000, 3000, 2000, 1000])
    truth = np.bincount(values) / values.size
    rng = np.random.default_rng(12)
    covered = []
    for _ in range(400):
        interval = protocol.estimate(protocol.simulate(values, rng=rng)).confidence_interval(level)
        covered.append((interval.low <= truth) & (truth <= interval.high))
    coverage = np.mean(covered)
    tolerance = 5 * np.sqrt(level * (1 - level) / 2000)
    assert abs(coverage - level) < tolerance


def test_top_k_orders_by_estimate_with_ties_by_item():
    estimate = FrequencyEstimate([0.1, 0.3, 0.3, -0.05, 0.35], n=10, variance=0.01)
    top = estimate.top_k(3)
    np.testing.assert_array_equal(top.items, [4, 1, 2])
    np.testing.assert_allclose(top.frequencies, [0.35, 0.3, 0.3])
    np.testing.assert_array_equal(estimate.top_k(5).items, [4, 1, 2, 0, 3])


def test_frequency_estimate_fields_and_immutability():
    estimate = FrequencyEstimate(np.array([0.6, 0.4]), n=7.0, variance=0.5, epsilon=1.0, protocol="grr")
    assert estimate.n == 7 and isinstance(estimate.n, int)
    assert estimate.domain_size == 2
    np.testing.assert_array_equal(estimate.variance, [0.5, 0.5])
    assert estimate.frequencies.dtype == np.float64
    with pytest.raises(ValueError):
        estimate.frequencies[0] = 1.0
    assert "grr" in repr(estimate) and "domain_size=2" in repr(estimate)


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, True, "0.9", None])
def test_confidence_interval_rejects_bad_level(level):
    estimate = FrequencyEstimate([0.5, 0.5], n=2, variance=0.1)
    with pytest.raises(InvalidParameterError, match="'level'"):
        estimate.confidence_interval(level)


@pytest.mark.parametrize("k", [0, 4, 1.0, True, "2"])
def test_top_k_rejects_bad_k(k):
    estimate = FrequencyEstimate([0.5, 0.3, 0.2], n=2, variance=0.1)
    with pytest.raises(InvalidParameterError, match="'k'"):
        estimate.top_k(k)


def test_constructor_and_method_arguments_are_validated():
    from dpdist.errors import InvalidParameterError as Invalid

    with pytest.raises(Invalid, match="'size'"):
        Distribution.uniform_bins([0.5, 0.5]).sample(-1, rng=0)
    with pytest.raises(Invalid, match="'cdf_values'"):
        Distribution.from_cdf([0.0, 0.5, 1.0], [0.0, 0.7, 0.6])
    with pytest.raises(Invalid, match="'frequencies'"):
        FrequencyEstimate(frequencies=np.zeros((2, 2)), n=3, variance=0.0)
    with pytest.raises(Invalid, match="'variance'"):
        FrequencyEstimate(frequencies=[0.5, 0.5], n=3, variance=[-1.0, 0.0])
    with pytest.raises(Invalid, match="'n'"):
        FrequencyEstimate(frequencies=[0.5, 0.5], n=7.5, variance=0.0)


def test_the_displayed_density_has_only_the_peaks_its_band_supports():
    """An estimate of one peak with wiggles of noise drew a density with several peaks on the
    display's 40 bins; with a simultaneous band wider than the wiggles it draws one, the mass kept, nearer the smooth
    truth; a band that excludes the valley between two peaks keeps both; without a band it is drawn as it is and says
    so."""
    from dpdist.estimates import CDFBand

    edges = np.linspace(0.0, 1.0, 1025)
    smooth = stats.norm.cdf(edges, 0.4, 0.1)
    smooth = (smooth - smooth[0]) / (smooth[-1] - smooth[0])
    wiggly = np.maximum.accumulate(np.clip(smooth + 0.012 * np.sin(70 * edges) * np.sin(np.pi * edges), 0, 1))
    wiggly[-1] = 1.0
    estimate = Distribution(edges, np.diff(wiggly))
    shown = estimate.display_density()
    assert shown["peaks"] is None and "peaks are not checked" in shown["method"] and _peaks(shown["density"]) >= 3
    banded = dataclasses.replace(estimate, band=CDFBand.around(edges, wiggly, 0.02, 0.04, level=0.95, replicates=100,
                                                                method="test"))
    drawn = banded.display_density()
    density, display = np.asarray(drawn["density"]), np.asarray(drawn["edges"])
    assert _peaks(density) == drawn["peaks"] == 1 and "the 1 peak its 95% simultaneous band supports" in drawn["method"]
    assert np.sum(density * np.diff(display)) == pytest.approx(1) and drawn["bins"] == 40
    cdf = np.r_[0.0, np.cumsum(density * np.diff(display))]  # inside the band
    band = banded.band
    assert np.all(cdf >= np.interp(display, edges, band.simultaneous_lower) - 1e-9)
    assert np.all(cdf <= np.interp(display, edges, band.simultaneous_upper) + 1e-9)
    truth = np.diff(np.interp(display, edges, smooth)) / np.diff(display)
    assert np.abs(density - truth).sum() < np.abs(np.asarray(shown["density"]) - truth).sum()
    two = 0.5 * smooth + 0.5 * np.clip((edges - 0.75) / 0.1, 0, 1)
    narrow = dataclasses.replace(Distribution(edges, np.diff(two)),
                                 band=CDFBand.around(edges, two, 0.005, 0.01, level=0.95, replicates=100, method="test"))
    assert narrow.display_density()["peaks"] == 2 == _peaks(narrow.display_density()["density"])


def _peaks(density) -> int:
    """Local maxima of a step density (a plateau once, equal within 1e-9 of the highest; an end above its neighbour)."""
    density = np.asarray(density)
    steps = density[np.r_[True, np.abs(np.diff(density)) > 1e-9 * density.max()]]
    return int((np.r_[True, steps[1:] > steps[:-1]] & np.r_[steps[:-1] > steps[1:], True]).sum())


@pytest.mark.parametrize("x", ["a", None, 10**309, [0.2, np.nan]])
@pytest.mark.parametrize("method", ["cdf", "pdf"])
def test_cdf_and_pdf_refuse_what_is_not_finite_numbers_naming_x(distribution, method, x):
    with pytest.raises(InvalidParameterError, match=rf"'x' parameter of Distribution\.{method} must be a finite float"):
        getattr(distribution, method)(x)
