"""Safe defaults (CSPRNG, no raw noisy float), the supported epsilon range, bool and bounds checks."""

import numpy as np
import pytest
from randomgen import AESCounter

from dpdist import central, local
from dpdist._rng import check_rng
from dpdist.central.noise import secure_grid_step
from conformance._examples import EXAMPLES
from dpdist.local._registry import registered_class
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError

X = np.random.default_rng(0).beta(2, 5, 400)


# ---------------------------------------------------------------- item 8: CSPRNG when no seed, grid in every mode
def test_no_seed_means_the_csprng():
    assert isinstance(check_rng(None).bit_generator, AESCounter)
    assert isinstance(check_rng(3).bit_generator, np.random.PCG64)  # a seed stays available for research


@pytest.mark.parametrize("rng", [None, 11], ids=["default", "seeded"])
def test_matching_pursuit_coefficients_lie_on_the_public_grid(rng):
    # the attack of the issue replayed NumPy's Laplace sampler on details["coefficients"]
    dist = central.matching_pursuit(X, 1.0, (0, 1), "legendre", 12, 4, rng=rng)
    steps = [secure_grid_step(s) for s in np.array(dist.details["sensitivity"])[dist.details["selected_index"]]]
    ratios = np.array(dist.details["coefficients"]) / np.array(steps)
    np.testing.assert_array_equal(ratios, np.round(ratios))


@pytest.mark.parametrize("rng", [None, 11], ids=["default", "seeded"])
def test_polynomial_moments_lie_on_the_public_grid(rng):
    release = central.PolynomialMoments.release(X, 1.0, 1e-6, (0, 1), 6, rng=rng)
    step = secure_grid_step(release.releases[0]["sensitivity_l2"])
    np.testing.assert_array_equal(release.moments / step, np.round(release.moments / step))


@pytest.mark.parametrize("rng", [None, 11], ids=["default", "seeded"])
def test_counts_are_integers_in_every_mode(rng):
    tree = central.TreeHistogram.release(X, 1.0, (0, 1), rng=rng)
    assert all(level.dtype == np.int64 for level in tree.levels)
    dist = central.adaptive_quantiles(X, 1.0, (0, 1), 5, rng=rng)
    assert dist.details["secure"] is False


# ---------------------------------------------------------------- item 9: the supported epsilon range
@pytest.mark.parametrize("epsilon", [1e308, 5e-324, 1e-300, 1e13, 1e-7])
@pytest.mark.parametrize("secure", [False, True])
def test_central_epsilon_outside_the_supported_range_is_refused(epsilon, secure):
    with pytest.raises(InvalidPrivacyParameterError, match=r"'epsilon'.*>= 1e-06 and <= 1e\+12"):
        central.histogram_queries(X, epsilon, (0, 1), 8, secure=secure)
    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        central.polynomial_projection(X, epsilon, 1e-6, (0, 1), 4, secure=secure)


@pytest.mark.parametrize("epsilon", [1e-6, 1e12])
def test_central_epsilon_at_the_ends_of_the_range_works(epsilon):
    for secure in (False, True):
        dist = central.histogram_queries(X, epsilon, (0, 1), 8, secure=secure)
        assert np.all(np.isfinite(dist.cumulative))
        release = central.PolynomialMoments.release(X, epsilon, 1e-6, (0, 1), 4, secure=secure)
        assert np.all(np.isfinite(release.moments))


@pytest.mark.parametrize("name", local.available())
@pytest.mark.parametrize("epsilon", [700.0, 1e308, 1e-300, 1e-12, 5e-324, 31.0])
def test_local_epsilon_outside_the_supported_range_is_refused(name, epsilon):
    params = dict(EXAMPLES[name][0], epsilon=epsilon)
    low = registered_class(name)._constraints["epsilon"].low  # SPL names its narrower range (epsilon / k each)
    with pytest.raises(InvalidPrivacyParameterError, match=rf"'epsilon'.*>= {low:g} and <= 30"):
        local.make(name, **params)


# that every protocol runs at both ends of the range and gives a finite estimate there: tests/conformance/test_epsilon_range.py


# ---------------------------------------------------------------- item 10: secure is a bool, bounds have a finite width
@pytest.mark.parametrize("secure", ["no", "yes", 1, None])
def test_secure_must_be_a_bool(secure):
    with pytest.raises(InvalidParameterError, match="'secure'"):
        local.make("grr", epsilon=1.0, domain_size=4).privatize([0, 1], secure=secure)
    with pytest.raises(InvalidParameterError, match="'secure'"):
        central.histogram_queries(X, 1.0, (0, 1), 8, secure=secure)


def test_bounds_need_a_finite_width():
    with pytest.raises(InvalidParameterError, match="'bounds'.*finite width"):
        local.make("sw", epsilon=1.0, bounds=(-1e308, 1e308))
    with pytest.raises(InvalidParameterError, match="'bounds'.*finite width"):
        central.histogram_queries(X, 1.0, (-1e308, 1e308), 8)


# ---------------------------------------------------------------- item 8: privatize with no seed, Python and CLI
def _count_csprng_streams(monkeypatch):
    import dpdist._rng as rng_module

    calls = []
    original = rng_module.secure_generator

    def counting():
        calls.append(1)
        return original()

    monkeypatch.setattr(rng_module, "secure_generator", counting)
    return calls


def test_privatize_without_a_seed_uses_the_csprng(monkeypatch):
    calls = _count_csprng_streams(monkeypatch)
    local.make("oue", epsilon=1.0, domain_size=8).privatize(np.arange(8))
    assert calls


def test_cli_privatize_without_a_seed_uses_the_csprng(tmp_path, monkeypatch, capsys):
    import json

    from dpdist import io
    from dpdist.cli import main

    (tmp_path / "data.csv").write_text("value\n" + "\n".join(str(i % 4) for i in range(50)) + "\n")
    config = json.dumps({"protocol": "grr", "epsilon": 1.0, "domain_size": 4})
    calls = _count_csprng_streams(monkeypatch)
    out = tmp_path / "r.bin"
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.csv"),
                 "--out", str(out), "--block-size", "20", "--no-progress"]) == 0
    assert len(calls) == 4 and io.count_reports(out) == 50  # one CSPRNG stream per block, one for the order
    calls.clear()
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.csv"),
                 "--out", str(out), "--seed", "4", "--no-progress"]) == 0
    assert not calls  # a seed: reproducible PCG64 blocks
