"""Every central release succeeds or fails on public inputs only, once its caller has said
what a missing value is.

A refusal is an output: if a release raised for one data set and not for a neighbour, the
exception would tell them apart with certainty.  So each release below must return a result
for any data (empty, one record, many, values outside the bounds, missing values with a stated
``missing=`` policy) and for every epsilon of :data:`dpdist._validation.CENTRAL_EPSILON`; only
public arguments may be refused.  The one refusal that depends on the data is a missing value
when no policy was stated (``missing="refuse"``, the default: dpdist._missing), raised to the
curator before anything is released, with no count in its message.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import central
from dpdist._validation import CENTRAL_EPSILON
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError, InvalidValueTypeError, OutOfDomainError

from central_releases import BOUNDS, RELEASES, REPLACE, check_result as _check_result, output as _output


#: Releases whose high end runs in the full suite only.  The tree's quantiles there are 6.5 CPU-s (the shape rule
#: takes 2**20 leaves, and the intervals push 200 noise trees of that size through consistency); the fast loop
#: releases the same tree at the high end through TreeHistogram.release.  The histogram's variants, cdf and
#: tree_cdf's size rule and replace neighbours are 0.3-0.7 CPU-s each there (bins by the million); the fast loop
#: keeps the default histogram at the high end, every one of them at the low end.
HIGH_END_IN_THE_FULL_SUITE = {"quantiles tree", "histogram_queries add-remove", "histogram_queries norm-sub",
                              "histogram_queries isotonic", "cdf", "tree_cdf size rule", "tree_cdf replace"}


def _both_ends() -> list:
    return [
        pytest.param(name, epsilon, id=f"{epsilon}-{name}",
                     marks=[pytest.mark.slow] if epsilon == CENTRAL_EPSILON.high and name in HIGH_END_IN_THE_FULL_SUITE
                     else [])
        for epsilon in (CENTRAL_EPSILON.low, CENTRAL_EPSILON.high)
        for name in sorted(RELEASES)
    ]


@pytest.mark.parametrize("name, epsilon", _both_ends())
def test_every_release_accepts_both_ends_of_the_stated_epsilon_range(name, epsilon):
    # 1e-6 used to fail in seven releases: a split budget's step fell below the samplers' 2**-20 resolution
    x = np.random.default_rng(0).beta(2, 5, 500)
    _check_result(RELEASES[name](x, epsilon))


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("epsilon", [float("nan"), float("inf"), 1e308, 0.0, -1.0, 1e-7, "1"])
def test_an_epsilon_outside_the_range_is_a_named_privacy_error(name, epsilon):
    # polynomial_projection(epsilon=nan | inf) raised a raw ValueError / OverflowError from its default degree rule
    from dpdist.errors import InvalidPrivacyParameterError

    with pytest.raises(InvalidPrivacyParameterError, match="'epsilon'"):
        RELEASES[name]([0.2, 0.5], epsilon)


DATA = {
    "no records": np.array([]),
    "one record": np.array([0.5]),
    "many records": np.random.default_rng(1).beta(2, 5, 50_000),
    "values outside the bounds": np.array([-1.0, 0.3, 2.0, np.inf, -np.inf, np.nan, 0.7, 1.0 + 1e-12]),
}


@pytest.mark.filterwarnings("ignore::dpdist.errors.MissingValuesWarning")  # the count, said to the curator
@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("data", sorted(DATA))
def test_every_release_returns_a_result_whatever_the_data(name, data):
    # cdf([]) raised while cdf([0.5]) released, JointExp's memory guard read the private n,
    # and values outside the bounds were refused unless clip=True was passed; a missing value is counted as the
    # lower bound here, as the curator said (missing=0.0)
    _check_result(RELEASES[name](DATA[data], 1.0, missing=0.0))


@pytest.mark.filterwarnings("ignore::dpdist.errors.MissingValuesWarning")
@pytest.mark.parametrize("name", sorted(set(RELEASES) - {"polynomial_projection secure"}))  # secure: no seed
def test_the_default_clips_into_the_bounds_and_a_missing_value_is_the_value_said(name):
    x = DATA["values outside the bounds"]
    clipped = np.array([0.0, 0.3, 1.0, 1.0, 0.0, 0.0, 0.7, 1.0])
    missing = 0.0
    if name == "unbounded_quantile":  # no upper bound: -inf (and a value below lower=0) below every candidate
        clipped, missing = np.where(np.isnan(x), -1.0, x), -1.0
    np.testing.assert_array_equal(_output(RELEASES[name](x, 1.0, missing=missing)), _output(RELEASES[name](clipped, 1.0)))


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_missing_value_is_refused_by_default_before_anything_is_released_and_without_its_count(name):
    """NaN became the lower bound in silence (5,000 NaN beside 1,000 U(0, 10): median 0.0035)."""
    from dpdist.errors import MissingValuesError

    x = np.array([0.2, np.nan, 0.5, None, 0.7], dtype=object)
    with pytest.raises(MissingValuesError, match="'x' argument") as refused:
        RELEASES[name](x, 1.0)
    assert refused.value.count == 2 and "2" not in str(refused.value)  # the count for the curator, in no message
    _check_result(RELEASES[name](x[[0, 2, 4]].astype(float), 1.0))  # without them: released


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_drop_is_refused_under_replace_neighbours_whatever_the_data_and_leaves_records_out_under_add_remove(name):
    from dpdist.errors import InvalidParameterError, MissingValuesWarning

    with_nan, without = np.array([0.2, np.nan, 0.5, 0.7]), np.array([0.2, 0.5, 0.7])
    if name in REPLACE:
        for x in (with_nan, without):  # a public refusal: the same with or without a missing value
            with pytest.raises(InvalidParameterError, match="'missing' option .* cannot be 'drop' under replace"):
                RELEASES[name](x, 1.0, missing="drop")
        return
    with pytest.warns(MissingValuesWarning) as warned:
        dropped = RELEASES[name](with_nan, 1.0, missing="drop")
    (said,) = [w.message for w in warned if issubclass(w.category, MissingValuesWarning)]
    assert said.count == 1 and "1 missing" not in str(said)
    np.testing.assert_array_equal(_output(dropped), _output(RELEASES[name](without, 1.0)))
    if not isinstance(dropped, float):  # the statement says the policy, whatever the data held
        note = "records without a value were left out before the release, if there were any"
        assert any(note in text for text in dropped.notes())
        assert any(note in text for text in RELEASES[name](without, 1.0, missing="drop").notes())


def test_clip_is_the_default_of_every_release():
    import inspect

    functions = [
        central.histogram_queries, central.adaptive_quantiles, central.polynomial_projection,
        central.PolynomialMoments.release, central.matching_pursuit, central.cdf, central.tree_cdf,
        central.TreeHistogram.release, central.quantiles,
    ]
    for function in functions:
        assert inspect.signature(function).parameters["clip"].default is True, function.__qualname__


def test_a_release_of_no_records_is_the_noise_alone():
    # the mechanism run on no records: the noisy counts of zeros (here the histogram's, under replacement
    # neighbours, where n = 0 is public and released)
    empty = central.histogram_queries([], 1.0, BOUNDS, bins=4, rng=3, postprocess="norm-sub")
    assert empty.n == 0 and empty.details["bins"] == 4
    merged = central.PolynomialMoments.release([], 1.0, 1e-6, BOUNDS, 4, rng=1) + central.PolynomialMoments.release(
        [0.2, 0.4], 1.0, 1e-6, BOUNDS, 4, rng=2
    )
    alone = central.PolynomialMoments.release([0.2, 0.4], 1.0, 1e-6, BOUNDS, 4, rng=2)
    np.testing.assert_allclose(merged.moments, alone.moments)  # an empty site carries no weight
    assert merged.n == 2 and merged.epsilon == 1.0


@pytest.mark.parametrize(
    "function,kwargs,error",
    [
        ("histogram_queries", {"bins": 0}, InvalidParameterError),
        ("histogram_queries", {"epsilon": float("inf")}, InvalidPrivacyParameterError),
        ("histogram_queries", {"postprocess": "median"}, InvalidParameterError),
        ("histogram_queries", {"neighbouring": "swap"}, InvalidParameterError),
        ("histogram_queries", {"x": [[0.1]]}, InvalidValueTypeError),
        ("histogram_queries", {"x": ["a"]}, InvalidValueTypeError),
        ("adaptive_quantiles", {"iterations": 0}, InvalidParameterError),
        ("adaptive_quantiles", {"x": [-0.1], "clip": False}, OutOfDomainError),
        ("adaptive_quantiles", {"rng": -1}, InvalidParameterError),
    ],
)
def test_bad_input_raises_a_named_error(function, kwargs, error):
    count = "bins" if function == "histogram_queries" else "iterations"
    arguments = {"x": [0.2, 0.4], "epsilon": 1.0, "bounds": (0, 1), count: 4, "rng": 0}
    arguments.update(kwargs)
    with pytest.raises(error):
        getattr(central, function)(**arguments)


def test_clip_true_clips_without_releasing_how_many():
    dist = central.histogram_queries([-1.0, 0.5, 3.0], 1.0, (0, 1), 4, rng=0)  # clip=True is the default
    assert dist.cdf(1.0) == 1.0
    # the number of clipped values is an un-noised count of the data: never released
    assert "clipped" not in dist.details


def test_add_remove_histogram_does_not_release_the_number_of_records():
    dist = central.histogram_queries([0.1, 0.5, 0.7], 1.0, (0, 1), 4, rng=0, neighbouring="add-remove")
    assert dist.n is None
    assert central.histogram_queries([0.1, 0.5, 0.7], 1.0, (0, 1), 4, rng=0).n == 3


@pytest.mark.parametrize("bad", [123456.789, float("nan")])
def test_out_of_domain_errors_quote_no_record_and_no_count(bad):
    # a central release refuses bad data without printing a raw record or an un-noised count
    from dpdist import central

    x = np.concatenate([np.random.default_rng(0).random(50), [bad, bad, bad]])
    for release in (central.cdf, central.histogram_queries, central.adaptive_quantiles):
        with pytest.raises(OutOfDomainError, match="'x'") as error:  # the strict mode; the default clips
            release(x, 1.0, (0, 1), rng=0, clip=False)
        assert "123456" not in str(error.value) and "nan" not in str(error.value) and "3" not in str(error.value)


#: Every release that takes bounds, called with ``bounds=None``.
WITHOUT_BOUNDS = {
    "cdf": lambda x: central.cdf(x, 1.0, bounds=None),
    "tree_cdf": lambda x: central.tree_cdf(x, 1.0, bounds=None),
    "TreeHistogram.release": lambda x: central.TreeHistogram.release(x, 1.0, bounds=None),
    "quantiles": lambda x: central.quantiles(x, 1.0, bounds=None),
    "quantiles aq": lambda x: central.quantiles(x, 1.0, bounds=None, method="aq"),
    "adaptive_quantiles": lambda x: central.adaptive_quantiles(x, 1.0, bounds=None),
    "histogram_queries": lambda x: central.histogram_queries(x, 1.0, bounds=None),
    "matching_pursuit": lambda x: central.matching_pursuit(x, 1.0, bounds=None),
    "polynomial_projection": lambda x: central.polynomial_projection(x, 1.0, 1e-6, bounds=None),
    "PolynomialMoments.release": lambda x: central.PolynomialMoments.release(x, 1.0, 1e-6, None, 4),
}


@pytest.mark.parametrize("name", WITHOUT_BOUNDS)
def test_missing_bounds_are_a_named_error(name):
    """central.cdf(x, epsilon=1, bounds=None) raised a bare 'TypeError: cannot unpack non-iterable
    NoneType object'; every release that takes bounds names the argument, the value and what is allowed."""
    with pytest.raises(InvalidParameterError) as refused:
        WITHOUT_BOUNDS[name]([0.2, 0.4])
    message = str(refused.value)
    assert "The 'bounds' parameter of " in message and "must be a pair (lo, hi)" in message, message
    assert "Got None instead" in message, message


def test_count_and_unbounded_quantile_take_no_bounds():
    assert central.count([0.2, 0.4], 1.0, rng=1) is not None
    assert central.unbounded_quantile([0.2, 0.4], 1.0, rng=1) is not None


@pytest.mark.parametrize("name", sorted(set(RELEASES) - {"unbounded_quantile", "polynomial_projection secure"}))
def test_a_seeded_release_says_so_in_its_notes_and_its_json(name):
    """a release with rng=<int> was indistinguishable from one of the CSPRNG in notes() and to_dict();
    only the CLI marked a seed. (unbounded_quantile returns a float; secure=True takes no seed.)"""
    from dpdist.central._common import SEEDED_NOTE

    seeded = RELEASES[name](np.linspace(0.1, 0.9, 40), 1.0)  # rng=1
    assert SEEDED_NOTE in seeded.notes() and SEEDED_NOTE in seeded.to_dict()["notes"]
    assert "NOT for publication" in SEEDED_NOTE


def test_a_release_from_the_csprng_has_no_seeded_note():
    from dpdist.central._common import SEEDED_NOTE

    for release in (central.cdf([0.2, 0.4], 1.0, BOUNDS), central.quantiles([0.2, 0.4], 1.0, BOUNDS, method="aq"),
                    central.count([0.2, 0.4], 1.0)):
        assert SEEDED_NOTE not in release.notes() and SEEDED_NOTE not in release.to_dict()["notes"]
    assert SEEDED_NOTE in central.count([0.2, 0.4], 1.0, rng=np.random.default_rng(3)).notes()  # a generator too
