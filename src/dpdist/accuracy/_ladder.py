"""The trust ladder of one campaign: each deployment model's per-item error at one stated central guarantee.

:func:`ladder` builds the rows of :mod:`._ladder_rows` for a frequency campaign (its protocol's config; the
config's epsilon is the central epsilon every row is held to), ``n`` devices of one report each, ``delta`` and a
public data shape; :class:`~._ladder_result.Ladder` prints, draws and serializes them.  ``docs/explanation/trust-ladder.md`` reads
the numbers.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .. import local
from .._guarantee import PrivacyGuarantee
from .._validation import Admits, Described, InstanceOf, Integer, Interval, check_param, population, validate_params
from ..accounting._threshold import threshold_delta, threshold_sampling
from ..amplification import shuffled
from ..amplification._accounting import shuffled_within
from ..amplification._statement import device_bound, report_target
from ..errors import InvalidParameterError
from ._ladder_odds import party_guesses
from ._ladder_result import Ladder
from ._ladder_rows import CENTRAL_SENSITIVITY, LadderRow, assumptions_of, counts_of, threshold_errors
from ._local import _analytic_variance, protocol_at
from ._shapes import DEFAULT_SHAPE, SHAPE, SHAPES

__all__ = ["ladder", "MAX_EPSILON0"]

OWNER = "explain_ladder"
#: the largest local epsilon the relayed row may give a report (the local protocols' own ceiling)
MAX_EPSILON0 = 30.0


@validate_params({"config": InstanceOf((local.LocalProtocol, dict), "a local protocol or its config (a dict): its "
                                                                    "epsilon is the central epsilon of every row", shows_text=True),
                  "shape": SHAPE}, owner=OWNER)
def ladder(config: Any, n: int, *, delta: float, threshold: int = 20, sampling: float | None = None,
           colluding: int = 0, tokens_each: int = 1, shape: str = DEFAULT_SHAPE) -> Ladder:
    """The trust ladder of ``config``'s campaign at ``n`` devices (module docstring; parameters in
    :func:`dpdist.accuracy.explain_ladder`)."""
    protocol = _placed(config)
    n = check_param(OWNER, "n", n, population(2))
    delta = check_param(OWNER, "delta", delta, Interval(0.0, 1.0, closed="neither"))
    delta = check_param(OWNER, "delta", delta, Described(Interval(0.0, 1.0 / n, closed="neither"), (
        f"below 1/n = {1 / n:.3g} (a delta of 1/n allows releasing one device's item in the clear)")))
    threshold = check_param(OWNER, "threshold", threshold, Integer(low=1, high=10**6))
    colluding = check_param(OWNER, "colluding", colluding, Integer(low=0, high=n - 1))
    tokens_each = check_param(OWNER, "tokens_each", tokens_each, Integer(low=1))
    if sampling is not None:
        sampling = check_param(OWNER, "sampling", sampling, Interval(0.0, 1.0, closed="neither"))
    chosen = SHAPES[shape]
    counts = counts_of(chosen.item_probabilities(int(protocol.config()["domain_size"])), n)  # _placed: a frequency oracle
    epsilon = float(protocol.guarantee.epsilon)
    thresholded = _sample_and_threshold(counts, epsilon, delta, threshold, sampling, colluding, tokens_each)  # may refuse
    rows = [_local(protocol, counts, epsilon), _shuffled(protocol, counts, epsilon, delta, colluding, tokens_each),
            thresholded, *_central(counts, epsilon, delta), _secure_aggregation(counts, epsilon, colluding)]
    rows = [_with_guesses(row, protocol, counts) for row in rows]
    return Ladder(protocol.config(), n, epsilon, delta, shape, tuple(int(c) for c in counts), tuple(rows), colluding,
                  tokens_each)


def _with_guesses(row: LadderRow, protocol, counts: np.ndarray) -> LadderRow:
    """``row`` with what each of its parties can guess of a device's item (:mod:`._ladder_odds`)."""
    reported = row.parameters.get("epsilon_local", row.parameters.get("epsilon0"))
    at = None if reported is None else protocol_at(protocol, reported, int(counts.sum()))
    return dataclasses.replace(row, guesses=party_guesses(row.model, row.guarantee, at, counts))


def _placed(config: Any):
    """The campaign's protocol, or a refusal naming what the ladder cannot place."""
    protocol = config if isinstance(config, local.LocalProtocol) else local.from_config(config)  # the table: a dict
    return check_param(OWNER, "config", protocol, Admits(local.LocalProtocol, _not_placed, (
        "a frequency protocol (or its config) with an unbiased estimator and an analytic variance (one item per device, "
        "a per-item error on every rung)")))


def _not_placed(protocol) -> str | None:
    """Why the ladder cannot place ``protocol`` (None: it can)."""
    if protocol.tags.kind != "frequency":
        return f"a {protocol.tags.kind} protocol"
    frequencies = np.full(protocol.domain_size, 1.0 / protocol.domain_size)
    return None if _analytic_variance(protocol, 1000, frequencies) is not None else "no analytic variance"


def _mean_variance(protocol, counts: np.ndarray) -> float:
    n = int(counts.sum())
    return float(np.mean(protocol.variance(n, counts / n)))


def _local(protocol, counts: np.ndarray, epsilon: float) -> LadderRow:
    at = protocol_at(protocol, epsilon, int(counts.sum()))
    variance = _mean_variance(at, counts)
    return LadderRow("local", True, PrivacyGuarantee(epsilon, 0.0, "replace", "central"),
                     {"protocol": at.name, "epsilon_local": epsilon}, variance, variance,
                     assumptions=assumptions_of("local", {}),
                     notes=(f"local: each report is {epsilon:g}-LDP, so the collection is central {epsilon:g}-DP under "
                            "replace neighbours whoever sees it",))


def _shuffled(protocol, counts: np.ndarray, epsilon: float, delta: float, colluding: int, tokens_each: int) -> LadderRow:
    """The relay's row, stated per device: a device may spend its ``tokens_each`` tokens in one round, so one report
    is held to :func:`~dpdist.amplification._statement.report_target` and the device's reports to their group bound."""
    n = int(counts.sum())
    honest = n - colluding * tokens_each
    parameters: dict[str, Any] = {"colluding": colluding, "tokens_each": tokens_each,
                                  "colluding_reports": colluding * tokens_each, "honest_reports": honest}
    refusal = None
    if protocol.tags.memoized:
        refusal = f"{protocol.display_name} memoizes its reports: the relay amplifies memoryless protocols only"
    elif honest < 2:
        refusal = (f"{colluding} colluding device(s) x {tokens_each} token(s) = {colluding * tokens_each} known reports "
                   f"leave {max(honest, 0)} honest one(s) among {n}: a report hides among no others")
    if refusal is not None:
        return LadderRow("shuffled", True, None, parameters, math.nan, math.nan, notes=(f"shuffled: not offered ({refusal})",))
    report_epsilon, report_delta = report_target(epsilon, delta, tokens_each)

    def central(epsilon0: float) -> float:
        return shuffled(protocol_at(protocol, epsilon0, n), honest, report_delta).epsilon

    epsilon0 = _largest(lambda e: shuffled_within(protocol_at(protocol, e, n), honest, report_delta, report_epsilon),
                        report_epsilon, MAX_EPSILON0)
    at = protocol_at(protocol, epsilon0, n)
    variance = _mean_variance(at, counts)
    one = max(min(central(epsilon0), report_epsilon), 1e-12)
    stated, stated_delta = device_bound(one, report_delta, tokens_each)
    parameters.update(protocol=at.name, epsilon0=epsilon0, report_epsilon=one, report_delta=report_delta)
    per_device = ("" if tokens_each == 1 else
                  f"; a device may send its tokens_each = {tokens_each} reports in one round, so one report is held to "
                  f"({one:.4g}, {report_delta:.3g}) and the device's {tokens_each} reports to their group bound "
                  f"({stated:.4g}, {stated_delta:.3g}) (the amplification buys less than with one token each)")
    return LadderRow("shuffled", True, PrivacyGuarantee(stated, stated_delta, "replace", "central"),
                     parameters, variance, variance, assumptions=assumptions_of("shuffled", parameters),
                     notes=(f"shuffled: the largest epsilon0 (to 0.1%, at most {MAX_EPSILON0:g}) whose reports, shuffled "
                            f"among {honest:,} honest ones, are central ({epsilon:g}, {delta:g}) per device by dpdist's "
                            f"exact shuffle accountant (dpdist.amplification.shuffled){per_device}",))


def _largest(fits, low: float, high: float) -> float:
    """The largest value in ``[low, high]`` with ``fits`` (monotone; ``low`` fits), to 0.1%."""
    if fits(high):
        return high
    while high - low > 1e-3 * low:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _sample_and_threshold(counts: np.ndarray, epsilon: float, delta: float, threshold: int, sampling: float | None,
                          colluding: int, tokens_each: int) -> LadderRow:
    """Nebula's row, held against the ladder's one adversary: ``colluding`` devices of ``tokens_each`` reports each,
    ``colluding x tokens_each`` forged or always-counted reports (the relay's row counts the same reports as known)."""
    forged = colluding * tokens_each
    parameters: dict[str, Any] = {"threshold": threshold, "colluding": colluding, "tokens_each": tokens_each,
                                  "colluding_reports": forged}
    adversary = f"{colluding} colluding device(s) x {tokens_each} report(s) = {forged} forged report(s)"
    if sampling is None:
        sampling = threshold_sampling(epsilon, delta, threshold, colluding=forged, neighbouring="replace")
        how = "the largest p (to 0.01%) whose exact account meets the target"
        if sampling <= 0:
            return LadderRow("sample-and-threshold", False, None, parameters, math.nan, math.nan, notes=(
                f"sample-and-threshold: not offered (with {adversary} against a threshold of "
                f"{threshold}, no sampling probability meets ({epsilon:g}, {delta:g}))",))
    else:
        reached = threshold_delta(epsilon, sampling, threshold, colluding=forged, neighbouring="replace")
        if reached > delta:
            raise InvalidParameterError(
                f"The 'sampling' probability {sampling!r} of {OWNER} with threshold {threshold} and {adversary} "
                f"gives delta {reached:.3g} at epsilon {epsilon:g} (replace neighbours), above the target "
                f"delta {delta:g}: choose a smaller p, a larger threshold, or leave 'sampling' out to fit it.")
        how = "p as given"
    mse, variance, suppressed = threshold_errors(counts, sampling, threshold)
    parameters["sampling"] = sampling
    return LadderRow("sample-and-threshold", False, PrivacyGuarantee(epsilon, delta, "replace", "central"),
                     parameters, mse, variance, suppressed, assumptions_of("sample-and-threshold", parameters),
                     (f"sample-and-threshold: K = {threshold}, p = {sampling:.4g} ({how}; dpdist.accounting._threshold); "
                      f"an item with fewer than K sampled reports is suppressed (estimated 0): {suppressed:.3g} of "
                      f"{counts.size} items expected suppressed, their squared frequency counted in the error; "
                      "computed, not run by dpdist (Nebula's STAR-based servers)",))


def _central(counts: np.ndarray, epsilon: float, delta: float) -> list[LadderRow]:
    from ..central.noise import (  # lazy: loads scipy (0.4-2 s)
        VARIANCE_BITS, _dyadic_epsilon, _sampler_scale, secure_grid_step, zcdp_gaussian_sigma)

    n = int(counts.sum())
    t, s = _sampler_scale(Fraction(CENTRAL_SENSITIVITY["l1"]) / _dyadic_epsilon(epsilon))
    alpha = math.exp(-s / t)
    laplace = 2 * alpha / (1 - alpha) ** 2 / n**2
    realized = CENTRAL_SENSITIVITY["l1"] * s / t
    step = secure_grid_step(CENTRAL_SENSITIVITY["l2"])
    sigma_grid = zcdp_gaussian_sigma(epsilon, delta, CENTRAL_SENSITIVITY["l2"] / step + math.sqrt(counts.size))
    variance_grid = Fraction(math.ceil(sigma_grid**2 * 2**VARIANCE_BITS), 2**VARIANCE_BITS)
    gaussian = float(variance_grid) * step**2 / n**2
    laplace_row = LadderRow("central (discrete Laplace)", True, PrivacyGuarantee(realized, 0.0, "replace", "central"),
                            {"alpha": alpha, "epsilon_realized": realized, "l1_sensitivity": CENTRAL_SENSITIVITY["l1"]},
                            laplace, laplace, assumptions=assumptions_of("central", {}),
                            notes=("central (discrete Laplace): dpdist's exact sampler on the integer counts "
                                   "(central.noise.laplace_mechanism), epsilon rounded down to its dyadic value",))
    gaussian_row = LadderRow("central (Gaussian)", True, PrivacyGuarantee(epsilon, delta, "replace", "central"),
                             {"sigma": math.sqrt(float(variance_grid)) * step, "l2_sensitivity": CENTRAL_SENSITIVITY["l2"]},
                             gaussian, gaussian, assumptions=assumptions_of("central", {}),
                             notes=("central (Gaussian): dpdist's exact discrete Gaussian on a public grid "
                                    "(central.noise.gaussian_mechanism), sigma by zCDP (Canonne, Kamath & Steinke 2020)",))
    return [laplace_row, gaussian_row]


def _secure_aggregation(counts: np.ndarray, epsilon: float, colluding: int) -> LadderRow:
    n = int(counts.sum())
    honest = n - colluding
    alpha = math.exp(-epsilon / CENTRAL_SENSITIVITY["l1"])
    variance = 2 * alpha / (1 - alpha) ** 2 * n / honest / n**2
    parameters = {"alpha": alpha, "colluding": colluding, "honest_devices": honest}
    return LadderRow("secure aggregation", False, PrivacyGuarantee(epsilon, 0.0, "replace", "central"), parameters,
                     variance, variance, assumptions=assumptions_of("secure aggregation", parameters),
                     notes=("secure aggregation: computed, not run by dpdist (no secure aggregation protocol in dpdist); "
                            f"distributed discrete Laplace whose {honest:,} honest shares alone give the guarantee "
                            f"(Polya differences), {n:,} shares in all: {n / honest:.4g} x the central variance",))
