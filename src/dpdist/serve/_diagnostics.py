r"""Poisoning diagnostics: report distributions that no honest population can produce (docs/explanation/poisoning.md, "Poisoning diagnostics").

Local differential privacy cannot stop fake users: Cheu, Smith & Ullman
("Manipulation Attacks in Local Differential Privacy", IEEE S&P 2021) show that
:math:`m` corrupted users can shift a frequency estimate by about
:math:`m / (n \varepsilon)` per item *without* their reports looking any different
from honest ones, and that the larger the noise, the larger the shift.  What can
be detected is an aggregate that lies outside what every honest population
produces, e.g. the maximal-gain attacks of Cao, Jia & Gong ("Data Poisoning
Attacks to Local Differential Privacy Protocols", USENIX Security 2021), whose
fake reports support chosen items far more often than any report can.

The test.  In a pure frequency oracle (Wang et al., USENIX Security 2017) each
honest report supports item :math:`v` independently with probability :math:`p^*`
(its user holds :math:`v`) or :math:`q^*` (otherwise), so the support count
:math:`C_v` of :math:`n` honest reports is a sum of independent Bernoulli
variables with parameters in :math:`\{q^*, p^*\}`.  Such a sum is stochastically
larger than :math:`\mathrm{Bin}(n, q^*)` and smaller than :math:`\mathrm{Bin}(n, p^*)`
(raising one parameter raises the sum stochastically), whatever the population.
So the one-sided p-values

.. math::

    P_v^{\mathrm{low}} = \Pr[\mathrm{Bin}(n, q^*) \le C_v], \qquad
    P_v^{\mathrm{high}} = \Pr[\mathrm{Bin}(n, p^*) \ge C_v]

are valid for every honest population and every :math:`n` (exact binomial tails,
no normal approximation), and flagging the campaign when any of the :math:`2d`
p-values is below :math:`\alpha / (2d)` (Bonferroni) raises a false alarm with
probability at most :math:`\alpha` = :data:`ALPHA` per evaluation.  It is the
test of the support counts against the feasible region :math:`[n q^*, n p^*]`
beyond sampling error.  Attacks that stay inside the region are not detected
(Cheu et al.: no test can detect them all); a flag means the reports of the
campaign cannot all be honest reports of this protocol.

Unary encodings (OUE, SUE, RUE, L-OSUE) send one independent bit per item, so the
number of bits a report sets, :math:`\mathrm{Bern}(p^*) + \mathrm{Bin}(d-1, q^*)`,
does not depend on the user's item: the total support :math:`S = \sum_v C_v` of
:math:`n` honest reports has mean :math:`n(p^* + (d-1)q^*)` and variance
:math:`\sigma^2 = n(p^*(1-p^*) + (d-1)q^*(1-q^*))` whatever the population.  Its
two-sided p-value from Bernstein's inequality, :math:`2\exp(-t^2 / (2(\sigma^2 + t/3)))`
for a deviation :math:`t` (each bit deviates from its mean by at most 1), is valid
(conservative) for every :math:`n`; it catches the maximal-gain attack (fake
reports setting every bit), which a few percent of fake users make visible in the
total long before any single item leaves its region.  With it the campaign is
flagged when any of the :math:`2d + 1` p-values is below :math:`\alpha/(2d+1)`.

It applies to the protocols whose support of an item is exactly such a Bernoulli
per report, which declare it (``tags.bernoulli_support``; :data:`TESTED` lists them), each with its own
:math:`(p^*, q^*)` (``support_probabilities``): GRR, the unary encodings OUE, SUE and RUE (RUE is OUE's
structure with other :math:`p, q`; ``tags.independent_bits``, :data:`UNARY`), local hashing OLH, RLH and
OCMS (RLH is OLH with another range :math:`g`, OCMS with the range of Pan, CSF 2025; :math:`q^*` holds the
hash family's exact collision probability), subset selection SS, projective geometry response PGR, and RWS (a report supports an item with probability
:math:`p^*` if it is its user's, :math:`q^*` exactly otherwise: :mod:`dpdist.local.frequency.rws`; the
supports of different items are dependent, which the per-item test does not need), and the memoized
L-GRR and L-OSUE; other protocols get ``"test": null`` and the reason.

A round of a campaign in rounds (``threshold``, :mod:`dpdist.local.numerical.threshold`) has the
same structure per cut: an honest report picks its cut :math:`j` by a public coin, independent
of its value, and answers "below" with probability :math:`p` (its value is below the cut) or
:math:`1-p` (it is not), so given the :math:`n_j` reports on cut :math:`j` the count :math:`Y_j`
of "below" answers lies between :math:`\mathrm{Bin}(n_j, 1-p)` and :math:`\mathrm{Bin}(n_j, p)`
whatever the population, and so does the total :math:`Y = \sum_j Y_j` between
:math:`\mathrm{Bin}(n, 1-p)` and :math:`\mathrm{Bin}(n, p)`.  The round is flagged when any of
the :math:`2T + 2` one-sided exact p-values is below :math:`\alpha / (2T + 2)`
(``"test": "below_fractions"``; ``items_*`` are cut indices): 1,000 answers all "below" at
:math:`\varepsilon = 1` have :math:`p^{1000} < 10^{-130}` (docs/explanation/poisoning.md, "Poisoning diagnostics").  Answers that stay
inside :math:`[1-p, p]` (a plausible other population) are not detected.

The constraint test (docs/explanation/poisoning.md, "Poisoning diagnostics").  Each support count inside its own region is not
enough: 10 % of GRR reports on one item (:math:`\varepsilon = 1`, :math:`d = 16`, uniform
population) put that item's estimate at 1.03 and every other item's slightly below 0, each
count within its region.  ``constraint`` holds the likelihood-ratio test of the aggregate
against the set of all input distributions, the fit on the simplex against the saturated
fit on the protocol's exact channel
(:func:`dpdist.local.frequency._feasibility.feasibility_test`: output histograms of ``grr``,
``hr``, ``cp``, ``flh``; per-bit counts of ``oue``, ``sue``), with a p-value bound valid for
every n (its false-alarm rate is at most :data:`ALPHA` too).

The top test (GRR; docs/explanation/poisoning.md, "Poisoning diagnostics").  Fake reports that lift one
rare item to about 1 leave every count inside its region and the likelihood ratio below its
bound (1-2 % of fakes, a fifth of them spread over the rarest items), but an honest population
cannot put mass 1 on that item and keep its heavy items: ``top`` holds the test of the
estimates' excess above a level against the unit mass of a population
(:func:`dpdist.local.frequency._top_excess.top_excess_test`), with a bound valid for every n and
population (false-alarm rate at most :data:`ALPHA`).  The campaign is flagged when any test
flags, so **at most** :math:`3\alpha` per evaluation (:math:`2\alpha` without the top test).
``summary`` is the one line the dashboard and ``dpdist campaign estimate`` print.
"""

from __future__ import annotations

import numpy as np

from ..local._registry import available, registered_class
from ..local.frequency._feasibility import feasibility_test, why_no_feasibility_test
from ..local.frequency._top_excess import top_excess_test, why_no_top_excess_test

__all__ = ["ALPHA", "TESTED", "diagnostics"]

#: false-alarm rate of one evaluation on honest reports, at most (Bonferroni over the 2d one-sided tests)
ALPHA = 1e-6


def _registered_with(tag: str) -> frozenset[str]:
    """The registered frequency protocols whose class declares ``tags.<tag>`` (:class:`dpdist.local.ProtocolTags`)."""
    return frozenset(name for name in available("frequency") if getattr(registered_class(name).tags, tag, False))


#: protocols whose support counts are sums of independent Bernoulli(p*) / Bernoulli(q*) per report: read from
#: each protocol's ``tags.bernoulli_support`` (a subclass such as OCMS, local hashing with another range, declares it too)
TESTED = _registered_with("bernoulli_support")
#: protocols with one independent Bernoulli bit per item (the total support test): ``tags.independent_bits``
UNARY = _registered_with("independent_bits")
_SHOWN = 20
REFERENCE = (
    "exact binomial test of each item's support count against the feasible region [n q*, n p*] (Bonferroni over 2d "
    "tests); Cheu, Smith & Ullman, Manipulation Attacks in Local Differential Privacy, IEEE S&P 2021"
)


def diagnostics(protocol, aggregator, alpha: float = ALPHA, constraint_alpha: float = ALPHA, top_alpha: float = ALPHA) -> dict:
    """The poisoning tests of a campaign's aggregate (JSON-ready), with ``summary``, their line of text.

    Returns ``{"test", "alpha", "flagged", "items_below", "items_above", "count_below", "count_above",
    "min_p_value", "method", "constraint", "top", "summary"}``: items whose support count is below (above) what
    any honest population produces, at most 20 of each listed (most significant first); ``min_p_value`` is the
    smallest Bonferroni-adjusted p-value.  Unary encodings add ``"bits_per_report": {"observed", "expected",
    "flagged"}``, the total support test.  ``constraint`` is the likelihood-ratio test against every input
    distribution (:meth:`FeasibilityTest.to_dict <dpdist.local.frequency._feasibility.FeasibilityTest.to_dict>`),
    ``top`` the test of the estimates' excess above a level
    (:meth:`TopExcessTest.to_dict <dpdist.local.frequency._top_excess.TopExcessTest.to_dict>`), each
    ``{"test": null, "detail"}`` where it does not apply; ``flagged`` is any test's flag; ``unseen`` what no test
    sees (:func:`unseen_gain`), which the summary states when nothing is flagged.
    """
    document = _support_counts(protocol, aggregator, alpha)
    if int(aggregator.n) > 0:
        document["constraint"] = _constraint(protocol, aggregator, constraint_alpha)
        document["top"] = _top(protocol, aggregator, top_alpha)
        document["flagged"] = bool(document["flagged"] or document["constraint"]["flagged"] or document["top"]["flagged"])
    document["unseen"] = unseen_gain(protocol)
    document["summary"] = describe(document)
    return document


def unseen_gain(protocol) -> dict:
    """What fakes can do that no test here sees: a fake report that supports a rare item lifts its unbiased estimate
    by :math:`G = (1 - q^*) / (p^* - q^*)` per unit of fake share (Cao, Jia & Gong 2021, maximal gain), and the
    item's support count stays inside the honest region :math:`[n q^*, n p^*]` while the share is below about
    :math:`1 / G`: such a share lifts a rare item to about 1 with no support count out of place.  Fakes honest users
    could have sent are unseen at any share (Cheu, Smith & Ullman 2021).  ``{"gain", "share"}`` (``null`` where the
    protocol states no support probabilities)."""
    try:
        p, q = (float(value) for value in protocol.support_probabilities())
    except (AttributeError, NotImplementedError, TypeError, ValueError):  # no per-item support law stated
        return {"gain": None, "share": None}
    if not p > q:
        return {"gain": None, "share": None}
    gain = (1.0 - q) / (p - q)
    return {"gain": gain, "share": 1.0 / gain}


def _top(protocol, aggregator, alpha: float) -> dict:
    reason = why_no_top_excess_test(protocol)
    if reason is not None:
        return {"test": None, "flagged": False, "detail": reason}
    return top_excess_test(protocol, aggregator, alpha=alpha).to_dict()


def _constraint(protocol, aggregator, alpha: float) -> dict:
    reason = why_no_feasibility_test(protocol)
    if reason is not None:
        return {"test": None, "flagged": False, "detail": reason}
    return feasibility_test(protocol, aggregator, alpha=alpha).to_dict()


def _support_counts(protocol, aggregator, alpha: float) -> dict:
    """The support-count test (module docstring), without ``constraint`` and ``summary``."""
    name = protocol.name
    if name == "threshold":
        return _below_fractions(protocol, aggregator, alpha)
    if not getattr(protocol.tags, "bernoulli_support", False):
        return {"test": None, "flagged": False,
                "detail": f"no support-count test for {name}: its support counts are not sums of independent "
                "Bernoulli(p*), Bernoulli(q*) per report"}
    n = int(aggregator.n)
    if n == 0:
        return {"test": "support_counts", "alpha": alpha, "flagged": False, "detail": "no report yet"}
    from scipy.stats import binom  # lazy: loads scipy (0.4-2 s); only the estimator's child computes estimates

    p, q = protocol.support_probabilities()
    counts = np.rint(np.asarray(protocol.support_counts(aggregator), dtype=np.float64))
    d = counts.size
    unary = bool(getattr(protocol.tags, "independent_bits", False))
    tests = 2 * d + (1 if unary else 0)
    low = np.asarray(binom.cdf(counts, n, q))  # P[Bin(n, q*) <= C_v], one per item
    high = np.asarray(binom.sf(counts - 1, n, p))  # P[Bin(n, p*) >= C_v]
    threshold = alpha / tests
    below, above = np.flatnonzero(low < threshold), np.flatnonzero(high < threshold)
    smallest = min(low.min(), high.min())
    document = {
        "test": "support_counts",
        "alpha": alpha,
        "flagged": bool(below.size or above.size),
        "items_below": [int(i) for i in below[np.argsort(low[below], kind="stable")][:_SHOWN]],
        "items_above": [int(i) for i in above[np.argsort(high[above], kind="stable")][:_SHOWN]],
        "count_below": int(below.size),
        "count_above": int(above.size),
        "method": REFERENCE,
    }
    if unary:
        mean = n * (p + (d - 1) * q)
        variance = n * (p * (1 - p) + (d - 1) * q * (1 - q))
        deviation = abs(float(counts.sum()) - mean)
        total = min(1.0, 2.0 * float(np.exp(-deviation**2 / (2.0 * (variance + deviation / 3.0)))))  # Bernstein
        smallest = min(smallest, total)
        document["bits_per_report"] = {"observed": float(counts.sum()) / n, "expected": mean / n, "flagged": bool(total < threshold)}
        document["flagged"] = document["flagged"] or total < threshold
    document["min_p_value"] = float(min(1.0, tests * smallest))
    return document


def _below_fractions(protocol, aggregator, alpha: float) -> dict:
    """The test of a threshold round's "below" answers per cut and in total against :math:`[1-p, p]` (module docstring)."""
    n = int(aggregator.n)
    if n == 0:
        return {"test": "below_fractions", "alpha": alpha, "flagged": False, "detail": "no report yet"}
    from scipy.stats import binom  # lazy: loads scipy (0.4-2 s); only the estimator's child computes estimates

    p = float(protocol.keep_probability)
    counts = np.asarray(aggregator.statistic, dtype=np.float64).reshape(-1, 2)  # per cut: (not below, below)
    below, reports = np.rint(counts[:, 1]), np.rint(counts.sum(axis=1))
    total, tests = float(below.sum()), 2 * below.size + 2
    low = np.asarray(binom.cdf(below, reports, 1.0 - p))  # P[Bin(n_j, 1-p) <= Y_j], one per cut
    high = np.asarray(binom.sf(below - 1, reports, p))  # P[Bin(n_j, p) >= Y_j]
    total_low, total_high = float(binom.cdf(total, n, 1.0 - p)), float(binom.sf(total - 1, n, p))
    threshold = alpha / tests
    cuts_low, cuts_high = np.flatnonzero(low < threshold), np.flatnonzero(high < threshold)
    flagged_total = min(total_low, total_high) < threshold
    smallest = min(float(low.min()), float(high.min()), total_low, total_high)
    return {
        "test": "below_fractions",
        "alpha": alpha,
        "flagged": bool(cuts_low.size or cuts_high.size or flagged_total),
        "items_below": [int(i) for i in cuts_low[np.argsort(low[cuts_low], kind="stable")][:_SHOWN]],
        "items_above": [int(i) for i in cuts_high[np.argsort(high[cuts_high], kind="stable")][:_SHOWN]],
        "count_below": int(cuts_low.size),
        "count_above": int(cuts_high.size),
        "below_fraction": {"observed": total / n, "honest_range": [1.0 - p, p], "flagged": bool(flagged_total)},
        "min_p_value": float(min(1.0, tests * smallest)),
        "method": ("exact binomial test of each cut's 'below' answers, and of their total, against [n (1-p), n p] "
                   f"(Bonferroni over {tests} tests)"),
    }


def _blind_spot(document: dict) -> str:
    """What no test sees, in a clause (the unseen gain of :func:`unseen_gain` where known)."""
    share = (document.get("unseen") or {}).get("share")
    honest = "fakes honest users could have sent are unseen at any share"
    if share is None:
        return f"no test sees {honest.replace(' are unseen at any share', '')}"
    return f"{honest}, and {share:.2%} of fakes can lift a rare item to about 1 with no support count out of place"


def describe(document: dict) -> str:
    """One line for ``dpdist campaign estimate`` and the dashboard (``summary`` of :func:`diagnostics`)."""
    constraint = document.get("constraint") or {}
    top = document.get("top") or {}
    counts_ran = document.get("test") is not None and not document.get("detail")
    constraint_ran, top_ran = constraint.get("test") is not None, top.get("test") is not None
    if not counts_ran and not constraint_ran and not top_ran:
        return "poisoning test: " + document.get("detail", "none")
    rate = sum(part["alpha"] for part, ran in ((document, counts_ran), (constraint, constraint_ran), (top, top_ran)) if ran)
    if not document["flagged"]:
        what = ("no cut's 'below' answers outside what honest reports produce" if document.get("test") == "below_fractions"
                else "no support count outside what honest reports produce")
        tested = [what for what, ran in ((what, counts_ran), ("the counts fit an honest population", constraint_ran),
                                         ("the top within what the rest of the reports allow", top_ran)) if ran]
        skipped = [name for name, ran in (("support counts", counts_ran), ("likelihood ratio", constraint_ran),
                                          ("top excess", top_ran)) if not ran]
        return (f"poisoning test: no sign of the attacks these tests detect ({'; '.join(tested)}; false-alarm rate <= {rate:g})"
                + (f"; not run for this protocol: {', '.join(skipped)}" if skipped else "") + "; " + _blind_spot(document))
    parts = []
    if counts_ran and document["test"] == "below_fractions":
        fraction = document["below_fraction"]
        if fraction["flagged"]:
            parts.append(f"{fraction['observed']:.3g} of the answers say 'below' where honest ones give "
                         f"{fraction['honest_range'][0]:.3g} to {fraction['honest_range'][1]:.3g}")
        if document["count_above"] or document["count_below"]:
            parts.append(f"{document['count_above'] + document['count_below']} cut(s) answered 'below' outside what any "
                         f"honest population gives (e.g. {(document['items_above'] + document['items_below'])[:5]})")
    elif counts_ran:
        bits = document.get("bits_per_report")
        if bits and bits["flagged"]:
            parts.append(f"reports set {bits['observed']:.3g} bits on average where honest ones set {bits['expected']:.3g}")
        if document["count_above"]:
            parts.append(f"{document['count_above']} item(s) supported more than any honest population can "
                         f"(e.g. {document['items_above'][:5]})")
        if document["count_below"]:
            parts.append(f"{document['count_below']} item(s) supported less (e.g. {document['items_below'][:5]})")
    if parts:
        parts[-1] += f" (adjusted p = {document['min_p_value']:.2g})"
    if constraint.get("flagged"):
        parts.append(f"the counts fit no honest population (likelihood ratio {constraint['statistic']:.4g} against every "
                     f"input distribution, p <= {constraint['p_value']:.2g})")
    if top.get("flagged"):
        parts.append(f"the estimates above {top['level']:.3g} exceed it by {top['statistic']:.3g} in all, more than the "
                     f"rest of the reports allow ({top['allowed']:.3g}; items {top['items'][:5]}, p <= {top['p_value']:.2g})")
    return "POISONING SUSPECTED: " + "; ".join(parts) + f"; false-alarm rate <= {rate:g}"
