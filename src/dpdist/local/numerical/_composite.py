r"""Numerical protocols built from categorical frequency oracles (binning, hierarchies).

Helpers shared by ``binning`` and ``hh``/``hh-admm``:

* :func:`choose_oracle` -- the variance rule of paper 003 sec. 2.1 / paper 000
  sec. 6 ("Binning-d"), as stated once in
  :func:`dpdist.local.frequency.auto.lower_variance_oracle`: GRR when
  :math:`d < 3e^\varepsilon + 2`, else OUE.
* :func:`make_oracle` -- ``local.make(name, epsilon=..., domain_size=...)``, with
  errors naming the ``oracle`` parameter of the outer protocol.
* :class:`ReportCodec` -- fixed-width byte records for an inner oracle's reports,
  so that reports of oracles over different domain sizes (the levels of a
  hierarchy) fit one array.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ..._validation import Described, Options, check_param
from ...errors import InvalidParameterError, MalformedReportError
from .. import _protocol
from .._aggregator import Aggregator
from ..frequency._oracle import FrequencyOracle
from ..frequency.auto import lower_variance_oracle

__all__ = ["ORACLES", "choose_oracle", "make_oracle", "ReportCodec", "inner_aggregator", "unbiased_rows"]

#: values of the ``oracle`` parameter
ORACLES = ("auto", "grr", "oue", "olh")


def choose_oracle(oracle: str, domain_size: int, epsilon: float) -> str:
    """The registry name of the categorical oracle to use over ``domain_size`` items."""
    if oracle != "auto":
        return oracle
    return lower_variance_oracle(epsilon, domain_size)


def make_oracle(owner: str, oracle: str, domain_size: int, epsilon: float) -> FrequencyOracle:
    """Build the inner oracle through the registry (so OLH works once it is registered); every registered
    ``"frequency"`` protocol is a :class:`FrequencyOracle`."""
    name = choose_oracle(oracle, domain_size, epsilon)
    registered = tuple(o for o in ORACLES if o != "auto" and o in _protocol.available("frequency"))
    check_param(owner, "oracle", name, Described(Options(registered), f"a registered categorical oracle {list(registered)} "
                                                                      "or 'auto'"))
    return cast(FrequencyOracle, _protocol.make(name, epsilon=epsilon, domain_size=domain_size))


def inner_aggregator(oracle, statistic: np.ndarray, n: int):
    """An aggregator of ``oracle`` holding a given statistic (a slice of an outer state)."""
    state = {"config": oracle.config(), "n": int(n), "statistic": np.asarray(statistic, dtype=oracle.statistic_dtype)}
    return Aggregator.from_dict(state, oracle)


def unbiased_rows(oracle, statistics: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""The unbiased frequencies of each row of ``statistics`` (one oracle aggregate per row, of ``counts[i]`` reports).

    Row ``i`` is ``oracle.estimate(inner_aggregator(oracle, statistics[i], counts[i])).frequencies``, uniform when
    ``counts[i]`` is 0 (a level with no report), with the same arithmetic:
    :math:`(C_v/n - q^*)/(p^* - q^*)` on the support counts (paper 003 sec. 2.1), for a block of aggregates at once
    (the parametric bootstrap of :func:`dpdist.uncertainty.cdf_band` refits hundreds).  An oracle whose support
    counts or estimate are its own (not :class:`FrequencyOracle`'s) is estimated row by row.
    """
    statistics = np.asarray(statistics)
    counts = np.asarray(counts, dtype=np.int64)
    cls = type(oracle)
    if cls.support_counts is not FrequencyOracle.support_counts or cls._estimate is not FrequencyOracle._estimate:
        return np.array([
            np.full(oracle.domain_size, 1.0 / oracle.domain_size) if count == 0
            else np.asarray(oracle.estimate(inner_aggregator(oracle, row, int(count))).frequencies)
            for row, count in zip(statistics, counts)
        ]).reshape(counts.size, oracle.domain_size)
    p_star, q_star = oracle.support_probabilities()
    support = statistics.astype(oracle.statistic_dtype).astype(np.float64)
    reported = counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        frequencies = (support / counts[:, None] - q_star) / (p_star - q_star)
    return np.where(reported[:, None], frequencies, 1.0 / oracle.domain_size)


class ReportCodec:
    """Little-endian byte records of one oracle's reports (one fixed-size row per report).

    The row layout (dtype and per-report shape) is the oracle's declared
    ``report_format``, so any oracle whose batches are NumPy arrays with one row
    per report works (GRR: integers; OUE: packed bits; OLH: whatever its format is).
    """

    def __init__(self, oracle):
        try:
            dtype, row_shape = oracle.report_format.dtype, oracle.report_format.row_shape
        except MalformedReportError as error:
            raise InvalidParameterError(
                f"{oracle.display_name} reports are not fixed-size array rows; cannot embed them "
                f"in a composite report ({error})."
            ) from None
        self.dtype = dtype
        self.wire_dtype = dtype.newbyteorder("<")
        self.row_shape = row_shape
        self.width = self.wire_dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64))

    def encode(self, reports, width: int) -> np.ndarray:
        """``(n, width)`` uint8 rows: the report's bytes, then zero padding."""
        array = np.ascontiguousarray(np.asarray(reports), dtype=self.wire_dtype)
        out = np.zeros((array.shape[0], width), dtype=np.uint8)
        out[:, : self.width] = array.reshape(array.shape[0], -1).view(np.uint8).reshape(array.shape[0], self.width)
        return out

    def decode(self, payload: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`encode` (``payload`` of shape ``(n, width)``)."""
        rows = np.ascontiguousarray(payload[:, : self.width])
        decoded = rows.view(self.wire_dtype).reshape((rows.shape[0],) + self.row_shape)
        return decoded.astype(self.dtype, copy=False)

    def padding_set(self, payload: np.ndarray) -> np.ndarray:
        """Rows whose padding bytes are not all zero (malformed)."""
        if payload.shape[1] == self.width:
            return np.zeros(payload.shape[0], dtype=bool)
        return np.any(payload[:, self.width :] != 0, axis=1)

