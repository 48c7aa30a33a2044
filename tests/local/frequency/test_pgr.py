"""Projective geometry response: the design, the transform decoding, the draw and the variance."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError
from dpdist.local.frequency.pgr import projective_design, projective_points
from dpdist.local.frequency.ss import optimal_subset_size, subset_variance
from dpdist.testing._statistics import assert_unbiased_with_analytic_variance


@pytest.mark.parametrize("q, d", [(2, 7), (3, 13), (5, 31), (3, 40), (7, 57)])
def test_the_hyperplanes_form_a_symmetric_design(q, d):
    protocol = local.make("pgr", epsilon=1.0, domain_size=d, field_size=q)
    t, points, per_plane, per_pair = projective_points(q, d)
    assert (protocol.dimension, protocol.output_size) == (t, points) and points >= d > (q ** (t - 1) - 1) // (q - 1)
    incidence = protocol.in_plane(np.arange(d)[:, None], np.arange(points)[None, :]).astype(np.int64)
    np.testing.assert_array_equal(incidence.sum(axis=1), per_plane)
    shared = incidence @ incidence.T
    np.testing.assert_array_equal(shared[~np.eye(d, dtype=bool)], per_pair)


def test_every_point_index_is_one_canonical_vector():
    protocol = local.make("pgr", epsilon=1.0, domain_size=40, field_size=3)
    vectors = protocol._point_vectors(np.arange(protocol.output_size))
    assert np.unique(vectors).size == protocol.output_size
    np.testing.assert_array_equal(protocol._canonical_points(protocol._digits(vectors)), np.arange(protocol.output_size))
    scaled = (2 * protocol._digits(vectors)) % 3  # another representative of each point
    np.testing.assert_array_equal(protocol._canonical_points(scaled), np.arange(protocol.output_size))


@pytest.mark.parametrize("q, d", [(2, 100), (3, 40), (5, 120), (11, 133)])
def test_transform_decoding_equals_counting_the_planes(q, d):
    protocol = local.make("pgr", epsilon=1.0, domain_size=d, field_size=q)
    histogram = np.random.default_rng(3).integers(0, 1000, size=protocol.output_size)
    incidence = protocol.in_plane(np.arange(d)[:, None], np.arange(protocol.output_size)[None, :])
    np.testing.assert_allclose(protocol.plane_sums(histogram), incidence @ histogram, rtol=0, atol=1e-6)


def test_the_variance_is_subset_selection_of_a_plane_among_the_points():
    protocol = local.make("pgr", epsilon=1.0, domain_size=1000)
    assert (protocol.field_size, protocol.output_size, protocol.plane_size) == (3, 1093, 364)
    mean = float(np.mean(protocol.variance(1, np.full(1000, 1e-3))))
    assert mean == pytest.approx(subset_variance(1.0, 1093, 1000, 364), rel=1e-9)


@pytest.mark.parametrize("d, epsilon, ratio", [(1024, 0.5, 1.0096), (16384, 2.0, 1.0109), (16384, 4.0, 1.0021)])
def test_the_chosen_design_is_near_the_subset_selection_optimum_in_few_bits(d, epsilon, ratio):
    protocol = local.make("pgr", epsilon=epsilon, domain_size=d)
    optimum = subset_variance(epsilon, d, d, optimal_subset_size(epsilon, d))
    assert protocol.ranked_variance(1) / optimum == pytest.approx(ratio, abs=1e-4)
    assert math.ceil(math.log2(protocol.output_size)) <= 18  # against d bits for subset selection packed


def test_the_design_minimizes_the_variance_over_the_primes_it_considers():
    chosen = projective_design(2.0, 128)
    for q in (2, 3, 5, 7, 11, 13, 17, 19, 23, 127):
        other = local.make("pgr", epsilon=2.0, domain_size=128, field_size=q)
        assert local.make("pgr", epsilon=2.0, domain_size=128).ranked_variance(1) <= other.ranked_variance(1) + 1e-12
    assert chosen == 11


def test_the_config_records_the_field_and_reads_back():
    protocol = local.make("pgr", epsilon=2.0, domain_size=128)
    config = protocol.config()
    assert config["field_size"] == 11
    assert local.from_config(config).output_size == protocol.output_size


@pytest.mark.parametrize("field_size", [4, 9, 1])
def test_a_field_size_that_is_not_a_prime_is_refused(field_size):
    with pytest.raises(InvalidParameterError, match="field_size"):
        local.make("pgr", epsilon=1.0, domain_size=10, field_size=field_size)


def test_a_transform_too_large_is_refused_naming_the_field():
    with pytest.raises(InvalidParameterError, match=r"'field_size' parameter of PGR must give a transform"):
        local.make("pgr", epsilon=1.0, domain_size=10**6, field_size=1009)


def test_reports_are_uniform_in_the_plane_or_outside_it():
    # item 5 of the Fano plane (q = 2, 7 points): each of its 3 planes w.p. p_in / 3, each other point (1 - p_in) / 4
    protocol = local.make("pgr", epsilon=2.0, domain_size=7, field_size=2)
    n = 70_000
    reports = protocol.privatize(np.full(n, 5), rng=11)
    frequencies = np.bincount(reports, minlength=7) / n
    expected = protocol.channel([5])[0]
    # every cell within 5 binomial standard errors
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected * (1 - expected) / n))


@pytest.mark.parametrize("q, d", [(2, 7), (3, 40)])
def test_a_report_takes_the_same_draws_whatever_the_value(q, d):
    # the generator's state after one report is the same for every value and every seed's coins: the number of
    # draws says nothing of whether the report includes the value
    protocol = local.make("pgr", epsilon=1.0, domain_size=d, field_size=q)
    for seed in range(20):
        states = set()
        for value in range(d):
            generator = np.random.Generator(np.random.PCG64(seed))
            protocol.privatize(np.array([value]), rng=generator)
            states.add(str(generator.bit_generator.state))
        assert len(states) == 1


@pytest.mark.slow  # a variance law over 400 repeated collections, 0.3 CPU-s: the conformance kit checks the examples in the fast loop
def test_estimates_are_unbiased_with_the_analytic_variance_past_the_conformance_examples():
    # q = 3, t = 4: 40 points, the design's full incidence (the conformance examples stop at t = 3)
    assert_unbiased_with_analytic_variance(local.make("pgr", epsilon=1.0, domain_size=40, field_size=3), rng=5, repeats=400)
