"""One validator of aggregator states, for every protocol and every path that loads or merges one.

An aggregator state (``Aggregator.to_dict()``, a state file, a Dask partial, a
row of the collection service) is untrusted input: a corrupt or forged state must
be refused, never turned into a silently wrong estimate.  :func:`check_state`
accepts exactly the states some sequence of ``add`` calls could have produced, up
to what the statistic alone can tell:

* ``format`` is ``"dpdist-aggregator"`` and ``version`` one this dpdist reads;
* ``n`` is a Python or NumPy integer (not a bool, float or string) in
  ``[0, MAX_REPORTS]``;
* ``rejected`` maps strings to integers in ``[0, MAX_REPORTS]``;
* ``statistic`` has the protocol's length, finite integral entries, each at most
  ``n`` in absolute value (every report moves each entry by at most one) and
  non-negative unless the protocol's statistic is signed;
* the statistic sums to ``statistic_total_per_report * n`` when the protocol
  declares that every report adds the same total (a histogram of one output per
  report: 1; subset selection: k);
* whatever else the protocol's own ``_check_statistic`` requires (its structure:
  e.g. per-row counts of a sketch, per-level counts of a tree).

The last two are declared by each protocol (:class:`~dpdist.local.LocalProtocol`),
never switched on here, so a new protocol states its invariant where its
statistic is defined.  Composite protocols (a tree of oracles, binning) check
their parts with :func:`statistic_problem` of the inner protocol.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np

from ..errors import IncompatibleStateError
from ._registry import CONFIG_VERSION, rebuild

__all__ = [
    "STATE_FORMAT",
    "MAX_REPORTS",
    "check_state",
    "check_statistic",
    "statistic_problem",
    "statistics_possible",
    "exact_sum",
    "signed_sums_problem",
    "level_sums_problem",
    "check_count",
    "check_counts",
]

STATE_FORMAT = "dpdist-aggregator"
#: Largest report count a state may hold: counts stay exact in float64 and sums of two never overflow int64.
MAX_REPORTS = 2**53


def _is_integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_count(value, what: str) -> int:
    """A report count: an integer (not bool/float/str) in ``[0, MAX_REPORTS]``."""
    if not _is_integer(value) or not 0 <= int(value) <= MAX_REPORTS:
        raise IncompatibleStateError(
            f"The state's {what} must be an integer in [0, 2**53]. Got {value!r} "
            f"({type(value).__name__}) instead; the state is corrupt."
        )
    return int(value)


def check_counts(rejected) -> dict[str, int]:
    """The rejected-report counts: a dict of reason (str) -> count."""
    if not isinstance(rejected, dict):
        raise IncompatibleStateError(
            f"The state's 'rejected' must be a dict of reason -> count. Got {type(rejected).__name__} instead."
        )
    out = {}
    for reason, count in rejected.items():
        if not isinstance(reason, str):
            raise IncompatibleStateError(f"The state's rejected reasons must be strings. Got {reason!r} instead.")
        out[reason] = check_count(count, f"rejected count {reason!r}")
    return out


def exact_sum(values: np.ndarray) -> int | float:
    """The exact sum of integral entries (each at most 2**53 in absolute value) as a Python int.

    A float64 or int64 sum could round or wrap for a forged statistic, and a
    forged state must not pass an equality check by overflow: when the int64 sum
    could wrap, each entry is split into 32-bit halves whose int64 sums cannot.
    Entries that are not integral are summed by :func:`math.fsum` (correctly rounded).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return 0
    largest = float(np.max(np.abs(values)))
    if not (largest <= MAX_REPORTS and np.array_equal(values, np.round(values))):
        return math.fsum(values.tolist())
    integers = values.astype(np.int64)
    if largest * values.size < 2.0**62:
        return int(integers.sum())
    high, low = np.divmod(integers, np.int64(1) << 32)
    return (int(high.sum()) << 32) + int(low.sum())


def statistic_problem(protocol, values: np.ndarray, n: int) -> str | None:
    """Why no ``n`` reports of ``protocol`` can have the statistic ``values`` (None if some can).

    ``values`` is a float64 vector of the protocol's length.  Checked in order:
    finite entries, each at most ``n`` in absolute value, non-negative unless the
    statistic is signed, integral for an integer statistic, the declared total
    (``protocol.statistic_total_per_report``), then ``protocol._check_statistic``.
    """
    if not np.all(np.isfinite(values)):
        return "non-finite entries"
    if np.any(np.abs(values) > n):
        return f"an entry of absolute value above n={n}"
    if not protocol.statistic_signed and np.any(values < 0):
        return "negative counts"
    if np.issubdtype(protocol.statistic_dtype, np.integer) and not np.array_equal(values, np.round(values)):
        return "non-integer counts"
    per_report = protocol.statistic_total_per_report
    if per_report is not None:
        total = exact_sum(values)
        if total != per_report * n:
            return (
                f"the entries must sum to n x {per_report} = {per_report * n} (each report adds exactly "
                f"{per_report}), but they sum to {total}"
            )
    return protocol._check_statistic(values, n)


def statistics_possible(protocol, values: np.ndarray, ns) -> bool:
    """Whether every row of ``values`` (float64, one statistic of ``protocol`` a row) passes
    :func:`statistic_problem` with its count in ``ns``: the same checks, each on the whole block at once but the
    protocol's own ``_check_statistic`` (row by row).  For an integer statistic only (False otherwise: check each row);
    False also where the exact row totals would need more than int64 sums.  A False says nothing about which row is
    wrong: the caller checks each row with :func:`check_statistic`, which names the first problem."""
    if (not np.issubdtype(protocol.statistic_dtype, np.integer) or values.ndim != 2 or values.size == 0
            or len(ns) != values.shape[0]):
        return False
    counts = np.asarray(ns, dtype=np.float64)[:, None]
    if not (np.all(np.isfinite(values)) and np.all(np.abs(values) <= counts)
                            and (protocol.statistic_signed or np.all(values >= 0))
                            and np.array_equal(values, np.round(values))):
        return False
    per_report = protocol.statistic_total_per_report
    if per_report is not None:
        if float(np.max(np.abs(values))) * values.shape[1] >= 2.0**62:  # exact_sum's int64 limit: checked row by row
            return False
        totals = values.astype(np.int64).sum(axis=1)
        if any(int(total) != per_report * int(n) for total, n in zip(totals, ns)):
            return False
    return all(protocol._check_statistic(row, int(n)) is None for row, n in zip(values, ns))


def signed_sums_problem(sums: np.ndarray, count: int, per_report: int) -> str | None:
    """Why ``count`` reports, each adding +-1 to exactly ``per_report`` distinct entries, cannot sum to ``sums``.

    Entry :math:`i` is touched by :math:`a_i` reports with :math:`|S_i| \\le a_i \\le
    count` and :math:`a_i \\equiv S_i \\pmod 2`, and :math:`\\sum_i a_i = per\\_report
    \\cdot count`; any such :math:`a` is realised by ``count`` subsets of size
    ``per_report`` (no entry is used more than ``count`` times).  So ``sums`` is
    possible exactly when :math:`\\sum_i |S_i| \\le m c \\le \\sum_i a^{\\max}_i`
    (:math:`a^{\\max}_i` the largest value :math:`\\le c` of the parity of :math:`S_i`)
    and :math:`m c - \\sum_i S_i` is even.
    """
    sums = np.asarray(sums, dtype=np.float64)
    needed = per_report * count
    if np.any(np.abs(sums) > count):
        return f"an entry of absolute value above its {count} report(s)"
    touched = exact_sum(np.abs(sums))
    most = exact_sum(count - np.mod(count - sums, 2))
    if not touched <= needed <= most:
        return (
            f"{count} report(s) touching {per_report} entr{'y' if per_report == 1 else 'ies'} each touch "
            f"{needed} in all, but these sums need between {touched} and {most}"
        )
    if (needed - exact_sum(sums)) % 2:
        return f"the sums have the wrong parity for {count} report(s) of {per_report} +-1 entr{'y' if per_report == 1 else 'ies'}"
    return None


def level_sums_problem(statistic: np.ndarray, n: int, offsets, per_report, *, first_level: int = 0) -> str | None:
    """A statistic of per-level report counts, then per level the +-1 sums of its reports (Haar protocols).

    ``statistic[:L]`` counts the reports of each of the ``L`` levels (``L =
    len(offsets) - 1``), which must be non-negative and sum to ``n``; level ``l``'s sums
    are ``statistic[offsets[l]:offsets[l + 1]]``, each report of the level adding +-1
    to ``per_report[l]`` of them (:func:`signed_sums_problem`).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    levels = offsets.size - 1
    counts = statistic[:levels]
    if np.any(counts < 0):
        return "a negative level count"
    if exact_sum(counts) != n:
        return f"the level counts sum to {exact_sum(counts)}, not n={n}"
    suspects: Iterable[int] = range(levels)
    sums = statistic[offsets[0] : offsets[-1]]
    if float(n) * max(sums.size, 1) < 2.0**60:  # int64 sums per level are exact: find the bad levels at once
        count = counts.astype(np.int64)
        entry_count = np.repeat(count, np.diff(offsets))
        values = sums.astype(np.int64)
        starts = offsets[:-1] - offsets[0]
        needed = np.asarray(per_report, dtype=np.int64) * count
        bad = (
            (np.maximum.reduceat(np.abs(values) - entry_count, starts) > 0)
            | (np.add.reduceat(np.abs(values), starts) > needed)
            | (np.add.reduceat(entry_count - np.mod(entry_count - values, 2), starts) < needed)
            | ((needed - np.add.reduceat(values, starts)) % 2 != 0)
        )
        suspects = np.flatnonzero(bad)
    for level in suspects:
        part = statistic[int(offsets[level]) : int(offsets[level + 1])]
        problem = signed_sums_problem(part, int(counts[level]), int(per_report[level]))
        if problem is not None:
            return f"level {first_level + int(level)}: {problem}"
    return None


def check_statistic(protocol, statistic, n: int) -> np.ndarray:
    """The statistic as the protocol's dtype, or ``IncompatibleStateError`` naming what is impossible."""
    try:
        values = np.asarray(statistic, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise IncompatibleStateError(f"The state's statistic is not a vector of numbers ({error}).") from None
    if values.shape != (protocol.statistic_size,):
        raise IncompatibleStateError(
            f"The state's statistic has shape {values.shape}; {protocol.display_name} needs "
            f"shape ({protocol.statistic_size},)."
        )
    problem = statistic_problem(protocol, values, n)
    if problem is not None:
        raise IncompatibleStateError(
            f"The state's statistic is not one {protocol.display_name} can produce with n={n} reports "
            f"({problem}); the state is corrupt."
        )
    return values.astype(protocol.statistic_dtype)


def check_state(state, protocol=None) -> tuple[Any, np.ndarray, int, dict[str, int]]:
    """Validate a state dict; return ``(protocol, statistic, n, rejected)``.

    Parameters
    ----------
    state : dict
        As written by :meth:`Aggregator.to_dict`.
    protocol : LocalProtocol, optional
        When given, the state's config must equal the protocol's.

    Raises
    ------
    IncompatibleStateError
        Naming the first field that no sequence of ``add`` calls could produce.
    """
    if not isinstance(state, dict):
        raise IncompatibleStateError(f"An aggregator state must be a dict. Got {type(state).__name__} instead.")
    missing = [key for key in ("config", "n", "statistic") if key not in state]
    if missing:
        raise IncompatibleStateError(f"Not an aggregator state: missing field(s) {missing}.")
    if state.get("format", STATE_FORMAT) != STATE_FORMAT:
        raise IncompatibleStateError(
            f"Not an aggregator state: format {state['format']!r} (expected {STATE_FORMAT!r})."
        )
    if state.get("version", CONFIG_VERSION) != CONFIG_VERSION:
        raise IncompatibleStateError(
            f"Aggregator state version {state['version']!r} is not supported (this dpdist reads {CONFIG_VERSION})."
        )
    config = state["config"]
    if protocol is not None and protocol.config() != config:
        raise IncompatibleStateError(
            f"The state's config {config} differs from the protocol's config {protocol.config()}."
        )
    if protocol is None:
        try:
            protocol = rebuild(config)
        except (ValueError, TypeError) as error:
            raise IncompatibleStateError(f"The state's config cannot be rebuilt: {error}") from None
    n = check_count(state["n"], "'n'")
    rejected = check_counts(state.get("rejected", {}))
    statistic = check_statistic(protocol, state["statistic"], n)
    return protocol, statistic, n, rejected
