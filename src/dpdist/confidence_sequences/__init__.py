r"""Confidence sequences: intervals and bands that hold at every number of reports at once (docs/explanation/uncertainty.md, "Live campaigns").

A campaign's estimate is watched while reports arrive (its dashboard polls every
3 s).  A fixed-n 95 % interval read at whatever moment looks good is not a 95 %
interval: the chance that the truth is outside it at *some* look grows with the
number of looks (``docs/explanation/uncertainty.md`` measures it).  A confidence sequence
holds at every :math:`n` at once, so it may be looked at continuously and a
collection may stop whenever the band is narrow enough.

:func:`confidence_sequence` builds one from a protocol and its aggregate alone
(the aggregate keeps sums of reports, not their order), by the beta-binomial
mixture of Howard, Ramdas, McAuliffe & Sekhon (2021) on each report statistic
whose expectation is linear in the population (:mod:`._boundary`):

* frequency oracles: every item's frequency, per item and all items at once
  (:class:`FrequencySequence`; :mod:`._frequency`);
* PM, SR: the mean (:class:`MeanSequence`);
* binning, hh, hh-admm, sw, gw: the CDF at a grid of points, with quantile and
  mean intervals (:class:`CDFSequence`; :mod:`._distribution`).

Each result has ``stop_readout(width)``: whether its band is narrower than
``width`` now, and the number of reports at which it will be.

>>> import numpy as np
>>> from dpdist import local
>>> from dpdist.confidence_sequences import confidence_sequence
>>> grr = local.make("grr", epsilon=2.0, domain_size=4)
>>> aggregate = grr.simulate(np.random.default_rng(0).choice(4, 5000, p=[.4, .3, .2, .1]), rng=1)
>>> sequence = confidence_sequence(grr, aggregate)
>>> bool(np.all((sequence.simultaneous_low <= [.4, .3, .2, .1]) & ([.4, .3, .2, .1] <= sequence.simultaneous_high)))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._validation import Admits, Interval, check_param
from ..errors import InvalidParameterError
from ..local._protocol import LocalProtocol
from ..local.frequency._oracle import FrequencyOracle
from ..local.numerical._mean import MeanProtocol
from ..local.numerical._wave_protocol import WaveProtocol
from ..local.numerical.binning import Binning
from ..local.numerical.hh import HierarchicalHistogram
from ._boundary import DEFAULT_TARGET_N, mixture_interval
from ._distribution import DEFAULT_CELLS, cdf_sequence
from ._frequency import frequency_sequence, mean_sequence
from ._results import CDFSequence, FrequencySequence, MeanSequence, StopReadout

if TYPE_CHECKING:
    from ..local._aggregator import Aggregator

__all__ = [
    "CDFSequence",
    "DEFAULT_TARGET_N",
    "FrequencySequence",
    "MeanSequence",
    "StopReadout",
    "confidence_sequence",
    "mixture_interval",
    "why_no_sequence",
]


def why_no_sequence(protocol: LocalProtocol) -> str | None:
    """Why ``protocol`` has no confidence sequence (``None`` when it has one)."""

    if isinstance(protocol, FrequencyOracle):
        if not protocol.tags.unbiased:
            return (f"{protocol.display_name}'s estimate is not unbiased for a fixed configuration (a fixed hash "
                    "family or a sparse decoder), so its error does not shrink to zero with n: no interval can "
                    "hold at every n")
        try:
            protocol.support_probabilities()
        except NotImplementedError:
            return f"{protocol.display_name} has no support probabilities to debias a sequence with"
        return None
    if isinstance(protocol, (MeanProtocol, Binning, HierarchicalHistogram, WaveProtocol)):
        return None
    if protocol.tags.kind == "heavy_hitters":
        return (f"{protocol.display_name} estimates its candidates with FLH's fixed hash family, whose bias does not "
                "shrink with n (docs/explanation/frequency-oracles.md), and the candidates change as reports arrive: no interval can "
                "hold at every n")
    return (f"no confidence sequence is implemented for {protocol.display_name} ({protocol.tags.kind}): "
            "its reports have no statistic with a known linear expectation that the aggregate keeps")


#: The protocols with a confidence sequence (:func:`why_no_sequence` says why another has none).
_SEQUENCED = Admits(LocalProtocol, why_no_sequence, "a dpdist local protocol with a confidence sequence: an unbiased "
                    "frequency oracle with support probabilities, a mean protocol, binning, hh, or a wave protocol")


def confidence_sequence(protocol: LocalProtocol, aggregator: Aggregator, *, level: float = 0.95,
                        target_n: float = DEFAULT_TARGET_N,
                        cells: int | None = None) -> FrequencySequence | MeanSequence | CDFSequence:
    """The confidence sequence of what ``protocol``'s campaign tracks, from its aggregate.

    Parameters
    ----------
    protocol : LocalProtocol
    aggregator : Aggregator
        The protocol's aggregate (all reports so far).
    level : float
        Probability that the truth is inside at every number of reports at once.
    target_n : float
        Number of reports the boundary is tuned for (fixed before the collection;
        any value is valid, the width is smallest near it).
    cells : int, optional
        Distributions only: at most this many cells, whose edges are the band's
        points (default 32).

    Returns
    -------
    FrequencySequence, MeanSequence or CDFSequence

    Raises
    ------
    InvalidParameterError
        When the protocol has none (:func:`why_no_sequence` says why), or its
        reports contradict its channel at this level.
    """

    level = check_param("confidence_sequence", "level", level, Interval(0.0, 1.0, closed="neither"))
    target_n = check_param("confidence_sequence", "target_n", target_n, Interval(1.0, 1e15))
    check_param("confidence_sequence", "protocol", protocol, _SEQUENCED)
    aggregator._check_protocol(protocol)
    if isinstance(protocol, FrequencyOracle):
        return frequency_sequence(protocol, aggregator, level, target_n)
    if isinstance(protocol, MeanProtocol):
        return mean_sequence(protocol, aggregator, level, target_n)
    count = DEFAULT_CELLS if cells is None else int(check_param("confidence_sequence", "cells", cells, Interval(2, 4096)))
    result = cdf_sequence(protocol, aggregator, level, target_n, cells=count)
    if isinstance(result, str):
        raise InvalidParameterError(f"confidence_sequence: {result}.")
    return result
