r"""Choice of a categorical frequency oracle without spending budget: ``local.make("auto", ...)``.

``auto`` builds every candidate oracle (:data:`CANDIDATES`) for the public
``epsilon`` and ``domain_size`` and ranks them by what is known before any
report arrives:

1. **Variance.**  The mean over items of the analytic variance of the unbiased
   estimator for :math:`n` reports, evaluated at the uniform frequencies
   :math:`f_v = 1/d`: every per-item variance is linear in :math:`f_v`, so this is
   the exact mean over items for *any* data whose frequencies sum to one (Fang, Chen
   & Liu, USENIX Security 2025, the accuracy measure behind RUE, RLH and RWS; for
   pure protocols :math:`q^*(1-q^*)/(n(p^*-q^*)^2) + (1-p^*-q^*)/(n d (p^*-q^*))`,
   the term at :math:`f_v = 0` of Wang et al., USENIX Security 2017, eq. 6, plus the
   data's share; HR's own formula where it differs), plus, for ``flh``, the bound
   :math:`1/(S(g-1))` on the mean square bias of its fixed public family of
   :math:`S` hash functions (Cormode, Maddock & Maple, VLDB 2021; the bias is
   :math:`\lVert f\rVert_2^2/(S(g-1))` and :math:`\lVert f\rVert_2 \le 1`).
   ``n`` is ``expected_reports`` (default :data:`EXPECTED_REPORTS`); only the
   FLH bias term makes the ranking depend on it.  With ``max_frequency``
   :math:`f^*` (a public bound on every item's frequency, 1 when nothing is
   known), the variance ranked is instead the worst case over items of frequency
   in :math:`[0, f^*]` (Pan, CSF 2025, eq. 1): the larger of the mean at
   :math:`f = 0` and the variance of an item at :math:`f^*` when the remaining
   mass is on one other item (for HR, whose variance grows with its block's mass,
   that item shares the block).  ``ocms`` is built for what is ranked: for that
   :math:`f^*` with the option, else with ``objective="l2"`` (its width minimizes
   the sum of the items' variances, :math:`d` times the mean ranked without it).
2. **Deployment limits**: ``max_report_bits`` (bits one report occupies in dpdist's
   report encoding, its report format's bytes a report; :data:`DEFAULT_MAX_REPORT_BITS`,
   128 KiB, unless given: ``None`` sets no limit),
   ``max_client_ops`` and ``max_server_ops`` (element operations per report on
   the device and at the collector, from the table :data:`COSTS`), each
   optional.  Candidates over a limit are excluded.
3. **Ties: then bits.**  Candidates whose variance is within :data:`TIE` (1 %) of the
   lowest are equivalent for accuracy; among them the smallest report wins (bits one
   report occupies: a device's upload, the relay's envelopes, the collector's storage),
   then the lowest server cost, the lowest client cost, then the order of
   :data:`CANDIDATES` (so GRR wins over SS with a subset of one, which is GRR).  So
   where PGR's point of :math:`\lceil \log_2 K \rceil` bits is within 1 % of subset
   selection's variance it is chosen over SS's :math:`d`-bit reports.

The choice and the full ranking are kept on the protocol and copied into every
estimate's ``details["auto_choice"]``, so a user can see why.  The protocol
itself is an ordinary instance of the chosen oracle (its config names it), so
states and report files are those of the chosen protocol.

:func:`lower_variance_oracle` keeps the two-way GRR/OUE rule of paper 003 sec. 2.1
that the binning and hierarchy protocols use for their inner oracles.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from ..._validation import (DOMAIN_SIZE, EPSILON, MAX_ALLOCATION_BYTES, Integer, Interval, Optional, check_param, label_list,
                            unknown_names_error)
from ...errors import DPDistError, InvalidParameterError
from .._registry import register_chooser, registered_class
from .flh import FLH
from ._oracle import check_max_frequency

__all__ = [
    "CANDIDATES",
    "COSTS",
    "DEFAULT_MAX_REPORT_BITS",
    "EXPECTED_REPORTS",
    "LIMITS",
    "SUMMARY",
    "TIE",
    "choose_protocol",
    "compare_protocols",
    "lower_variance_oracle",
]

#: The line ``dpdist list`` prints for ``auto`` (a choice made in ``local.make``, not a registered class).
SUMMARY = "the lowest-variance frequency oracle for epsilon and d within optional report-size and cost limits"

#: Oracles ``auto`` chooses among (``cp`` is left out: its error depends on the data's sparsity;
#: ``cms`` and ``hcms`` too: their point is a state independent of d, at a higher variance than OLH's).
CANDIDATES = ("grr", "oue", "sue", "olh", "ocms", "flh", "hr", "ss", "pgr", "rue", "rlh", "rws")

#: Relative variance difference under which two candidates count as equally accurate.
TIE = 0.01

#: Number of reports assumed when ``expected_reports`` is not given.
EXPECTED_REPORTS = 10**6

#: The report size ``auto`` stays within unless told otherwise (``max_report_bits``; ``None``: no limit): 128 KiB.
#: Every domain has a candidate within it (OLH's reports are 128 bits whatever ``d``, RWS's at most 64); what it
#: excludes is a device uploading a megabyte a value (the d bits of SUE, OUE or SS at d = 8*10^6), where RWS, OLH,
#: OCMS or HR cost little variance: SUE's worst case at f* = 1 against the best within 128 KiB, at most 9.6 % (epsilon
#: 0.05-10, the most at 1.8), and against the choice (the smallest report within TIE of that best) at most 10.8 %.
DEFAULT_MAX_REPORT_BITS = 2**20

#: Deployment limits accepted by ``local.make("auto", ...)``.
LIMITS = {
    "max_report_bits": Optional(Integer(low=1)),
    "max_client_ops": Optional(Interval(0.0, math.inf, closed="neither")),
    "max_server_ops": Optional(Interval(0.0, math.inf, closed="neither")),
    "expected_reports": Optional(Integer(low=1)),
    "max_frequency": Optional(Interval(0.0, 1.0, closed="both")),
}

_COMMON = {"epsilon": EPSILON, "domain_size": DOMAIN_SIZE}


class Cost(NamedTuple):
    """Element operations per report of one candidate: formulas (as documented) and their values."""

    client: str
    server: str
    client_ops: Callable[[Any, int], float]  # (protocol, expected reports) -> operations
    server_ops: Callable[[Any, int], float]


def _hadamard_server(protocol, n: int) -> float:
    size = protocol.output_size
    return 1.0 + size * math.log2(size) / n  # one count per report, then a fast Walsh-Hadamard transform


def _projective_server(protocol, n: int) -> float:
    cells = protocol.field_size**protocol.dimension
    return 1.0 + cells * math.log2(cells) / n  # one count per report, then a Fourier transform over F_q^t


#: Element operations per report, on the device and at the collector; documented in docs/explanation/frequency-oracles.md.
COSTS = {
    "grr": Cost("1", "1", lambda p, n: 1.0, lambda p, n: 1.0),  # one uniform draw; one count
    "oue": Cost("d", "d", lambda p, n: float(p.domain_size), lambda p, n: float(p.domain_size)),  # d bits
    "sue": Cost("d", "d", lambda p, n: float(p.domain_size), lambda p, n: float(p.domain_size)),
    "olh": Cost("1", "d", lambda p, n: 1.0, lambda p, n: float(p.domain_size)),  # the collector hashes every item
    "ocms": Cost("1", "d", lambda p, n: 1.0, lambda p, n: float(p.domain_size)),  # OLH's report at another width
    "flh": Cost("1", "1 + S d / n", lambda p, n: 1.0, lambda p, n: 1.0 + p.hash_count * p.domain_size / n),
    "hr": Cost("1", "1 + K log2 K / n", lambda p, n: 1.0, _hadamard_server),  # one Hadamard entry (a popcount)
    "ss": Cost("k", "k", lambda p, n: float(p.subset_size), lambda p, n: float(p.subset_size)),  # a k-subset
    "pgr": Cost("t", "1 + q^t log2(q^t) / n", lambda p, n: float(p.dimension), _projective_server),  # t digits mod q
    "rue": Cost("d", "d", lambda p, n: float(p.domain_size), lambda p, n: float(p.domain_size)),  # d bits
    "rlh": Cost("1", "d", lambda p, n: 1.0, lambda p, n: float(p.domain_size)),  # as OLH
    "rws": Cost("1", "k", lambda p, n: 1.0, lambda p, n: float(p.subset_size)),  # one spin; k positions
}


def lower_variance_oracle(epsilon: float, domain_size: int) -> str:
    """``"grr"`` when :math:`d < 3 e^\\varepsilon + 2` (its variance is then the lower), else ``"oue"``.

    The rule the binning and hierarchy protocols use for ``oracle="auto"``
    (paper 003 sec. 2.1).  Arguments are trusted (already validated by the caller).
    """
    return "grr" if domain_size < 3.0 * math.exp(epsilon) + 2.0 else "oue"


def _split(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    owner = "local.make('auto')"
    allowed = {"epsilon", "domain_size", "labels", *LIMITS}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise unknown_names_error(
            owner, unknown, allowed, note=" (pass protocol-specific parameters to local.make('<protocol>', ...) instead)"
        )
    labels = params.get("labels")
    protocol_params: dict[str, Any] = {key: params[key] for key in ("epsilon", "domain_size", "labels") if key in params}
    listed = label_list(labels)  # a list, a tuple, an array or a Series of labels alike
    if listed is not None:
        protocol_params["labels"] = listed
        protocol_params.setdefault("domain_size", len(listed))
    for key, constraint in _COMMON.items():
        check_param(owner, key, protocol_params.get(key), constraint)
    given = {"max_report_bits": DEFAULT_MAX_REPORT_BITS, **params}  # max_report_bits=None: no limit
    limits = {key: check_param(owner, key, given.get(key), constraint) for key, constraint in LIMITS.items()}
    if limits["max_frequency"] is not None:  # a bound below 1/d holds for no data set
        limits["max_frequency"] = check_max_frequency(owner, limits["max_frequency"], int(protocol_params["domain_size"]))
    return protocol_params, limits


def _rank(protocol_params: dict[str, Any], limits: dict[str, Any]) -> list[dict[str, Any]]:
    n = limits["expected_reports"] or EXPECTED_REPORTS
    rows = []
    for name in CANDIDATES:
        row: dict[str, Any] = {"protocol": name}
        oracle = registered_class(name)
        assert oracle is not None, f"{name} is registered"
        params = dict(protocol_params)
        if "max_frequency" in oracle._constraints:  # ocms: its width for the loss ranked
            if limits["max_frequency"] is None:
                params["objective"] = "l2"
            else:
                params["max_frequency"] = limits["max_frequency"]
        try:
            protocol = oracle(**params)
        except DPDistError as error:
            row.update(eligible=False, reason=f"not applicable: {error}")
            rows.append(row)
            continue
        variance = protocol.ranked_variance(n, limits["max_frequency"])
        if isinstance(protocol, FLH):
            variance += 1.0 / (protocol.hash_count * (protocol.hash_range - 1))
        row.update(
            variance=variance,
            report_bits=8 * protocol.report_format.row_bytes,  # what privatize sends a value (not one drawn: SS's d bits)
            client_ops=COSTS[name].client_ops(protocol, n),
            server_ops=COSTS[name].server_ops(protocol, n),
            protocol_object=protocol,
        )
        over = [
            f"{field} {row[field]:.4g} > {limits[limit]:.4g}"
            for field, limit in (
                ("report_bits", "max_report_bits"),
                ("client_ops", "max_client_ops"),
                ("server_ops", "max_server_ops"),
            )
            if limits[limit] is not None and row[field] > limits[limit]
        ]
        if not over and 8 * protocol.domain_size > MAX_ALLOCATION_BYTES:  # flh alone is built past 2^28 items
            over = [f"not applicable: its estimate of every item (a float64 each, {8 * protocol.domain_size:,} bytes) passes "
                    f"dpdist's allocation limit (dpdist.local.MAX_ALLOCATION_BYTES); query chosen items with "
                    f"{name}'s support_counts_of"]
        row.update(eligible=not over, reason="; ".join(over) if over else "")
        rows.append(row)
    return rows


def _choose(rows: list[dict[str, Any]], n: int, max_frequency: float | None = None) -> tuple[str, str]:
    eligible = [row for row in rows if row["eligible"]]
    if not eligible:
        raise _none_chosen(rows)
    best = min(row["variance"] for row in eligible)
    tied = [row for row in eligible if row["variance"] <= best * (1.0 + TIE)]
    chosen = min(tied, key=lambda row: (row["report_bits"], row["server_ops"], row["client_ops"],
                                        CANDIDATES.index(row["protocol"])))
    others = sorted(row["protocol"] for row in tied if row is not chosen)
    what = "variance" if max_frequency is None else f"worst-case variance (frequencies <= {max_frequency:g})"
    reason = (
        f"{chosen['protocol']}: lowest {what} {chosen['variance'] * n:.4g}/n per item at n = {n}"
        if not others
        else f"{chosen['protocol']}: {what} within {TIE:.0%} of the lowest (tied with {', '.join(others)}); "
        f"the smallest report ({chosen['report_bits']} bits) among them"
    )
    excluded = [row["protocol"] for row in rows if not row["eligible"] and row["reason"].startswith(("report", "client", "server"))]
    if excluded:
        reason += f"; excluded by the limits: {', '.join(excluded)}"
    return chosen["protocol"], reason


def _none_chosen(rows: list[dict[str, Any]]) -> InvalidParameterError:
    """Why no candidate was chosen: the limits given, or (no candidate built to begin with) the parameters, said by the
    first candidate's refusal (the others' say the same of themselves), and a candidate built but unable to estimate
    every item (flh past the allocation limit)."""
    if any(row["reason"].startswith(("report", "client", "server")) for row in rows):
        reasons = "; ".join(f"{row['protocol']}: {row['reason']}" for row in rows)
        return InvalidParameterError(
            f"local.make('auto') found no frequency oracle within the limits given ({reasons}). "
            "Relax 'max_report_bits', 'max_client_ops' or 'max_server_ops'."
        )
    built = "".join(f" ({row['protocol']} is built, but {row['reason'].removeprefix('not applicable: ')})"
                    for row in rows if "variance" in row)
    return InvalidParameterError(
        f"local.make('auto') has no candidate that estimates every item for these parameters: {rows[0]['protocol']}: "
        f"{rows[0]['reason'].removeprefix('not applicable: ')}{built}"
    )


def _public(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in row.items() if key != "protocol_object"} for row in rows]


def compare_protocols(**params: Any) -> list[dict[str, Any]]:
    """The table ``auto`` ranks: one dict per candidate.

    Each row has ``protocol``, ``eligible`` and ``reason`` (why it is excluded),
    and for applicable candidates ``variance`` (mean per-item variance at
    ``expected_reports`` reports, FLH's bias bound included), ``report_bits``,
    ``client_ops`` and ``server_ops``.  Takes the parameters of
    ``local.make("auto", ...)``.
    """
    protocol_params, limits = _split(params)
    return _public(_rank(protocol_params, limits))


def choose_protocol(**params: Any) -> str:
    """Registry name of the oracle ``local.make("auto", **params)`` builds."""
    protocol_params, limits = _split(params)
    rows = _rank(protocol_params, limits)
    return _choose(rows, limits["expected_reports"] or EXPECTED_REPORTS, limits["max_frequency"])[0]


def make_choice(**params):
    """Build the chosen oracle and attach the explanation (``protocol.auto_choice``)."""
    protocol_params, limits = _split(params)
    n = limits["expected_reports"] or EXPECTED_REPORTS
    rows = _rank(protocol_params, limits)
    name, reason = _choose(rows, n, limits["max_frequency"])
    protocol = next(row["protocol_object"] for row in rows if row["protocol"] == name)
    protocol.auto_choice = {
        "chosen": name,
        "reason": reason,
        "expected_reports": n,
        "limits": {key: value for key, value in limits.items() if key != "expected_reports" and value is not None},
        "candidates": _public(rows),
    }
    return protocol


register_chooser("auto", make_choice)
