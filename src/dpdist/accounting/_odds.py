r"""What an attacker can learn, in odds: the best guess of a device's value, and a membership test's power.

**Guessing a device's value from its reports** (local model).  An attacker who knows the protocol, sees a device's
reports and holds a prior :math:`\pi` over its value guesses the value of highest posterior.  Its success, the
Bayes-optimal one (no guess does better on average over the prior and the randomizer), is

.. math:: S = \sum_y \max_x \pi_x P(y \mid x)

for a channel :math:`P` (Bayes' rule: the guess :math:`\arg\max_x \pi_x P(y \mid x)` is right with probability
:math:`\max_x \pi_x P(y \mid x) / P(y)` given :math:`y`).  Chance is :math:`\max_x \pi_x`, the guess that sees no
report (:math:`1/d` under a uniform prior over :math:`d` values).

* *Exact* where the channel is enumerated (``protocol.channel()``; a numerical protocol's input bins,
  ``transition_matrix()``, grouped into equal ranges under a prior uniform over the bounds), and in closed form
  under a uniform prior at any domain size: GRR :math:`e^\varepsilon/(e^\varepsilon + d - 1)`, subset selection
  :math:`e^\varepsilon/(k e^\varepsilon + d - k)`, the unary encodings
  :math:`\tfrac1d[(1-p)(1-q)^{d-1} + \tfrac pq(1 - (1-q)^d)]` (every output's largest likelihood summed).
* *Certified upper bound* otherwise: if every two values :math:`x, x'` of the device have
  :math:`P(S \mid x) \le e^\varepsilon P(S \mid x') + \delta` for every event :math:`S` (the guarantee, which holds
  whatever else the attacker knows), then with :math:`\pi^* = \max_x \pi_x`

  .. math:: S \le \frac{e^\varepsilon \pi^* + \delta (1 - \pi^*)}{e^\varepsilon \pi^* + 1 - \pi^*}

  (write :math:`a_x` for the chance the guess is :math:`x` when it is :math:`x`; the guarantee on the event "the
  guess is :math:`x`" under :math:`x' \ne x`, weighted by :math:`\pi_{x'}\pi_x/(1-\pi_x)` and summed, gives
  :math:`S \le r e^\varepsilon (1 - S) + \delta` with :math:`r = \pi^*/(1-\pi^*)`).  With :math:`\delta = 0` and a
  uniform prior it is GRR's value: no :math:`\varepsilon`-LDP protocol lets an attacker guess better than GRR does.
  A composition's :math:`\delta(\varepsilon)` curve (its privacy loss distribution) gives the smallest bound over
  its :math:`\varepsilon`.

Over :math:`R` reports of one unchanged value:

* *fresh* reports (a new draw each time): exact under a uniform prior for GRR (the reports' counts; the best guess is
  the most reported value, ties split) and the unary encodings (independent bit counts:
  :math:`\sum_m \mathrm{Bin}(m; R, p)\,(F_m^{k+1} - F_{m-1}^{k+1}) / ((k+1) f_m)` with :math:`f, F` the pmf and cdf
  of :math:`\mathrm{Bin}(R, q)` and :math:`k = d - 1`); else the bound above on the :math:`R` reports' composed loss;
* *kept* reports (one report drawn once and sent again: the participation page, a memo without a second
  randomization): one report's odds, whatever :math:`R`;
* a *memoized* protocol (``l-grr``, ``l-osue``, ``loloha``, ``dbitflippm``): every report is post-processing of its
  permanent response, so the bound at :math:`\varepsilon_\infty` holds for any :math:`R` (and at the history's
  :math:`\varepsilon_R` when smaller); one report is exact from its channel;
* with a device's :class:`~dpdist.local.PrivacyLedger`: the reports it admits before its budget refuses them.

**A membership test** (central model).  A test of "one record (or one person's rows) is in the data" against
"it is not" (add-remove neighbours), or of which of two values one record holds (replace), has at false-positive rate
:math:`\alpha` a true-positive rate at most :math:`1 - f(\alpha)`, :math:`f` the mechanism's trade-off function
(f-DP: Dong, Roth & Su, "Gaussian Differential Privacy", JRSS B 2022).  :math:`(\varepsilon, \delta)`-DP gives
:math:`\mathrm{TPR} \le \min(1, e^\varepsilon\alpha + \delta, 1 - e^{-\varepsilon}(1 - \delta - \alpha))` (their
Prop. 2.5, Wasserman & Zhou 2010); a family :math:`(\varepsilon, \delta(\varepsilon))` the smallest of these (Prop.
2.12), which for a symmetric dominating pair of finitely many losses (a protocol's, the discrete Laplace mechanism's),
read at its losses, is its exact curve; the Gaussian mechanism of :math:`\mu = \Delta/\sigma` has
:math:`\mathrm{TPR} = \Phi(\Phi^{-1}(\alpha) + \mu)` (Def. 2.7), composed Gaussians
:math:`\mu = (\sum_i \mu_i^2)^{1/2}` (Cor. 3.3).  Every number here is computed from public parameters only (the
protocol, :math:`\varepsilon`, the domain, the release's guarantee or loss), never from anyone's data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Context, Decimal
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np

from .._guarantee import PrivacyGuarantee
from .._validation import (
    HasMethod,
    InstanceOf,
    Integer,
    Interval,
    Items,
    OneOf,
    Optional,
    Options,
    Text,
    Weights,
    validate_params,
)
from ..errors import InvalidParameterError
from ._distributions import Atoms, Composed, GaussianLoss, approximate_atoms
from ._loss import PrivacyLoss
from ._pld import deltas_at
from ._protocols import protocol_loss

__all__ = ["GuessOdds", "TradeOff", "guess_odds", "guess_bound", "guess_probability", "tradeoff", "FPRS", "RANGES",
           "OVER", "FALSE_POSITIVE_RATES"]

#: the false-positive rates every trade-off is stated at
FPRS = (0.01, 0.05, 0.1)
#: the rule of the false-positive rates asked for
FALSE_POSITIVE_RATES = Items(Interval(0.0, 1.0, closed="both"), "a non-empty list of false-positive rates in [0, 1]",
                             min_length=1)
#: equal ranges of a numerical protocol's bounds whose guess is stated (a person's value is a real number)
RANGES = 10
#: how a device's reports of one value are drawn: a fresh draw each, or one draw kept and sent again
OVER = ("fresh", "kept")
#: the most work the exact odds of fresh GRR reports may take (R^3 log2(d + 1) products: R = 365 at d = 10^6, about a
#: CPU-second), past which the bound is stated
_MAX_GRR_WORK = 10**9
#: points of the epsilon grid a composed loss's delta curve is read at
_GRID = 400


# ---------------------------------------------------------------------------------------------- the formulas
def guess_probability(channel: Any, prior: Any = None) -> float:
    r"""The Bayes-optimal guess's success :math:`\sum_y \max_x \pi_x P[x, y]` for a channel (rows: values, columns:
    outputs) and a prior over its rows (uniform when None)."""
    matrix = np.asarray(channel, dtype=np.float64)
    weights = np.full(matrix.shape[0], 1.0 / matrix.shape[0]) if prior is None else np.asarray(prior, dtype=np.float64)
    return float(min(1.0, np.max(weights[:, None] * matrix, axis=0).sum()))


def guess_bound(epsilon: Any, delta: Any = 0.0, *, chance: float) -> Any:
    r"""The certified bound :math:`(e^\varepsilon\pi^* + \delta(1-\pi^*))/(e^\varepsilon\pi^* + 1 - \pi^*)` on any
    guess of a value whose every two candidates an :math:`(\varepsilon, \delta)` guarantee protects, ``chance`` being
    :math:`\pi^*` (module docstring); elementwise over arrays of ``epsilon`` and ``delta``."""
    epsilon, delta = np.asarray(epsilon, dtype=np.float64), np.clip(np.asarray(delta, dtype=np.float64), 0.0, 1.0)
    with np.errstate(over="ignore"):
        odds = np.exp(epsilon) * chance  # e^eps pi*: inf past e^709, where the bound is 1
    bound = 1.0 - (1.0 - chance) * (1.0 - delta) / (odds + 1.0 - chance)
    return np.clip(bound, chance, 1.0) if bound.ndim else float(min(max(bound, chance), 1.0))


def _curve_bound(loss: PrivacyLoss, chance: float) -> float:
    """The smallest :func:`guess_bound` over a composed loss's delta curve (and its stated guarantee)."""
    stated = guess_bound(loss.guarantee.epsilon, loss.guarantee.delta, chance=chance)
    if loss.distribution is None:
        return stated
    top = min(loss.guarantee.epsilon, 2000.0)
    grid = np.unique(np.concatenate([np.linspace(0.0, top, _GRID), np.geomspace(1e-3, top, _GRID)]))
    values = guess_bound(grid, deltas_at(loss.distribution, grid), chance=chance)
    return float(min(stated, values.min()))


def _grr_closed(p: float, q: float, d: int, prior: np.ndarray | None) -> float:
    """One GRR report: :math:`\\sum_y \\max(\\pi_y p, q \\max_{x \\ne y} \\pi_x)`, O(d) for any prior."""
    if prior is None:
        return p  # e^eps / (e^eps + d - 1): every output's largest likelihood is p, d outputs, each 1/d
    order = np.argsort(prior)
    largest, second = prior[order[-1]], prior[order[-2]]
    others = np.where(np.arange(d) == order[-1], second, largest)
    return float(min(1.0, np.maximum(prior * p, others * q).sum()))


def _unary_closed(p: float, q: float, d: int) -> float:
    """One report of a unary encoding under a uniform prior (module docstring)."""
    return float(((1 - p) * (1 - q) ** (d - 1) - (p / q) * math.expm1(d * math.log1p(-q))) / d)


def _unary_fresh(p: float, q: float, d: int, reports: int) -> float:
    r"""``reports`` fresh reports of a unary encoding, uniform prior: the most set bit wins, ties split (module
    docstring); :math:`F_m^k g(f_m/F_m)` with :math:`g(s) = (1 - (1-s)^{k+1})/((k+1)s)`, stable for small :math:`s`."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    counts, k = np.arange(reports + 1), d - 1
    own = stats.binom.pmf(counts, reports, p)
    pmf, cdf = stats.binom.pmf(counts, reports, q), stats.binom.cdf(counts, reports, q)
    share = np.divide(pmf, cdf, out=np.zeros_like(pmf), where=cdf > 0)
    with np.errstate(divide="ignore"):
        tied = np.where(share > 0, -np.expm1((k + 1) * np.log1p(-np.minimum(share, 1.0))) / ((k + 1) * np.where(
            share > 0, share, 1.0)), 1.0)
    return float(min(1.0, np.sum(own * cdf**k * tied)))


def _truncated_power(base: np.ndarray, exponent: int, degree: int) -> np.ndarray:
    """``base ** exponent`` as a polynomial (coefficients from degree 0), its coefficients above ``degree`` dropped."""
    result, square = np.ones(1), base[: degree + 1]
    while exponent:
        if exponent & 1:
            result = np.convolve(result, square)[: degree + 1]
        exponent >>= 1
        if exponent:
            square = np.convolve(square, square)[: degree + 1]
    return result


def _grr_fresh(p: float, q: float, d: int, reports: int) -> float:
    r"""``reports`` fresh GRR reports, uniform prior: the most reported value wins, ties split.

    Given :math:`m` reports of the true value, the other :math:`n = R - m` are uniform over the :math:`k = d - 1`
    others: a multinomial, written as independent Poisson counts of mean :math:`\lambda = n/k` conditioned on their
    sum.  With :math:`a(x) = \sum_{c < m} \mathrm{Pois}(c; \lambda) x^c` and :math:`b = \mathrm{Pois}(m; \lambda)`,
    the chance that no other value is reported more often and :math:`t` as often, split :math:`1/(t+1)`, is
    :math:`\sum_t \binom kt b^t [x^{n - mt}] a^{k-t} / ((t+1)\,\mathrm{Pois}(n; n))`."""
    from scipy import special, stats  # lazy: loads scipy (0.4-2 s)

    k, total = d - 1, 0.0
    own = stats.binom.pmf(np.arange(reports + 1), reports, p)
    for m in range(1, reports + 1):
        n = reports - m
        if n == 0:
            total += own[m]
            continue
        rate = n / k
        below = stats.poisson.pmf(np.arange(min(m, n + 1)), rate)
        most = min(k, n // m)  # at most n // m others can be reported m times
        power = _truncated_power(below, k - most, n)
        logs = []
        for t in range(most, -1, -1):  # a^(k - t) for t from the most ties down: one more factor of a each step
            if t != most:
                power = np.convolve(power, below)[: n + 1]
            at = n - m * t
            if at < power.size and power[at] > 0:  # in logarithms: C(k, t) overflows for large domains
                logs.append(special.gammaln(k + 1) - special.gammaln(t + 1) - special.gammaln(k - t + 1)
                            + t * stats.poisson.logpmf(m, rate) + math.log(power[at]) - math.log(t + 1))
        if logs:
            total += own[m] * math.exp(special.logsumexp(logs) - stats.poisson.logpmf(n, n))
    return float(min(1.0, total))


# ---------------------------------------------------------------------------------------------- a protocol's odds
@dataclass(frozen=True)
class GuessOdds:
    r"""How likely an attacker who sees a device's reports guesses its value (:func:`guess_odds`).

    Attributes
    ----------
    protocol : str
        The protocol's name.
    epsilon : float
        Its epsilon (one report's, :math:`\varepsilon_1`, for a memoized protocol).
    target : str
        What is guessed: ``"its value"`` (one of ``values``), ``"which of 10 equal ranges of [0, 100] its value lies
        in"``, ``"its record"``.
    values : int
        How many candidates (the domain, the ranges).
    prior : str
        ``"uniform"`` or ``"given"``.
    chance : float
        The prior's largest probability: the guess that sees no report.
    over : str
        ``"fresh"``, ``"kept"`` or ``"memo"`` (a memoized protocol's permanent responses).
    reports : tuple of int
        The numbers of reports asked about.
    sent : tuple of int
        The reports the attacker sees: ``reports``, or with a ledger those it admits after every earlier report of the
        protocol it charged.
    probability : tuple of float
        The success of the best guess after each (exact) or a certified upper bound on it.
    exact : tuple of bool
    sources : tuple of str
        How each number is computed.
    times : tuple of float
        After each, the most times the blind guess's success the best guess reaches whatever the attacker's prior
        (whatever else it knows): :math:`\min(e^\varepsilon, d)` at the reports' pure :math:`\varepsilon`, since
        :math:`S \le e^\varepsilon \pi^*` (the bound above) and :math:`S \le 1 \le d \pi^*`.
    """

    protocol: str
    epsilon: float
    target: str
    values: int
    prior: str
    chance: float
    over: str
    reports: tuple[int, ...]
    sent: tuple[int, ...]
    probability: tuple[float, ...]
    exact: tuple[bool, ...]
    sources: tuple[str, ...]
    times: tuple[float, ...]

    def at(self, reports: int) -> float:
        """The probability after ``reports`` reports (one of :attr:`reports`)."""
        return self.probability[self.reports.index(reports)]

    def describe(self) -> str:
        """One line: the guess's success after each number of reports, exact or at most, beside chance."""
        prior = "a uniform prior" if self.prior == "uniform" else "the given prior"
        how = {"fresh": "fresh reports", "kept": "one report kept and sent again", "memo": "reports through its memo"}
        parts = [f"{_count(r, s)}: {'' if exact else 'at most '}{percent(value, bound=True)}"
                 for r, s, value, exact in zip(self.reports, self.sent, self.probability, self.exact)]
        return (f"an attacker who sees a device's {self.protocol} reports (epsilon {self.epsilon:g}, "
                f"{how[self.over]}) guesses {self.target} with probability " + ", ".join(parts)
                + f"; by chance {percent(self.chance)} ({prior} over {self.values:,})")

    def sentence(self) -> str:
        """The first number in words a person reads, with the chance baseline and its prior, and what holds whatever
        the attacker knows (in the words of the JavaScript and Java clients' ``consentText``)."""
        value = self.probability[0]
        seen = "your report" if self.reports[0] == 1 else f"your {self.reports[0]:,} reports"
        prior = "every answer is equally likely" if self.prior == "uniform" else "answers are as common as assumed"
        return (f"Someone who sees {seen} can guess {self.target.replace('its', 'your')} with a probability of "
                f"{'' if self.exact[0] else 'at most '}{percent(value, bound=True)}, against {percent(self.chance)} by chance, "
                f"if {prior}; whatever else they know, at most {_times(self.times[0])} times a blind guess.")

    def to_dict(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "epsilon": self.epsilon, "target": self.target, "values": self.values,
                "prior": self.prior, "chance": self.chance, "over": self.over, "reports": list(self.reports),
                "sent": list(self.sent), "probability": list(self.probability), "exact": list(self.exact),
                "sources": list(self.sources), "times": list(self.times), "sentence": self.sentence()}


def _count(reports: int, sent: int) -> str:
    said = f"{reports:,} report{'s' if reports != 1 else ''}"
    return said if sent == reports else f"{said} ({sent:,} sent in all, as the ledger admits them)"


def significant(value: float, *, bound: bool = False, digits: int = 3) -> Decimal:
    """``value`` (>= 0) to ``digits`` significant digits, in decimal, read from its 12 (the float noise below them is no
    figure's own: an exact 28% stays 28%): rounded up where it is a bound a person reads ("at most", an attacker's
    success: never shown below it), else to the nearest, half up (the JavaScript and Java clients' ``significant``)."""
    clean = Context(prec=12, rounding=ROUND_HALF_UP).plus(Decimal(value))
    return Context(prec=digits, rounding=ROUND_CEILING if bound else ROUND_HALF_UP).plus(clean)


def percent(value: float, *, bound: bool = False) -> str:
    """A probability as a percentage of three significant digits (:func:`significant`), or of as many more as keep a
    probability below 1 from reading 100%."""
    digits = 3
    while significant(100 * value, bound=bound, digits=digits) >= 100 and value < 1 and digits < 12:
        digits += 1
    return f"{significant(100 * value, bound=bound, digits=digits).normalize():f}%"


def _times(value: float) -> str:
    """A ratio rounded up to three significant digits (an "at most" never understated), thousands separated."""
    return f"{significant(value, bound=True).normalize():,f}"


#: a protocol's one report as a finite law: (channel over the candidates or None, candidates, what is guessed)
_Candidates = tuple[np.ndarray | None, int, str]

_GUESS_RULES = {
    "reports": OneOf((Integer(low=1), Items(Integer(low=1), "a list of ints >= 1", min_length=1)),
                     "an int >= 1 or a non-empty list of them (numbers of reports)"),
    "prior": Optional(Weights("a prior over the candidate values: non-negative weights with a positive sum")),
    "over": Options(OVER),
    "ranges": Integer(low=2, high=10**6),
    "ledger": Optional(HasMethod("cost", "a PrivacyLedger (its cost, remaining and charges)")),
    "collector": Text(),
}


@validate_params(_GUESS_RULES, owner="guess_odds")
def guess_odds(protocol: Any, reports: int | Sequence[int] = 1, *, prior: Any = None, over: str = "fresh",
               ranges: int = RANGES, ledger: Any = None, collector: str = "local") -> GuessOdds:
    """How likely an attacker who sees a device's reports of one unchanged value guesses it (module docstring).

    Parameters
    ----------
    protocol : LocalProtocol
    reports : int or list of int
        Numbers of reports of the device (each stated: ``[1, 7, 30, 365]`` for a year of daily reports).
    prior : array_like, optional
        The attacker's prior over the values (an estimate's frequencies, say: public); uniform when None.  For a
        numerical protocol, over ``ranges`` equal ranges of its bounds.
    over : {"fresh", "kept"}
        Each report a fresh draw, or one draw kept and sent again.  A memoized protocol's reports go through its
        memo (``"fresh"`` means its own reports).
    ranges : int
        A numerical protocol: the equal ranges of its bounds whose guess is stated (at most as many as its bins).
    ledger : PrivacyLedger, optional
        The device's ledger: only the reports it admits (from its remaining budget) are sent, after every report
        of the protocol it charged before.
    collector : str
        Where the device reports (the ledger's scope).

    Returns
    -------
    GuessOdds
    """
    if getattr(protocol, "tags", None) is None or not isinstance(getattr(protocol, "guarantee", None),
                                                                   PrivacyGuarantee):
        raise InvalidParameterError(f"guess_odds needs a local protocol. Got {type(protocol).__name__}.")
    counts = (reports,) if isinstance(reports, int) else tuple(reports)
    memoized = bool(protocol.tags.memoized)
    over = "memo" if memoized and over == "fresh" else over
    channel, values, target = _candidates(protocol, ranges)
    weights = None if prior is None else _prior(prior, values)
    chance = 1.0 / values if weights is None else float(weights.max())
    epsilon = protocol.guarantee_over(1).epsilon if memoized else protocol.guarantee.epsilon
    one = _one_report(protocol, channel, weights, chance, epsilon)
    sent = tuple(_admitted(ledger, protocol, count, collector) for count in counts)
    rows = [_after(protocol, count, over, one, weights, chance) for count in sent]
    return GuessOdds(protocol.display_name, float(epsilon), target, values, "uniform" if weights is None else "given",
                     chance, over, counts, sent, tuple(value for value, _, _ in rows),
                     tuple(exact for _, exact, _ in rows), tuple(source for _, _, source in rows),
                     tuple(_any_prior(protocol, count, over, epsilon, values) for count in sent))


def _prior(prior: np.ndarray, values: int) -> np.ndarray:
    if prior.size != values:
        raise InvalidParameterError(f"The 'prior' of guess_odds must hold one weight per candidate value ({values}). "
                                    f"Got {prior.size} weights.")
    return prior / prior.sum()


def _candidates(protocol: Any, ranges: int) -> _Candidates:
    """The protocol's one report as a channel over what is guessed (None where it cannot be enumerated)."""
    if protocol.tags.kind == "numerical":
        bins = int(getattr(protocol, "bins", 0) or ranges)
        groups = max(g for g in range(1, min(ranges, bins) + 1) if bins % g == 0)
        low, high = protocol.bounds
        target = f"which of {groups} equal ranges of [{low:g}, {high:g}] its value lies in"
        matrix = getattr(protocol, "transition_matrix", None)
        try:
            law = None if matrix is None else np.asarray(matrix(), dtype=np.float64).T  # (bins, outputs)
        except (NotImplementedError, MemoryError, InvalidParameterError):
            law = None
        if law is None or law.shape[0] != bins or groups < 2:
            return None, max(groups, 2), target
        return law.reshape(groups, bins // groups, -1).mean(axis=1), groups, target  # uniform within each range
    try:
        law = np.asarray(protocol.channel(), dtype=np.float64) if protocol.tags.finite_channel else None
    except (NotImplementedError, MemoryError, InvalidParameterError):
        law = None
    size = getattr(protocol, "domain_size", None)
    values = law.shape[0] if law is not None else size
    if values is None:
        raise InvalidParameterError(f"guess_odds cannot state {protocol.display_name}'s odds: its channel cannot be "
                                    f"enumerated and it has no domain size (a {protocol.tags.kind} protocol).")
    target = "its record" if protocol.tags.kind == "multi" else "its value"
    return law, int(values), target


#: one report of a protocol under a uniform prior, in closed form at any domain size
_CLOSED = {
    "grr": lambda protocol: float(protocol._p),
    "ss": lambda protocol: float(protocol._p_in) / protocol.subset_size,
    "oue": lambda protocol: _unary_closed(float(protocol._p), float(protocol._q), protocol.domain_size),
    "sue": lambda protocol: _unary_closed(float(protocol._p), float(protocol._q), protocol.domain_size),
}


def _one_report(protocol: Any, channel: np.ndarray | None, prior: np.ndarray | None, chance: float,
                epsilon: float) -> tuple[float, bool, str]:
    """``(probability, exact, source)`` of one report."""
    name = str(protocol.name)
    if name == "grr":
        return _grr_closed(float(protocol._p), float(protocol._q), protocol.domain_size, prior), True, "closed form"
    if prior is None and name in _CLOSED:
        return _CLOSED[name](protocol), True, "closed form"
    if channel is not None:
        return guess_probability(channel, prior), True, "its channel, enumerated"
    return guess_bound(epsilon, chance=chance), False, f"bound of any {epsilon:g}-LDP report"


def _admitted(ledger: Any, protocol: Any, reports: int, collector: str) -> int:
    """The device's reports of ``protocol`` once its ledger admitted what it can of ``reports`` more: those it
    admits, and every report of the protocol's name it charged before, at any collector (counting more reports than
    concern the value only raises the odds: the bound stays one)."""
    if ledger is None:
        return reports
    low, high, left = 0, reports, ledger.remaining()
    while low < high:  # the largest count whose cost fits (cost grows with the count)
        middle = (low + high + 1) // 2
        low, high = (middle, high) if ledger.cost(protocol, middle, collector) <= left * (1 + 1e-12) else (low, middle - 1)
    earlier = sum(int(charge["reports"]) for charge in ledger.charges() if charge["protocol"] == protocol.name)
    return earlier + low


def _any_prior(protocol: Any, reports: int, over: str, epsilon: float, values: int) -> float:
    """:math:`\min(e^\varepsilon, d)` at the pure epsilon of ``reports`` reports (:attr:`GuessOdds.times`)."""
    if reports <= 1 or over == "kept":
        spent = epsilon * min(reports, 1)
    elif over == "memo":
        spent = min(protocol.stable_guarantee.epsilon, protocol.epsilon_over_changes(reports))
    else:
        spent = reports * epsilon  # fresh reports of a pure epsilon-LDP protocol compose
    return float(values) if spent >= math.log(values) else math.exp(spent)


def _after(protocol: Any, reports: int, over: str, one: tuple[float, bool, str], prior: np.ndarray | None,
           chance: float) -> tuple[float, bool, str]:
    """``(probability, exact, source)`` after ``reports`` reports of one value."""
    if reports == 0:
        return chance, True, "no report: chance"
    if reports == 1 or over == "kept":
        return one
    if over == "memo":
        stable = protocol.stable_guarantee.epsilon
        history = protocol.epsilon_over_changes(reports)
        epsilon = min(stable, history)
        bound = max(guess_bound(epsilon, chance=chance), one[0])
        return bound, False, f"bound at its memo's epsilon {epsilon:g} (any number of reports of an unchanged value)"
    name = str(protocol.name)
    if prior is None and name == "grr" and reports**3 * math.log2(protocol.domain_size + 1) <= _MAX_GRR_WORK:
        return (_grr_fresh(float(protocol._p), float(protocol._q), protocol.domain_size, reports), True,
                "exact: the reports' counts")
    if prior is None and name in ("oue", "sue"):
        return (_unary_fresh(float(protocol._p), float(protocol._q), protocol.domain_size, reports), True,
                "exact: the bits' counts")
    loss = protocol_loss(protocol, reports)
    return max(_curve_bound(loss, chance), one[0]), False, f"bound of the reports' composed loss ({loss.source})"


# ---------------------------------------------------------------------------------------------- a membership test
@dataclass(frozen=True)
class TradeOff:
    """The best test's true-positive rate at each false-positive rate (:func:`tradeoff`), exact or at most.

    Attributes
    ----------
    test : str
        What the attacker tests (``"whether one record is in the data"``, ...).
    fpr, tpr : tuple of float
        False-positive rates and the true-positive rate of the most powerful test at each (or a bound on it).
    exact : bool
        Whether ``tpr`` is the mechanism's own curve (else an upper bound).
    source : str
        Where the curve comes from.
    """

    test: str
    fpr: tuple[float, ...]
    tpr: tuple[float, ...]
    exact: bool
    source: str

    def describe(self) -> str:
        """One line: the true-positive rates at the false-positive rates (chance: equal)."""
        rates = ", ".join(percent(value) for value in self.fpr)
        powers = ", ".join(percent(value, bound=True) for value in self.tpr)
        return (f"a test of {self.test}, at false-positive rates {rates}, has true-positive rates "
                f"{'' if self.exact else 'at most '}{powers} (a blind guess: the same; {self.source})")

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "fpr": list(self.fpr), "tpr": list(self.tpr), "exact": self.exact,
                "source": self.source}

    @classmethod
    def blind(cls, guarantee: PrivacyGuarantee, fpr: Sequence[float] = FPRS) -> "TradeOff":
        """A test that sees nothing of the person (no charge yet): its true-positive rate is its false-positive rate."""
        rates = tuple(float(value) for value in fpr)
        return cls(_test_of(guarantee), rates, rates, True, "nothing released yet")


_TRADEOFF_RULES = {
    "of": InstanceOf((PrivacyGuarantee, PrivacyLoss), "a PrivacyGuarantee or a PrivacyLoss (a release's guarantee, a "
                                                      "budget session's spent)"),
    "fpr": FALSE_POSITIVE_RATES,
}


@validate_params(_TRADEOFF_RULES, owner="tradeoff")
def tradeoff(of: PrivacyGuarantee | PrivacyLoss, fpr: Sequence[float] = FPRS) -> TradeOff:
    """The membership test's trade-off of a guarantee or a privacy loss (module docstring).

    Parameters
    ----------
    of : PrivacyGuarantee or PrivacyLoss
        A release's guarantee (:math:`(\\varepsilon, \\delta)`), or a loss with its distribution (a budget session's
        ``spent``, whose loss it reads; :func:`~dpdist.accounting.gaussian`, :func:`~dpdist.accounting.discrete_laplace`).
    fpr : list of float
        False-positive rates (default 0.01, 0.05, 0.1).
    """
    loss = of if isinstance(of, PrivacyLoss) else getattr(of, "loss", None)
    guarantee = of.guarantee if isinstance(of, PrivacyLoss) else of
    alpha = np.asarray(fpr, dtype=np.float64)
    tpr = _tpr(np.array([guarantee.epsilon]), np.array([guarantee.delta]), alpha)
    exact, source = False, f"from its ({guarantee.epsilon:.4g}, {guarantee.delta:.3g}) guarantee"
    if guarantee.pure:
        source = f"from its {guarantee.epsilon:.4g}-DP guarantee: randomized response's curve, the worst such mechanism's"
    distribution = loss.distribution if isinstance(loss, PrivacyLoss) else None
    mu = _gaussian_mu(distribution)
    if mu is not None:
        tpr, exact, source = np.array([_gaussian_tpr(a, mu) for a in alpha]), True, f"the Gaussian curve, mu = {mu:.4g}"
    elif isinstance(distribution, Atoms):  # its curve is the smallest line at its own losses (Prop. 2.12)
        losses = np.asarray(distribution.losses)
        grid = np.unique(np.concatenate([[0.0], losses[losses > 0]]))
        deltas = np.array([distribution.delta(float(e)) for e in grid])
        tpr = np.minimum(tpr, _tpr(grid, deltas, alpha))
        # a guarantee's worst case (a loss made of the guarantee alone) is no mechanism's own: a bound
        exact = distribution != approximate_atoms(guarantee.epsilon, guarantee.delta)
        source = "its privacy loss's own curve" if exact else source
    elif distribution is not None:
        top = min(guarantee.epsilon if math.isfinite(guarantee.epsilon) else 50.0, 2000.0)
        grid = np.unique(np.concatenate([np.linspace(0.0, top, _GRID), np.geomspace(1e-3, max(top, 2e-3), _GRID)]))
        tpr = np.minimum(tpr, _tpr(grid, deltas_at(distribution, grid), alpha))
        source = "from its privacy loss distribution's delta curve"
    return TradeOff(_test_of(guarantee), tuple(map(float, alpha)), tuple(float(v) for v in tpr), exact, source)


def _tpr(epsilons: np.ndarray, deltas: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    r""":math:`\min_\varepsilon \min(1, e^\varepsilon\alpha + \delta, 1 - e^{-\varepsilon}(1 - \delta - \alpha))` at
    each :math:`\alpha` (Dong, Roth & Su 2022, Prop. 2.5 and 2.12)."""
    with np.errstate(over="ignore"):  # e^eps alpha: inf past e^709, and 0 at alpha = 0 (never inf x 0)
        scale = np.broadcast_to(np.exp(epsilons)[:, None], (epsilons.size, alpha.size))
        rise = np.multiply(scale, alpha[None, :], out=np.zeros(scale.shape), where=alpha[None, :] > 0) + deltas[:, None]
    fall = 1.0 - np.exp(-epsilons)[:, None] * (1.0 - deltas[:, None] - alpha[None, :])
    return np.clip(np.minimum(rise, fall).min(axis=0), alpha, 1.0)


def _gaussian_mu(distribution: Any) -> float | None:
    """:math:`\\mu` of a Gaussian loss or a composition of Gaussians only, else None."""
    if isinstance(distribution, GaussianLoss):
        return 1.0 / distribution.sigma
    if not isinstance(distribution, Composed):
        return None
    parts = [(part, count) for part, count in distribution.parts if isinstance(part, GaussianLoss)]
    if len(parts) < len(distribution.parts):
        return None
    return math.sqrt(math.fsum(count / part.sigma**2 for part, count in parts))


def _gaussian_tpr(alpha: float, mu: float) -> float:
    if alpha <= 0.0 or alpha >= 1.0:
        return alpha
    normal = NormalDist()
    return normal.cdf(normal.inv_cdf(alpha) + mu)


def _test_of(guarantee: PrivacyGuarantee) -> str:
    """What a test against ``guarantee``'s relation decides."""
    whom = "one person's rows" if guarantee.unit == "person" else "one record"
    return {
        "add-remove": f"whether {whom} {'are' if guarantee.unit == 'person' else 'is'} in the data",
        "replace": ("which of two values one device holds" if guarantee.model == "local"
                    else f"which of two values {whom} hold{'' if guarantee.unit == 'person' else 's'}"),
        "history": f"which of two histories of values one device has (over {guarantee.reports} report(s))",
        "stable": "which of two unchanged values one device holds",
        "attribute": "which of two values one attribute of a device's record holds",
    }[guarantee.neighbouring]
