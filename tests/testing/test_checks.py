"""Each conformance check must fail on a deliberately broken protocol.

A privacy test that cannot fail proves nothing: here GRR and OUE variants that
keep the true value 30% more often, claim a channel they do not sample, report
a wrong variance or simulate the wrong law are run through the checks of the
public kit :mod:`dpdist.testing` (the ones the suite applies), and every check
must reject them; so must ``check_protocol`` as a whole, and the contract checks
must reject protocols that break a round trip, a merge or an error promise.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import testing
from dpdist.errors import DPDistError, OutOfDomainError
from dpdist.local import ItemReports, ReportFormat
from dpdist.local.frequency.grr import GRR
from dpdist.local.frequency.oue import OUE
from dpdist.privacy import local_guarantee
from dpdist.testing import (
    assert_epsilon_ldp,
    assert_privatize_samples_channel,
    assert_simulate_matches_privatize,
    assert_unbiased_with_analytic_variance,
)


class GRRKeepsTooOften(GRR):
    """Keeps the true item with probability 1.3 * lambda, but claims the honest channel."""

    def _privatize(self, values, rng):
        keep = rng.random(values.size) < 1.3 * self._keep
        uniform = rng.integers(0, self.domain_size, size=values.size, dtype=self._report_dtype)
        return np.where(keep, values.astype(self._report_dtype), uniform)


class GRRWithLeakyChannel(GRR):
    """Honestly describes a randomizer that reports the truth 30% more often than allowed."""

    def _setup(self):
        super()._setup()
        d = self.domain_size
        self._p = min(1.3 * self._p, 0.99)
        self._q = (1 - self._p) / (d - 1)
        self._keep = self._p - self._q


class OUETrueBitTooOften(OUE):
    """Sets the true bit with probability 0.65 instead of 1/2, claiming 1/2."""

    def _setup(self):
        super()._setup()
        self._p_threshold = int(0.65 * 2**32)


class OUEWithLeakyChannel(OUETrueBitTooOften):
    """Honestly describes the 0.65 true-bit probability: its channel must fail the epsilon check."""

    def _setup(self):
        super()._setup()
        self._p = self._p_threshold / 2**32


class GRRWrongVariance(GRR):
    def variance(self, n, frequencies=None):
        return 2 * super().variance(n, frequencies)


class GRRBiasedEstimate(GRR):
    def support_probabilities(self):
        p, q = super().support_probabilities()
        return p * 1.05, q


class OUEWrongSimulate(OUE):
    def _simulate(self, values, rng):
        true_counts = np.bincount(values, minlength=self.domain_size)
        # forgets that the true bit is itself random: every user supports their item
        return (true_counts + rng.binomial(values.size - true_counts, self._q)).astype(np.int64)


def test_epsilon_check_rejects_a_leaky_channel():
    protocol = GRRWithLeakyChannel(epsilon=1.0, domain_size=5)
    with pytest.raises(AssertionError, match="privacy loss"):
        assert_epsilon_ldp(protocol.channel(), protocol.epsilon)
    with pytest.raises(AssertionError, match="privacy loss"):
        assert_epsilon_ldp(OUEWithLeakyChannel(epsilon=1.0, domain_size=3).channel(), 1.0)


class GRRUnderstatesItsEpsilon(GRR):
    """Honest sampler and channel, but states a guarantee half as large as the channel gives."""

    @property
    def guarantee(self):
        return local_guarantee(self.epsilon / 2)


def test_channel_check_proves_the_stated_guarantee_not_the_parameter():
    with pytest.raises(AssertionError, match="privacy loss"):
        testing.check_channel_is_epsilon_ldp(GRRUnderstatesItsEpsilon(epsilon=1.0, domain_size=5))


@pytest.mark.parametrize(
    "protocol", [GRRKeepsTooOften(epsilon=1.0, domain_size=5), OUETrueBitTooOften(epsilon=1.0, domain_size=5)]
)
def test_sampling_check_rejects_a_randomizer_that_keeps_the_truth_too_often(protocol):
    with pytest.raises(AssertionError, match="does not sample the channel"):
        assert_privatize_samples_channel(protocol, np.arange(protocol.domain_size), n_per_input=20_000, rng=3)


def test_variance_check_rejects_a_wrong_variance_formula():
    with pytest.raises(AssertionError, match="variance ratio"):
        assert_unbiased_with_analytic_variance(GRRWrongVariance(epsilon=1.0, domain_size=5), rng=5)


def test_bias_check_rejects_a_biased_estimator():
    with pytest.raises(AssertionError, match="biased"):
        assert_unbiased_with_analytic_variance(GRRBiasedEstimate(epsilon=1.0, domain_size=5), rng=5)


def test_simulate_check_rejects_a_wrong_aggregate_sampler():
    with pytest.raises(AssertionError, match="simulate disagrees"):
        assert_simulate_matches_privatize(OUEWrongSimulate(epsilon=1.0, domain_size=5), rng=9)


class GRRForgetsAParameter(GRR):
    """Its config drops the domain size, so the protocol cannot be rebuilt from it."""

    def config(self):
        config = super().config()
        del config["domain_size"]
        return config


class GRRLosesRejectedCounts(GRR):
    def _check_reports(self, reports, invalid):
        return {}


class GRRAcceptsAnyValue(GRR):
    def _check_values(self, values):
        return np.clip(np.asarray(values, dtype=np.int64), 0, self.domain_size - 1)


class GRRShowsTheValue(GRR):
    """Its refusal quotes the value it was given (as dpdist's did: ``Got 1 unknown value(s), e.g. 'hovercraft'``)."""

    def _check_values(self, values):
        try:
            return super()._check_values(values)
        except DPDistError as refused:
            raise OutOfDomainError(f"{refused} Got {np.asarray(values).ravel()[-1]!r}.") from None


class GRRCountsByBatch(GRR):
    """Its statistic depends on how the reports are batched: a batch's first report is counted on item 0."""

    def _accumulate(self, reports):
        moved = np.array(reports, copy=True)
        moved[:1] = 0
        return super()._accumulate(moved)


class GRRWithoutEstimateGuard(GRR):
    def estimate(self, data, **options):
        return self._estimate(data, **options)


# ---------------------------------------------------------------------- the kit as a whole
@pytest.mark.parametrize(
    "protocol, failed_check",
    [
        (GRRWithLeakyChannel(epsilon=1.0, domain_size=5), "check_channel_is_epsilon_ldp"),
        (GRRKeepsTooOften(epsilon=1.0, domain_size=5), "check_privatize_samples_the_channel"),
        (GRRWrongVariance(epsilon=1.0, domain_size=5), "check_unbiased_with_the_analytic_variance"),
        # the bias check averages simulate()d estimates, so it is the first to see a wrong sampler
        (OUEWrongSimulate(epsilon=1.0, domain_size=5), "check_unbiased_with_the_analytic_variance"),
    ],
)
def test_check_protocol_names_the_first_failed_check(protocol, failed_check):
    with pytest.raises(AssertionError, match=failed_check):
        testing.check_protocol(protocol)


@pytest.mark.parametrize(
    "protocol, check, message",
    [
        (GRRForgetsAParameter(epsilon=1.0, domain_size=5), testing.check_config_round_trip, "domain_size"),
        (GRRAcceptsAnyValue(epsilon=1.0, domain_size=5), testing.check_values_outside_the_domain_are_rejected,
         "nothing was raised"),
        (GRRAcceptsAnyValue(epsilon=1.0, domain_size=5), testing.check_values_of_the_wrong_type_are_rejected,
         "nothing was raised"),
        (GRRShowsTheValue(epsilon=1.0, domain_size=5), testing.check_refusals_show_no_value, "shows the value"),
        (GRRCountsByBatch(epsilon=1.0, domain_size=5), testing.check_merge_in_any_order, "differs"),
        (GRRWithoutEstimateGuard(epsilon=1.0, domain_size=5), testing.check_empty_aggregator_is_refused,
         "expected EmptyAggregateError"),
        (GRRWithoutEstimateGuard(epsilon=1.0, domain_size=5), testing.check_merge_of_another_config_is_refused,
         "estimate of another config"),
    ],
    ids=lambda value: getattr(value, "__name__", None) or type(value).__name__,
)
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")  # the unguarded 0/0
def test_contract_checks_reject_broken_protocols(protocol, check, message):
    with pytest.raises(AssertionError, match=message):
        check(protocol)


# ---------------------------------------------------------------------- reports over time
from dpdist.local.frequency.loloha import LOLOHA  # noqa: E402
from dpdist.local.frequency.longitudinal import LGRR  # noqa: E402


class LGRRClaimsEpsInfPerValue(LGRR):
    """The claim dpdist once made: m distinct values cost at most m * eps_inf, whatever T."""

    def epsilon_over_changes(self, reports):
        return min(reports, self.domain_size) * self.epsilon_longitudinal


class LOLOHAClaimsGTimesEpsInf(LOLOHA):
    """LOLOHA's Theorem 2 as stated by the paper (and once by dpdist): g * eps_inf for any T."""

    def epsilon_over_changes(self, reports):
        return min(reports, self.hash_range) * self.epsilon_longitudinal


class LGRRRedrawsItsMemo(LGRR):
    """A stable value whose permanent response is drawn anew every report: the stable check must fail."""

    def permanent_channel(self):
        return np.eye(self.domain_size)  # the "memo" is the value itself

    def instantaneous_channel(self):
        return self.channel()  # so each report is a fresh one-report draw of the value

    @property
    def epsilon_longitudinal(self):
        return self.epsilon_per_report  # claims one report's loss for any number of reports


@pytest.mark.parametrize(
    "protocol",
    [
        LGRRClaimsEpsInfPerValue(epsilon=1.0, epsilon_1=0.5, domain_size=2),
        LOLOHAClaimsGTimesEpsInf(epsilon=2.0, epsilon_1=1.0, domain_size=4, variant="binary", hash_prime=5),
        LGRRRedrawsItsMemo(epsilon=2.0, epsilon_1=1.0, domain_size=2),
    ],
    ids=["l-grr m*eps_inf", "loloha g*eps_inf", "l-grr redraws"],
)
def test_over_time_check_rejects_claims_the_joint_law_breaks(protocol):
    with pytest.raises(AssertionError, match="lose"):
        testing.check_reports_over_time(protocol)


class GRRDeclaresTooFewItems(GRR):
    """Declares items below d - 1 although it reports all d items."""

    def _report_format(self):
        return ItemReports(self.domain_size - 1)


class GRRReportsWideIntegers(GRR):
    """Returns int64 items although it declares the narrowest dtype (uint8)."""

    def _privatize(self, values, rng):
        return super()._privatize(values, rng).astype(np.int64)


class GRRDeclaresNoFormat(GRR):
    """Declares no report format (as protocols did before declared formats)."""

    def _report_format(self):
        return ReportFormat()


class GRRWritesUnreadableJSON(GRR):
    """Declares a format whose JSON rows do not read back (a row of one item becomes a list)."""

    def _report_format(self):
        report_format = super()._report_format()
        report_format.to_json_rows = lambda reports: [[row] for row in np.asarray(reports).tolist()]
        return report_format


@pytest.mark.parametrize(
    "protocol, message",
    [
        (GRRDeclaresTooFewItems(epsilon=1.0, domain_size=5), "rejects"),
        (GRRReportsWideIntegers(epsilon=1.0, domain_size=5), "dtype int64"),
        (GRRDeclaresNoFormat(epsilon=1.0, domain_size=5), "declares no report format"),
        (GRRWritesUnreadableJSON(epsilon=1.0, domain_size=5), "do not survive their JSON rows"),
    ],
    ids=lambda value: getattr(value, "__name__", None) or type(value).__name__,
)
def test_format_check_rejects_reports_that_break_their_declaration(protocol, message):
    with pytest.raises(AssertionError, match=message):
        testing.check_reports_conform_to_the_declared_format(protocol)


def test_format_check_passes_an_honest_declaration():
    testing.check_reports_conform_to_the_declared_format(GRR(epsilon=1.0, domain_size=5))
