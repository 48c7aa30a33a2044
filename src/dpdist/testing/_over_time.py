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

    Output sequence ``j`` is the base-``Y`` digits of ``j``, first report most significant.  A key's factor
    (the module docstring) depends only on the key and the set of reports it keyed, so each (key, set of
    reports) pair is mixed once for every history that has it (the sets are bit masks over the ``T``
    reports, a block of sets at a time), and a history's row is the sum of its keys' factors (a key it
    never has contributes ``log sum_s P_PRR[c, s] = 0``).
    """
    histories = np.asarray(histories, dtype=np.int64)
    rows, reports = histories.shape
    keys, memos = permanent.shape
    outputs = instantaneous.shape[1]
    count = outputs**reports
    # output sequence j is the base-Y digits of j, first report most significant: the sequences are the cells of a
    # (Y,) * T grid in C order, and report t's log P_IRR[s, y_t] is log P_IRR broadcast along the grid's axis t
    log_irr = np.log(instantaneous)  # (memo, output)
    grid = (memos,) + (outputs,) * reports

    def per_report(t: int) -> np.ndarray:  # (memo x sequence,): log P_IRR[s, y_t] of every memo and sequence
        along = log_irr.reshape((memos,) + (1,) * t + (outputs,) + (1,) * (reports - 1 - t))
        return np.broadcast_to(along, grid).reshape(memos * count)
    bits = np.int64(1) << np.arange(reports, dtype=np.int64)
    masks = ((histories[:, :, None] == np.arange(keys)) * bits[None, :, None]).sum(axis=1)  # (history, key)
    needed = np.unique(masks[masks > 0])
    laws = np.zeros((rows, count))
    block = max(1, _BLOCK_CELLS // (memos * count))
    for start in range(0, needed.size, block):
        sets = needed[start : start + block]
        # log prod_{t in set} P_IRR[s, y_t], t in report order
        given_memo = np.zeros((sets.size, memos * count))
        for t in range(reports):  # adding, not multiplying by 0/1: a zero of P_IRR is -inf, and 0 * -inf is nan
            held = ((sets & bits[t]) > 0)[:, None]
            np.add(given_memo, per_report(t), out=given_memo, where=held)  # in place, on the sets holding report t
        given_memo = given_memo.reshape(sets.size, memos, count)
        peak = given_memo.max(axis=1)  # (set, sequence)
        given_memo -= peak[:, None, :]  # then exp, in place: no second and third array of the block's size
        mixed = np.einsum("km,pms->kps", permanent, np.exp(given_memo, out=given_memo))
        mixed = peak + np.log(mixed, out=mixed)
        for key in range(keys):
            mask = masks[:, key]
            here = (mask >= sets[0]) & (mask <= sets[-1])
            laws[here] += mixed[key, np.searchsorted(sets, mask[here])]
    return laws


#: cells of one block of (set of reports, memo, output sequence) in :func:`history_log_laws` (512 KiB of doubles:
#: a block that stays in the cache; blocks of 32 MiB cost twice the CPU, half of it the kernel mapping fresh pages)
_BLOCK_CELLS = 1 << 16


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
