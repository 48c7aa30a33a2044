"""Exact joint laws of one device's reports over time, for protocols that memoize a permanent response.

A memoized protocol's :math:`T` reports of a history of memo keys
:math:`k_1, \\dots, k_T` have the law

.. math::

    P(y_{1..T} \\mid k) = \\prod_{c} \\sum_s P_{\\mathrm{PRR}}[c, s] \\prod_{t:\\,k_t = c} P_{\\mathrm{IRR}}[s, y_t],

one factor per distinct key :math:`c` (each key's memo is drawn once and kept).
:func:`history_log_laws` computes it for every key history in :math:`[K]^T` and every
output sequence, so the largest privacy loss between any two histories is
exact: ``max over outputs of (max over histories - min over histories)`` of the
log-law.  For LOLOHA the keys are hash values and the (public, data-independent)
hash seed factors out of the ratio, so key histories cover every seed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["all_histories", "history_log_laws", "largest_loss", "largest_reports", "memo_channels"]


def memo_channels(protocol) -> tuple[np.ndarray, np.ndarray]:
    """``(P_PRR[key, memo], P_IRR[memo, output])`` of a memoized protocol (small instances)."""
    return np.asarray(protocol.permanent_channel(), dtype=np.float64), np.asarray(
        protocol.instantaneous_channel(), dtype=np.float64
    )


def history_log_laws(permanent: np.ndarray, instantaneous: np.ndarray, histories: np.ndarray) -> np.ndarray:
    """``log P(outputs | history)``: rows are ``histories`` (key sequences), columns every output sequence.

    Output sequence ``j`` is the base-``Y`` digits of ``j``, first report most significant.
    """
    histories = np.asarray(histories, dtype=np.int64)
    reports = histories.shape[1]
    outputs = instantaneous.shape[1]
    sequences = np.array(list(itertools.product(range(outputs), repeat=reports)), dtype=np.int64)
    log_irr = np.log(instantaneous)  # (memo, output)
    laws = np.empty((histories.shape[0], sequences.shape[0]))
    for row, history in enumerate(histories):
        total = np.zeros(sequences.shape[0])
        for key in np.unique(history):
            positions = np.flatnonzero(history == key)
            # log prod_t P_IRR[s, y_t] for every memo s and output sequence, then mix over the memo's law
            given_memo = log_irr[:, sequences[:, positions]].sum(axis=2)  # (memo, sequence)
            peak = given_memo.max(axis=0)
            total += peak + np.log(permanent[key] @ np.exp(given_memo - peak))
        laws[row] = total
    return laws


def largest_loss(log_laws: np.ndarray) -> float:
    """The largest privacy loss between any two rows, over every output (``inf`` where one row is 0)."""
    with np.errstate(invalid="ignore"):
        spread = log_laws.max(axis=0) - log_laws.min(axis=0)
    return float(np.nanmax(spread)) if spread.size else 0.0


def all_histories(keys: int, reports: int) -> np.ndarray:
    """Every key sequence of length ``reports`` over ``keys`` keys."""
    return np.array(list(itertools.product(range(keys), repeat=reports)), dtype=np.int64)


def largest_reports(keys: int, outputs: int, max_cells: int) -> int:
    """The largest ``T`` whose ``keys**T x outputs**T`` law matrix has at most ``max_cells`` cells."""
    return max(1, int(math.floor(math.log(max_cells) / math.log(keys * outputs))))
