"""dpdist.audit: the certificate's statistics, broken randomizers caught, correct ones never flagged."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy import stats

from dpdist import audit, local
from dpdist.audit import Randomizer
from dpdist.audit._black_box import stage_sizes
from dpdist.audit._statistics import detectable_epsilon, smallest_examined_probability
from dpdist.audit.peers import grr_channel
from dpdist.errors import InvalidParameterError


# ---------------------------------------------------------------------- randomizers written in the tests
def grr(d, keep):
    """GRR keeping the item w.p. ``keep``, else another item uniformly (correct for keep = e^eps/(e^eps+d-1))."""

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        other = (values + rng.integers(1, d, values.size)) % d
        return np.where(rng.random(values.size) < keep, values, other)

    return sample


def grr_wrong_q(d, epsilon):
    """A published kind of bug: keep w.p. p, else uniform over all d items (the item again included): q = (1-p)/d."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        return np.where(rng.random(values.size) < keep, values, rng.integers(0, d, values.size))

    return sample


def rr_bits(d, epsilon, randomize_last=True):
    """Randomized response on each bit of the one-hot vector (SUE, eps/2 per bit); optionally the last bit kept as is
    (OpenDP's bit vector before 0.15.0, opendp/opendp#2708)."""
    keep = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = np.zeros((values.size, d), dtype=np.uint8)
        bits[np.arange(values.size), values] = 1
        flip = rng.random(bits.shape) >= keep
        if not randomize_last:
            flip[:, -1] = False
        return bits ^ flip

    return sample


def oue(d, epsilon, q=None):
    """OUE: the item's bit is 1 w.p. 1/2, every other bit 1 w.p. q = 1/(e^eps + 1) (or the ``q`` given: a wrong q)."""
    q = 1 / (math.exp(epsilon) + 1) if q is None else q

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = (rng.random((values.size, d)) < q).astype(np.uint8)
        bits[np.arange(values.size), values] = rng.random(values.size) < 0.5
        return bits

    return sample


# ---------------------------------------------------------------------- the statistics
def test_clopper_pearson_matches_scipy_exact_interval():
    for k, n, a in [(0, 50, 0.01), (7, 50, 0.01), (50, 50, 0.025), (312, 1000, 1e-4)]:
        interval = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * a, method="exact")
        assert audit.clopper_pearson_lower(k, n, a) == pytest.approx(interval.low, abs=1e-12)
        assert audit.clopper_pearson_upper(k, n, a) == pytest.approx(interval.high, abs=1e-12)


def test_the_bound_is_the_log_ratio_of_the_two_clopper_pearson_bounds():
    bound = audit.epsilon_lower_bound(900, 1000, 100, 1000, 0.001)
    expected = math.log(audit.clopper_pearson_lower(900, 1000, 0.001) / audit.clopper_pearson_upper(100, 1000, 0.001))
    assert bound == pytest.approx(expected) and 1.8 < bound < math.log(9)
    assert audit.epsilon_lower_bound(100, 1000, 900, 1000, 0.001) == 0.0  # never below 0


def test_the_stages_spend_the_budget():
    assert stage_sizes(20_000, 2000, True) == [2000, 4000, 12_000]
    assert sum(stage_sizes(1_000_000, 2000, True)) == 998_000
    assert stage_sizes(20_000, 2000, False) == [18_000]


def test_power_grows_with_the_samples():
    few, many = detectable_epsilon(0.5, 1000, 1e-4, 1.0), detectable_epsilon(0.5, 100_000, 1e-4, 1.0)
    assert 1.0 < many < few
    assert detectable_epsilon(1e-6, 1000, 1e-4, 1.0) == math.inf


def test_the_power_on_a_rare_witness_event_is_computed():
    """A witness event seen 40 times in 128,000 outputs: the search over counts once evaluated a settled entry's
    count of -1 (refused by the Clopper-Pearson bound: the audit raised instead of reporting)."""
    assert detectable_epsilon(40 / 128_000, 128_000, 1e-3 / 64, 1.0) > 1.0


def test_the_smallest_examined_probability_grows_with_the_claim_and_shrinks_with_the_samples():
    a = 1e-3 / 40
    assert smallest_examined_probability([68_000], a, 1.0, 0.999) == pytest.approx(80 / 68_000, rel=0.05)
    assert smallest_examined_probability([68_000], a, 2.0, 0.999) > 1.8 * smallest_examined_probability([68_000], a, 1.0, 0.999)
    assert smallest_examined_probability([680_000], a, 1.0, 0.999) < smallest_examined_probability([68_000], a, 1.0, 0.999) / 9
    assert smallest_examined_probability([10], 0.01, 1.0, 0.999) == 1.0  # no count of 10 certifies a claim of 1 here


# ---------------------------------------------------------------------- what "no violation found" covers
def grr_leaking_rarely(d, epsilon, leak):
    """A correct GRR except that input 0 emits the out-of-domain output ``d`` w.p. ``leak``: epsilon is infinite."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        out = grr(d, keep)(values, rng)
        return np.where((values == 0) & (rng.random(values.size) < leak), d, out)

    return sample


def test_no_violation_found_states_the_rarest_event_it_examined():
    """An infinite loss in an event of probability 5e-4 escapes the default budget of 10^5 outputs per input: the
    verdict says so (events below the floor were not examined) instead of reading as a clean bill."""
    result = audit.audit(grr_leaking_rarely(8, 1.0, 5e-4), 1.0, 8, rng=0)
    assert result.verdict == "no violation found"
    assert result.smallest_examined_probability > 5e-4 and result.largest_stage == 68_000
    assert "were not examined" in result.statement and "even an infinite one" in result.statement
    assert result.statement in result.text() and "detectable" not in result.text()
    document = json.loads(result.to_json())
    assert document["smallest_examined_probability"] == result.smallest_examined_probability
    assert "detectable_epsilon" not in document and "witness_power_loss" in document
    assert "events examined" in audit.table([result])[0]
    assert "that the audit's cells can express (unions of cells" in result.statement and "other events" in result.statement


def test_the_statement_and_the_table_say_what_they_mean():
    """The statement of a large domain read '(16 of 1024 items (designed); rarer ...' (a
    parenthesis left open), and the table's 'samples' was a total (a stated channel's fit included) beside the field
    table's outputs per input."""
    result = audit.audit(grr(1024, math.e / (math.e + 1023)), 1.0, 1024, samples=2_000, white_box=False, rng=0)
    clause = result.statement.split(" that the audit's cells")[0]
    assert clause.count("(") == clause.count(")") and "16 of 1024" in clause
    header, row = audit.table([result])
    assert "outputs per input" in header and "outputs (all)" in header
    assert f"{result.samples_per_input:,}" in row and f"{result.samples:,}" in row


@functools.cache
def _examined_floor() -> float:
    """The smallest examined probability of a correct GRR's audit (seeded: the same for both cases below)."""
    return audit.audit(grr(8, math.e / (math.e + 7)), 1.0, 8, samples=20_000, rng=0).smallest_examined_probability


# the documented five seeds in the whole suite; the fast loop audits seed 0 of each (the same check, 0.5 CPU-s less)
@pytest.mark.parametrize("times, flagged, seeds", [(1.5, True, 1), (0.3, False, 1),
                                                   pytest.param(1.5, True, 5, marks=pytest.mark.slow),
                                                   pytest.param(0.3, False, 5, marks=pytest.mark.slow)])
def test_an_infinite_loss_is_flagged_above_the_examined_floor_and_not_far_below(times, flagged, seeds):
    """The floor is the audit's own: an event at 1.5x it, hiding an infinite loss, is flagged at every seed; at 0.3x
    it at none (its expected count is a third of what a certificate needs)."""
    floor = _examined_floor()
    verdicts = [audit.audit(grr_leaking_rarely(8, 1.0, times * floor), 1.0, 8, samples=20_000, rng=seed).violates
                for seed in range(seeds)]
    assert verdicts == [flagged] * seeds


def test_detectable_epsilon_is_a_deprecated_name_of_the_witness_power():
    result = audit.audit(local.make("grr", epsilon=1.0, domain_size=3), samples=2000, rng=0)
    with pytest.warns(DeprecationWarning, match="never a bound"):
        assert result.detectable_epsilon == result.witness_power_loss


# ---------------------------------------------------------------------- broken randomizers are caught
@pytest.mark.parametrize(
    "name, sample, d, true_epsilon",
    [
        ("grr with q = (1-p)/d", grr_wrong_q(8, 1.0), 8, math.log(1 + 8 * math.e / 7)),
        ("rr that never randomizes its last bit", rr_bits(32, 1.0, randomize_last=False), 32, math.inf),
        ("oue with q halved", oue(16, 1.0, q=0.5 / (math.e + 1)), 16, math.log((1 - 0.5 / (math.e + 1)) / (0.5 / (math.e + 1)))),
    ],
)
def test_a_broken_randomizer_is_certified_to_violate(name, sample, d, true_epsilon):
    result = audit.audit(sample, 1.0, d, samples=50_000, rng=1)
    assert result.verdict == "violates", result.text()
    assert 1.0 < result.certified_epsilon < true_epsilon
    assert result.samples_per_input < 50_000  # stopped at the first certified stage


def test_a_wrong_probability_that_keeps_epsilon_is_a_channel_mismatch():
    """A GRR keeping the item less often than it states: more private than claimed, but not what it says it is."""
    d, keep = 4, math.e / (math.e + 3)
    randomizer = Randomizer(grr(d, keep * 0.9), name="grr keeping less", epsilon=1.0, domain=d,
                            channel=grr_channel(d, keep), output_index=lambda out: np.asarray(out))
    result = audit.audit(randomizer, samples=12_000, rng=2)
    assert result.verdict == "channel mismatch" and result.fit_pvalue < 1e-3
    assert result.channel_epsilon == pytest.approx(1.0)


def test_a_stated_channel_above_the_claim_violates_exactly():
    d = 4
    randomizer = Randomizer(grr(d, 0.7), epsilon=1.0, domain=d, channel=grr_channel(d, 0.7),
                            output_index=lambda out: np.asarray(out))
    result = audit.audit(randomizer, samples=2000, rng=3)
    assert result.violates and result.channel_epsilon == pytest.approx(math.log(0.7 / 0.1))


def test_a_memo_redrawn_at_every_report_is_caught_over_time():
    """A longitudinal randomizer that forgets its memo: T reports of one value cost T x eps, not eps."""
    d, reports, epsilon = 4, 4, 1.0
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    def forgetful(histories, rng):
        return np.stack([grr(d, keep)(histories, rng) for _ in range(reports)], axis=1)

    result = audit.audit(forgetful, epsilon, d, samples=20_000, rng=4)
    assert result.violates and result.certified_epsilon > 1.5 * epsilon


# ---------------------------------------------------------------------- correct randomizers are not flagged
ALL_PROTOCOLS = [
    ("grr", {"domain_size": 4}), ("oue", {"domain_size": 8}), ("sue", {"domain_size": 6}), ("ss", {"domain_size": 8}),
    ("hr", {"domain_size": 8}), ("sw", {}), ("pm", {}), ("sr", {}), ("threshold", {}),
]
#: One of each kind of output for the fast loop: an item, a bit vector, a real.
FAST_PROTOCOLS = [("grr", {"domain_size": 4}), ("oue", {"domain_size": 4}), ("sw", {})]


def _holds(name, params, samples, seed):
    protocol = local.make(name, epsilon=1.0, **params)
    result = audit.audit(protocol, samples=samples, rng=seed)
    assert result.verdict == "no violation found", result.text()
    assert result.channel_epsilon == pytest.approx(1.0, abs=1e-6) and result.fit_pvalue > 1e-3
    assert 0.5 < result.certified_epsilon <= 1.0


@pytest.mark.parametrize("name, params", FAST_PROTOCOLS)
def test_dpdist_protocols_hold_and_the_bound_stays_below_the_exact_epsilon(name, params):
    _holds(name, params, 8000, 5)


@pytest.mark.slow
@pytest.mark.parametrize("name, params", ALL_PROTOCOLS)
def test_every_dpdist_protocol_holds_and_the_bound_stays_below_the_exact_epsilon(name, params):
    _holds(name, params, 20_000, 5)


def test_longitudinal_dpdist_protocol_over_reports_holds():
    protocol = local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=4)
    result = audit.audit(audit.protocol_randomizer(protocol, reports=4), samples=8000, rng=6)
    assert result.verdict == "no violation found" and result.claimed_epsilon == pytest.approx(protocol.epsilon_longitudinal)
    assert result.certified_epsilon > 0.5


@pytest.mark.slow  # 30 audits (0.5 CPU-s), like the 200-seed audits below; one-audit tests run the same path fast
def test_false_violations_are_rarer_than_alpha():
    """Randomized response on one bit at exactly its claim (the event {1} has ratio e^eps: the hardest case for a
    false alarm), audited 30 times at alpha = 0.2: the count of "violates" is Binomial(30, <= 0.2) at worst."""
    epsilon = 1.0
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    verdicts = [audit.audit(grr(2, keep), epsilon, 2, alpha=0.2, samples=4000, pilot=500, rng=seed).violates
                for seed in range(30)]
    assert sum(verdicts) <= stats.binom.isf(1e-6, 30, 0.2)


@pytest.mark.slow
@pytest.mark.parametrize("name, params", ALL_PROTOCOLS)
def test_no_false_violation_in_200_seeded_audits(name, params):
    """200 audits of each protocol at its claim (5000 outputs per input, alpha 1e-3): a correct randomizer is
    called "violates" with probability <= 1e-3 per audit, so P(any of 200) <= 0.18; the seeds are fixed, so the
    count is too (0 for each protocol at these seeds)."""
    protocol = local.make(name, epsilon=1.0, **params)
    verdicts = [audit.audit(protocol, samples=5000, pilot=500, white_box=False,
                            rng=np.random.SeedSequence([7, seed])).violates for seed in range(200)]
    assert sum(verdicts) == 0


# ---------------------------------------------------------------------- results and bad input
def test_the_result_reads_as_text_and_json():
    result = audit.audit(local.make("grr", epsilon=1.0, domain_size=3), samples=4000, rng=8)
    document = json.loads(result.to_json())
    assert document["schema"] == "dpdist.audit/2" and document["verdict"] == result.verdict
    assert document["stages"][-1]["samples"] == result.samples_per_input
    assert "claimed" in result.text() and "witness" in result.text()
    assert audit.table([result, result])[1].startswith("dpdist grr")


def test_a_seeded_audit_repeats():
    protocol = local.make("oue", epsilon=1.0, domain_size=4)
    first, second = (audit.audit(protocol, samples=4000, rng=9) for _ in range(2))
    assert first.certified_epsilon == second.certified_epsilon and first.witness == second.witness


@pytest.mark.parametrize("kwargs, named", [
    ({"epsilon": -1.0}, "'epsilon'"), ({"alpha": 0.7}, "'alpha'"), ({"samples": 10}, "'samples'"),
    ({"domain": 1}, "'domain'"), ({"domain": (3.0, 1.0)}, "'domain'"), ({"domain": "abc"}, "'domain'"),
    ({"pilot": 5000, "samples": 6000}, "'pilot'"),
])
def test_bad_arguments_are_refused_by_name(kwargs, named):
    arguments = {"epsilon": 1.0, "domain": 4, **kwargs}
    with pytest.raises(InvalidParameterError, match=named):
        audit.audit(grr(4, 0.5), **arguments)


def test_a_randomizer_that_loses_outputs_or_returns_objects_is_refused():
    with pytest.raises(InvalidParameterError, match="one output per input"):
        audit.audit(lambda values: np.zeros(3), 1.0, 4, samples=1000)
    with pytest.raises(InvalidParameterError, match="features"):
        audit.audit(lambda values: np.array([b"x"] * len(values), dtype=object), 1.0, 4, samples=1000)
    with pytest.raises(InvalidParameterError, match="'randomizer'"):
        audit.audit(42, 1.0, 4)


# samples=1e5 (a float, as people write it) was reported as a bad 'pilot' of None; the int check
# takes an integral float, so it is accepted, and a fractional one is named as 'samples'.
def test_a_float_samples_is_taken_or_named_as_samples():
    result = audit.audit(lambda v, rng: np.asarray(v), epsilon=1.0, domain=4, samples=1e5, rng=0)
    assert result.violates and result.samples_per_input <= 100_000
    with pytest.raises(InvalidParameterError, match="'samples'") as caught:
        audit.audit(lambda v, rng: np.asarray(v), epsilon=1.0, domain=4, samples=1e5 + 0.5)
    assert "'pilot'" not in str(caught.value)
