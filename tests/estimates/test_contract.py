"""The result contract: every estimate meets dpdist.estimates.Estimate (its numbers, intervals, JSON, text and
figure), and protocols keep class settings."""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import json
import re
from pathlib import Path

import jsonschema
import matplotlib
import numpy as np
import pytest

import dpdist
from dpdist import central, local, plotting
from dpdist.errors import IncompatibleStateError, InvalidParameterError
from dpdist.estimates import JSON_SCHEMA, Distribution, Estimate, Interval, MeanVarianceEstimate, RangeEstimate
from dpdist.uncertainty import cdf_band

matplotlib.use("Agg")
from dpdist.local.numerical.binning import Binning
from dpdist.local.multi.pripl import pripl_ranges
from dpdist.local.numerical.sw import SquareWave

X = np.random.default_rng(0).beta(2, 5, size=2000)


def _local_estimate(name):
    if name in local.available("frequency"):
        protocol = local.make(name, epsilon=2.0, domain_size=6)
        values = np.random.default_rng(1).integers(0, 6, 2000)
    else:
        protocol = local.make(name, epsilon=2.0)
        values = X
    return protocol.estimate(protocol.aggregator().add(protocol.privatize(values, rng=2)))


def _mean_variance():
    protocol = local.make("pm", epsilon=1.0)
    mean = protocol.estimate(protocol.simulate(X[:1000], rng=1))
    deviation_protocol = protocol.deviation_protocol(mean.mean)
    deviation = deviation_protocol.estimate(deviation_protocol.simulate((X[1000:] - mean.mean) ** 2, rng=2))
    return MeanVarianceEstimate(mean.mean, deviation.mean, mean.mean, mean, deviation)


def _labelled_frequencies():
    protocol = local.make("cp", epsilon=2.0, labels=["snow", "rain", "sun", "fog", "wind", "hail"], measurements=4)
    return protocol.estimate(protocol.simulate(np.random.default_rng(1).integers(0, 6, 2000), rng=2))


def _heavy_hitters():
    # a family of 256 hash functions, not the default 4,096: the same result type and rounds, tables of 0.1 M cells
    # per group instead of 1.65 M (their sampling was 0.3 CPU-s; nothing here depends on the family's size)
    words = ["apple"] * 3000 + ["pear"] * 2000 + [f"w{'abcdefghij'[i % 10]}x" for i in range(3000)]
    return local.heavy_hitters(words, 6.0, k=3, max_chars=6, alphabet="abcdefghijklmnopqrstuvwxyz", hash_count=256,
                               rng=2)


def _distribution_with_band():
    protocol = local.make("hh", epsilon=2.0, bins=16)
    return cdf_band(protocol, protocol.simulate(X, rng=3), replicates=20, rng=4)


def _multi_attribute():
    attributes = [{"name": "colour", "labels": ["red", "green", "blue"]}, {"name": "age", "bounds": [0, 1], "protocol": "pm"},
                  {"name": "x", "bounds": [0, 1], "protocol": "binning", "options": {"bins": 8}}]
    protocol = local.make("spl", epsilon=3.0, attributes=attributes)
    rng = np.random.default_rng(1)
    return protocol.estimate(protocol.simulate({"colour": rng.integers(0, 3, 2000), "age": X, "x": X}, rng=2))


def _marginals():
    attributes = [{"name": "a", "domain_size": 3}, {"name": "b", "labels": ["x", "y"]}, {"name": "c", "domain_size": 2}]
    protocol = local.make("calm", epsilon=2.0, attributes=attributes)
    return protocol.estimate(protocol.simulate(np.random.default_rng(1).integers(0, 2, (3000, 3)), rng=2))


_x = np.random.default_rng(1).beta(2, 5, 4000)
RANGE_RECORDS = {"x": _x, "y": np.clip(_x + np.random.default_rng(2).normal(0, 0.1, 4000), 0, 1),
                 "z": np.random.default_rng(3).random(4000)}


def _ranges():
    attributes = [{"name": name, "bounds": [0, 1]} for name in RANGE_RECORDS]
    return pripl_ranges(RANGE_RECORDS, epsilon=2.0, attributes=attributes, rng=2, resolution=16)


def _key_value():
    from dpdist.local.keyvalue import KeyValueSets

    rng = np.random.default_rng(1)
    keys = rng.integers(0, 5, 3000)
    protocol = local.make("pckv-ue", epsilon=2.0, domain_size=5)
    return protocol.estimate(protocol.simulate(KeyValueSets(keys, rng.uniform(-1, 1, 3000), np.ones(3000, int)), rng=2))


RESULTS = {
    "ranges": _ranges,
    "multi-attribute": _multi_attribute,
    "key-value": _key_value,
    "marginals": _marginals,
    "frequency": lambda: _local_estimate("oue"),
    "frequency (labels, no intervals)": _labelled_frequencies,
    "heavy hitters": _heavy_hitters,
    "distribution (local)": lambda: _local_estimate("sw"),
    "distribution (local, with a band)": _distribution_with_band,
    "mean": lambda: _local_estimate("pm"),
    "mean and variance": _mean_variance,
    "distribution (central)": lambda: central.histogram_queries(X, 1.0, (0.0, 1.0), 16, rng=0),
    "quantiles (tree)": lambda: central.quantiles(X, [0.1, 0.5, 0.9], epsilon=1.0, bounds=(0.0, 1.0), rng=0),
    "quantiles (aq)": lambda: central.quantiles(X, [0.5], epsilon=1.0, bounds=(0.0, 1.0), method="aq", rng=0),
    "tree histogram": lambda: central.TreeHistogram.release(X, 1.0, (0.0, 1.0), height=2, rng=0),
    "count (per person)": lambda: central.count(X, 1.0, rng=0, privacy_id=np.arange(X.size) % 50, max_contributions=40),
    "sum (per person)": lambda: central.sum(X, 1.0, (0.0, 1.0), rng=0, privacy_id=np.arange(X.size) % 50,
                                            max_contributions=40),
    "mean (central)": lambda: central.mean(X, 1.0, (0.0, 1.0), rng=0),
    "polynomial moments": lambda: central.PolynomialMoments.release(X, 1.0, 1e-6, (0.0, 1.0), 6, rng=0),
}


@functools.cache
def _result(name: str):
    """``RESULTS[name]()``, built once for the module's tests: each is seeded and no test changes one."""
    return RESULTS[name]()


@pytest.fixture(scope="module", params=list(RESULTS))
def result(request):
    return _result(request.param)


def test_every_estimate_meets_the_result_protocol(result):
    assert isinstance(result, Estimate)
    assert isinstance(result.method, str) and result.epsilon > 0 and isinstance(result.details, dict)
    assert result.guarantee is not None and result.guarantee.epsilon == pytest.approx(result.epsilon)
    summary = result.summary()
    assert summary and all(isinstance(k, str) and np.isfinite(v) for k, v in summary.items())
    columns = result.table()
    lengths = {np.asarray(c).shape for c in columns.values()}
    assert len(lengths) == 1 and len(next(iter(lengths))) == 1, lengths


def test_every_estimate_writes_the_published_json(result):
    """to_dict is plain JSON (no NaN: strict parsers refuse it) and valid under the schema the docs and the
    service's OpenAPI publish; a level asked for reaches the intervals computed on request."""
    document = result.to_dict(0.9)
    jsonschema.Draft202012Validator(JSON_SCHEMA).validate(document)
    assert json.loads(result.to_json(0.9, allow_nan=False)) == json.loads(json.dumps(document, allow_nan=False))
    assert document["kind"] == result.kind and document["method"] == result.method
    assert document["guarantee"] == result.guarantee.to_dict()
    for entry, interval in zip(document["intervals"], result.intervals(0.9)):
        assert entry == interval.to_dict() and entry["level"] in (0.9, getattr(result, "level", None), 0.95)
    with pytest.raises(InvalidParameterError, match="'level'"):
        result.to_dict(1.5)


@pytest.mark.slow  # 2.2 CPU-s: draws every estimate's figures with matplotlib
def test_every_estimate_describes_and_draws_itself(result, tmp_path):
    text = result.describe()
    assert text and all(line.startswith("  ") for line in text.splitlines())
    plotting.save_estimate(result, tmp_path / "estimate.png", label="estimate")
    assert (tmp_path / "estimate.png").read_bytes()[:4] == b"\x89PNG"
    axes = result.plot()
    assert isinstance(axes, matplotlib.axes.Axes)
    matplotlib.pyplot.close("all")


@pytest.mark.slow
def test_every_estimates_figure_is_saved_again_as_svg(result, tmp_path):
    """The figure drawn a second time, by another backend (the whole suite only: the fast loop draws every result's
    figure once, to PNG, in the test above)."""
    figure = result.figure(label="estimate")
    assert figure.axes
    plotting.save_figure(figure, tmp_path / "again.svg")
    assert (tmp_path / "again.svg").read_bytes().lstrip().startswith(b"<?xml")  # save_figure closed the figure


def test_the_service_publishes_the_schema_in_its_openapi_description():
    from dpdist.serve import openapi_schema

    document = openapi_schema()
    schemas = document["components"]["schemas"]
    own = json.dumps({key: value for key, value in JSON_SCHEMA.items() if key != "$schema"})
    assert schemas["EstimateResult"] == json.loads(own.replace('"$ref": "#"', '"$ref": "#/components/schemas/EstimateResult"'))
    refs = [option.get("$ref") for option in schemas["Estimate"]["properties"]["estimate"]["anyOf"]]
    assert "#/components/schemas/EstimateResult" in refs
    # every reference resolves inside the OpenAPI document: the estimate's own "#" (its root) would name the whole
    # document there, which renderers and validators then walk without end
    for target in re.findall(r'"\$ref": "([^"]*)"', json.dumps(document)):
        assert target.startswith("#/components/schemas/") and target.rsplit("/", 1)[1] in schemas, target


def test_the_json_keeps_the_fields_the_service_served():
    """GET .../estimate returned these fields before the results wrote their own JSON; clients read them."""
    fields = {
        "frequency": {"kind", "items", "frequencies", "standard_error", "band", "postprocess"},
        "heavy hitters": {"kind", "items", "labels", "frequencies", "standard_error", "band", "k", "threshold", "rounds"},
        "distribution (local)": {"kind", "edges", "probabilities", "cdf", "mean", "median", "band", "method"},
        "mean": {"kind", "mean", "standard_error", "band"},
        "mean and variance": {"kind", "mean", "var", "mean_standard_error", "var_standard_error", "band"},
    }
    for name, keys in fields.items():
        document = _result(name).to_dict(0.95)
        assert keys <= set(document), (name, keys - set(document))
    frequency = _result("frequency")
    low, high = frequency.confidence_interval(0.8)
    band = frequency.to_dict(0.8)["band"]
    assert band == {"level": 0.8, "low": low.tolist(), "high": high.tolist()}
    assert _result("distribution (local)").to_dict()["band"] is None
    mean = _result("mean")
    assert mean.to_dict()["band"] == {"level": 0.95, **dict(zip(("low", "high"), mean.confidence_interval(0.95)))}


def test_heavy_hitters_intervals_hold_for_every_candidate_at_once():
    """The Bonferroni band over the last round's candidates, which the service drew in its HTTP layer before."""
    from statistics import NormalDist

    found = _result("heavy hitters")
    candidates = found.details["rounds"][-1]["candidates"]
    assert found.candidates == candidates > 1
    low, high = found.confidence_interval(0.95)
    half = NormalDist().inv_cdf(1 - 0.05 / (2 * candidates)) * found.standard_error
    np.testing.assert_allclose(high - low, 2 * half)
    (interval,) = found.intervals(0.95)
    assert interval.simultaneous and interval.quantity == "frequency"
    np.testing.assert_array_equal(interval.at, found.items)
    assert found.to_dict()["band"]["simultaneous_over"] == candidates
    assert found.table()["low"].tolist() == low.tolist() and list(found.table())[:2] == ["item", "label"]


def test_a_band_gives_the_intervals_of_the_cdf_its_quantiles_and_its_mean():
    estimate = _result("distribution (local, with a band)")
    band = estimate.band
    pointwise, simultaneous, quantiles, mean = estimate.intervals()
    assert (pointwise.quantity, simultaneous.quantity, quantiles.quantity, mean.quantity) == (
        "cdf", "cdf", "quantile", "mean")
    assert simultaneous.simultaneous and not pointwise.simultaneous and {pointwise.level, mean.level} == {band.level}
    np.testing.assert_array_equal(pointwise.low, band.lower)
    np.testing.assert_array_equal(simultaneous.high, band.simultaneous_upper)
    np.testing.assert_array_equal(np.array(quantiles.low), band.quantile_interval(quantiles.at)[0])
    assert (mean.low, mean.high) == band.mean_interval() and mean.at is None
    assert "95% [" in estimate.describe() and "bands" in estimate.describe()
    again = Distribution.from_dict(json.loads(estimate.to_json()))
    np.testing.assert_array_equal(again.band.simultaneous_lower, band.simultaneous_lower)
    assert again.guarantee == estimate.guarantee


def test_range_answers_read_back_from_json_and_say_why_they_have_no_interval():
    """A RangeEstimate reads back from its JSON with the same answers; it lists no interval, its answers have infinite
    limits, and its JSON and text say why (an adaptive structure: no analytic variance)."""
    estimate = _result("ranges")
    document = json.loads(estimate.to_json())
    again = RangeEstimate.from_dict(document)
    box = {"x": (0.1, 0.4), "y": (0.2, 0.5), "z": (0.0, 0.5)}
    for query in (box, {"x": (0.1, 0.4)}, {"y": (0.2, 0.5), "x": (0.1, 0.4)}):
        assert again.range(query).estimate == pytest.approx(estimate.range(query).estimate, abs=1e-12)
    assert again.guarantee == estimate.guarantee and again.summary() == pytest.approx(estimate.summary())
    answer = estimate.range(box, level=0.9)
    assert (answer.low, answer.high, answer.level) == (-np.inf, np.inf, 0.9) and "no analytic variance" in answer.method
    assert estimate.intervals(0.9) == () and document["intervals"] == []
    assert "no analytic variance" in document["no_interval"] and "no analytic variance" in estimate.describe()
    assert any(note.startswith("no interval:") and "no analytic variance" in note for note in document["notes"])
    assert estimate.describe().count("no analytic variance") == 1
    assert estimate.as_distribution() is None
    true_mean = float(np.mean(RANGE_RECORDS["x"]))
    assert f"(true {true_mean:.6g})" in estimate.describe(truth=RANGE_RECORDS)
    with pytest.raises(InvalidParameterError, match="'w'"):
        estimate.range({"w": (0, 1)})


_CORRUPT_RANGES = {
    "null in a histogram": (lambda d: d["histograms"][0].__setitem__(0, None), InvalidParameterError, "no null"),
    "negative frequency": (lambda d: d["histograms"][0].__setitem__(0, -5.0), InvalidParameterError, "non-negative"),
    "reversed bounds": (lambda d: d["attributes"][0].__setitem__("bounds", [1, 0]), InvalidParameterError, "low < high"),
    "histogram sums to 5": (lambda d: d["histograms"].__setitem__(0, [5.0 / 16] * 16), InvalidParameterError, "sum of 5"),
    "wrong resolution": (lambda d: d.__setitem__("resolution", 10), InvalidParameterError, r"shape \(10,\)"),
    "short histogram": (lambda d: d["histograms"].__setitem__(0, [1.0]), InvalidParameterError, r"shape \(16,\)"),
    "matrix of the wrong shape": (lambda d: d["matrices"][0].__setitem__("matrix", [[1.0]]), InvalidParameterError,
                                  r"matrices\[0\]"),
    "negative matrix entry": (lambda d: d["matrices"][0]["matrix"][0].__setitem__(0, -0.5), InvalidParameterError,
                              "non-negative"),
    "kind frequency": (lambda d: d.__setitem__("kind", "frequency"), IncompatibleStateError, "kind='frequency'"),
    "no no_interval": (lambda d: d.pop("no_interval"), IncompatibleStateError, "no_interval"),
    "unknown pair": (lambda d: d["matrices"][0].__setitem__("attributes", ["x", "w"]), InvalidParameterError, "'w'"),
    "epsilon -1": (lambda d: d.__setitem__("epsilon", -1), InvalidParameterError, "'epsilon'"),
}


@pytest.mark.parametrize("case", sorted(_CORRUPT_RANGES))
def test_a_corrupt_range_document_is_refused_naming_the_field(case):
    """From_dict read these back (NaN answers from a null, a histogram summing to 5, ...)."""
    mutate, error, match = _CORRUPT_RANGES[case]
    document = json.loads(_result("ranges").to_json())
    RangeEstimate.from_dict(copy.deepcopy(document))  # the untouched document reads back
    mutate(document)
    with pytest.raises(error, match=match):
        RangeEstimate.from_dict(document)


def test_a_release_presents_the_distribution_it_releases():
    tree = _result("tree histogram")
    document = tree.to_dict(0.9)
    assert document["kind"] == "distribution" and document["band"]["level"] == 0.9 and document["method"] == "tree"
    assert tree.summary() == tree.to_distribution().summary() and tree.leaf_cdf()[0].size == 257
    # the 256 leaves' edges, and knots around the leaves read as holding an atom (central._atoms)
    distribution = tree.as_distribution()
    assert np.isin(tree.leaf_cdf()[0], distribution.edges).all()
    assert 256 + 2 * distribution.details["atoms"] <= distribution.bins <= 256 + 3 * distribution.details["atoms"]
    moments = _result("polynomial moments")
    assert moments.to_dict()["band"] is None and moments.n == X.size and moments.intervals() == ()


def test_an_interval_is_checked_and_missing_limits_are_null():
    with pytest.raises(InvalidParameterError, match="'level'"):
        Interval("mean", 0.5, 0.4, 0.6, 1.0, "test")
    with pytest.raises(InvalidParameterError, match="shape"):
        Interval("frequency", np.zeros(3), np.zeros(3), np.zeros(2), 0.9, "test", at=np.arange(3))
    entry = Interval("frequency", np.zeros(2), np.array([-np.inf, 0.0]), np.array([np.inf, 1.0]), 0.9, "test",
                     at=np.arange(2)).to_dict()
    assert entry["low"] == [None, 0.0] and entry["high"] == [None, 1.0] and entry["at"] == [0, 1]
    labelled = _result("frequency (labels, no intervals)")  # CP with fewer measurements than items
    assert not labelled.has_intervals
    document = labelled.to_dict()  # why, instead of an interval
    assert document["no_interval"] == labelled.details["no_interval"] and document["band"]["low"] == [None] * 6
    assert document["labels"][:2] == ["snow", "rain"] and labelled.details["no_interval"] in labelled.describe()


def test_the_views_of_an_estimate_as_a_distribution():
    frequency = local.make("oue", epsilon=2.0, domain_size=4)
    estimate = frequency.estimate(frequency.simulate(np.arange(400) % 4, rng=0), postprocess="norm-sub")
    binned = estimate.as_distribution((0.0, 8.0))
    np.testing.assert_array_equal(binned.edges, [0.0, 2.0, 4.0, 6.0, 8.0])
    assert binned.method == "oue-binning" and binned.guarantee == estimate.guarantee
    with pytest.raises(InvalidParameterError, match="'bounds'"):
        estimate.as_distribution()
    distribution = _result("distribution (central)")
    assert distribution.as_distribution() is distribution and _result("mean").as_distribution() is None
    with pytest.raises(InvalidParameterError, match="'bounds'"):
        distribution.as_distribution((0.0, 2.0))


def test_released_quantiles_as_a_distribution_have_those_quantiles():
    # it returned None: the CDF through the released quantiles, linear between them
    x = np.random.default_rng(3).gamma(2.0, 10.0, 4000)
    q = np.array([0.1, 0.5, 0.9])
    releases = [central.quantiles(x, q, epsilon=1.0, bounds=(0, 200), method=method, rng=1)
                for method in ("tree", "aq", "jointexp", "slice")]
    releases.append(local.adaptive_quantiles(x, q, epsilon=2.0, bounds=(0, 200), rng=1))
    for release in releases:
        distribution = release.as_distribution()
        assert isinstance(distribution, Distribution) and distribution.bounds == (0.0, 200.0), release.method
        np.testing.assert_allclose(distribution.quantile(q), release.values, atol=1e-9)
        np.testing.assert_allclose(distribution.cdf(release.values), q, atol=1e-9)
        assert distribution.guarantee == release.guarantee and distribution.method == release.method
    assert releases[0].as_distribution((0, 400)).bounds == (0.0, 400.0)
    tied = Distribution.from_quantiles([0.2, 0.5, 0.8], [0.0, 3.0, 3.0], (0, 10))  # ties and a value at a bound
    np.testing.assert_array_equal(tied.edges, [0.0, 3.0, 10.0])
    np.testing.assert_allclose(tied.cdf([3.0, 10.0]), [0.8, 1.0])
    bare = dataclasses.replace(releases[0], details={})  # a release that does not record its bounds
    with pytest.raises(InvalidParameterError, match="'bounds' parameter of QuantileRelease.as_distribution"):
        bare.as_distribution()


# ---------------------------------------------------------------------- no switch on result types
#: The places that present estimates: none of them asks which result it holds.
PRESENTATION = ("cli", "serve", "experiments", "frame", "demo", "metrics", "plotting.py")
#: The kinds of result (``Estimate.kind``, the ``kind`` of their JSON).
RESULT_KINDS = {"frequency", "heavy_hitters", "distribution", "mean", "mean_variance", "quantiles", "multi", "marginals",
                "ranges", "key_value", "count", "scalar"}
#: Fields of results whose presence would tell their kind apart.
RESULT_FIELDS = {"kind", "labels", "frequencies", "band", "n", "guarantee", "item_names", "edges", "probabilities", "mean"}
#: Where a ``kind`` is compared that is not a result's: an accuracy explanation's (a protocol's kind).
OTHER_KINDS = {"serve/_explain_words.py"}
RESULT_TYPES = {"FrequencyEstimate", "Distribution", "MeanEstimate", "MeanVarianceEstimate", "HeavyHitters",
                "QuantileRelease", "TreeHistogram", "PolynomialMoments", "CDFBand", "RangeEstimate", "KeyValueEstimate",
                "CountRelease", "ScalarRelease"}


def test_no_presentation_code_switches_on_the_type_of_a_result():
    found = []
    # a file naming no result type, or neither isinstance nor issubclass, has no such call: only the others are parsed
    for name, tree in _presentation_files(("isinstance", "issubclass"), tuple(RESULT_TYPES)):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass"):
                names = {getattr(n, "id", getattr(n, "attr", None)) for n in ast.walk(node.args[1])}
                if names & RESULT_TYPES:
                    found.append(f"{name}:{node.lineno}")
    assert not found, found


def test_summaries_hold_the_headline_numbers():
    frequency = _result("frequency")
    items, shares = frequency.top_k(5)
    assert list(frequency.summary().values()) == list(shares)
    assert list(frequency.summary()) == [f"item {i}" for i in items]
    assert frequency.method == frequency.protocol == "oue"
    distribution = _result("distribution (central)")
    assert distribution.summary() == {
        "mean": distribution.mean(), "std": np.sqrt(distribution.var()), "median": float(distribution.quantile(0.5))
    }
    np.testing.assert_array_equal(distribution.table()["cdf"], distribution.cumulative[1:])
    mean = _result("mean")
    assert mean.summary() == {"mean": mean.mean, "standard_error": mean.standard_error}
    both = _result("mean and variance")
    assert both.summary()["var"] == both.var and both.details["n_mean"] == 1000


def test_a_non_estimate_does_not_meet_the_protocol():
    assert not isinstance(np.zeros(3), Estimate)
    assert not isinstance({"method": "x"}, Estimate)


# ---------------------------------------------------------------------- class-level settings
def test_instances_do_not_overwrite_class_level_settings():
    continuous = SquareWave(epsilon=1.0, bins=8)
    discrete = SquareWave(epsilon=1.0, bins=8, discrete=True)
    assert discrete.tags.exact_simulate and not continuous.tags.exact_simulate
    assert SquareWave.tags.exact_simulate is False and SquareWave.tags.kind == "numerical"
    for protocol in (continuous, discrete):
        assert "tags" not in vars(protocol) and "statistic_dtype" not in vars(protocol)
    binning = Binning(epsilon=1.0, bins=8, oracle="oue")
    assert binning.statistic_dtype == binning.oracle.statistic_dtype
    assert "statistic_dtype" not in vars(binning)
    hierarchy = local.make("hh", epsilon=1.0, bins=8, branching=2)
    assert "statistic_dtype" not in vars(hierarchy) and hierarchy.statistic_dtype in (np.int64, np.float64)
    assert local.available("numerical").count("sw") == 1


@functools.cache
def _presentation_sources() -> tuple[tuple[str, str], ...]:
    """(path under the package, source) of every presentation file."""
    source = Path(dpdist.__file__).parent
    return tuple(
        (str(path.relative_to(source)), path.read_text())
        for place in PRESENTATION
        for path in ([source / place] if place.endswith(".py") else sorted((source / place).rglob("*.py")))
        if path.exists()
    )


@functools.cache
def _parsed(name: str, text: str) -> ast.Module:
    return ast.parse(text)


def _presentation_files(*words: tuple[str, ...]) -> list[tuple[str, ast.Module]]:
    """(path under the package, parsed tree) of every presentation file whose source holds one of each group of
    ``words``: a switch is found in the tree, and a file without the names it is made of cannot hold one (parsing
    all 113 files took most of these tests' second of CPU).  Each file is parsed once for the two switch tests."""
    return [(name, _parsed(name, text)) for name, text in _presentation_sources()
            if all(any(word in text for word in group) for group in words)]


def _is_kind(node) -> bool:
    """``x["kind"]``, ``x.kind`` (not ``tags.kind``) or ``getattr(x, "kind", ...)``."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind" and getattr(node.value, "attr", None) != "tags"
    return (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant) and node.args[1].value == "kind")


def _kind_switches(tree) -> list[int]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(_is_kind(side) for side in [node.left, *node.comparators]):
            constants = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)}
            if constants & RESULT_KINDS:
                found.append(node.lineno)
        probe = isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr")
        if probe and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in RESULT_FIELDS:
            found.append(node.lineno)
    return found


def test_no_presentation_code_switches_on_the_kind_of_a_result():
    """Nor on its ``kind`` (of the object or of its JSON), nor by probing its attributes: results carry the
    methods their callers need (``summary_row``, ``needs_band``, their text table, ...)."""
    # a comparison of a kind names "kind"; a probe calls getattr or hasattr
    files = _presentation_files(("kind", "getattr", "hasattr"))
    found = [f"{name}:{line}" for name, tree in files if name not in OTHER_KINDS for line in _kind_switches(tree)]
    assert not found, found


def test_the_kind_switch_finder_can_fail():
    tree = ast.parse('if estimate["kind"] == "frequency": pass\nif getattr(result, "labels", None): pass\n'
                     'if protocol.tags.kind == "frequency": pass\n')
    assert _kind_switches(tree) == [1, 2]


def test_a_range_estimates_heat_map_is_drawn_in_the_attributes_units():
    """The response matrix's axes were labelled with the attributes' names but ticked in bin numbers
    (0..15); now their ticks are the bins' edges in each attribute's units, from its lower to its upper bound."""
    estimate = _result("ranges")
    ax = estimate.plot(pair=("x", "y"))
    lo_y, hi_y = estimate.bounds[1]
    assert ax.get_ylabel() == "x" and ax.get_xlabel() == "y"
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{v:.4g}" for v in np.linspace(lo_y, hi_y, 6)]
    assert ax.get_xticks()[0] == -0.5 and ax.get_xticks()[-1] == estimate.resolution - 0.5
    from matplotlib import pyplot

    pyplot.close(ax.figure)
