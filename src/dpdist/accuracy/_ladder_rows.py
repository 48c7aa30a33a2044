r"""The rungs of the trust ladder: one campaign's per-item error under each deployment model, at one central guarantee.

Every row holds the target central :math:`(\varepsilon, \delta)` under ``"replace"`` neighbours (one device's item
changed; :math:`n` is public) and states its error as the mean over the items of
:math:`\mathbb E[(\hat f_i - f_i)^2]`, with :math:`f_i = c_i/n` the data's frequencies (``counts`` :math:`c_i`):

* **local only**: the campaign's protocol at :math:`\varepsilon` (an :math:`\varepsilon`-LDP report is central
  :math:`\varepsilon`-DP, :math:`\delta = 0`); its analytic variance ``protocol.variance(n, f)``.
* **shuffled** (dpdist's relay): the largest :math:`\varepsilon_0` whose reports, shuffled among
  :math:`n - \mathrm{colluding} \times \mathrm{tokens\_each}` honest ones, are central :math:`(\varepsilon, \delta)` by
  :func:`dpdist.amplification.shuffled` (the exact shuffle accountant; the collector knows the colluding reports,
  :func:`~dpdist.amplification.relayed_statement`), to 0.1%; the protocol's variance at :math:`\varepsilon_0`.  Per
  device: with :math:`T` = ``tokens_each`` a device may send :math:`T` reports in one round, so one report is held to
  :math:`(\varepsilon/T, \delta/\sum_{j<T} e^{j\varepsilon/T})` and the device's :math:`T` to their group bound
  (:func:`~dpdist.amplification._statement.device_bound`).
* **sample-and-threshold** (Nebula): each device reports with probability :math:`p`, counts of at least
  :math:`K` reports released (:mod:`dpdist.accounting._threshold`, exact; the colluding devices' reports,
  :math:`\mathrm{colluding} \times \mathrm{tokens\_each}` as in the relay's row, lower :math:`K`);
  :math:`\hat f_i = S_i/(np)` if :math:`S_i \ge K`, else 0 (suppressed), :math:`S_i \sim \mathrm{Bin}(c_i, p)`: its
  mean square error exactly, bias of the suppressed items included, from the binomial's lower tail.
* **central curator**: the exact discrete Laplace (l1 sensitivity 2, ``central.noise.laplace_mechanism`` on integer
  counts: :math:`\varepsilon` rounded down to its dyadic value, variance :math:`2\alpha/(1-\alpha)^2`,
  :math:`\alpha = e^{-\varepsilon'/2}`) or discrete Gaussian histogram (l2 sensitivity :math:`\sqrt 2`,
  ``central.noise.gaussian_mechanism``: its rounded :math:`\sigma^2` on the grid); variance over :math:`n^2`.
* **secure aggregation** (not run by dpdist): devices add shares of discrete Laplace noise (differences of Pólya
  variables, Goryczka & Xiong 2017; Balle et al. 2020) so that the ``n - colluding`` honest shares alone are one
  discrete Laplace of :math:`\alpha = e^{-\varepsilon/2}`; all :math:`n` shares give :math:`n/(n -
  \mathrm{colluding})` times its variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee
from ..errors import InvalidParameterError

__all__ = ["LadderRow", "CENTRAL_SENSITIVITY", "HOLDS_AGAINST", "assumptions_of", "counts_of", "threshold_errors"]

#: whom each model's stated guarantee holds against (short, for the table; the assumptions say the rest)
HOLDS_AGAINST = {
    "local": "everyone",
    "shuffled": "collector, analyst",
    "sample-and-threshold": "analyst only",
    "central (discrete Laplace)": "analyst only",
    "central (Gaussian)": "analyst only",
    "secure aggregation": "server, analyst",
}
#: the same, said in full (``to_dict``)
HOLDS_AGAINST_SAID = {
    "local": "everyone: the collector, who sees every report with its sender, and any colluding devices",
    "shuffled": "the collector and the analyst, while the relay does not collude with the collector; not the relay and "
                "collector together (then the local guarantee alone)",
    "sample-and-threshold": "the analyst, who sees the released counts only; not the aggregation server, which knows "
                            "how many reports share each unrevealed item (with one item unrevealed, its exact count: "
                            "against the server, sampling alone, delta >= p)",
    "central (discrete Laplace)": "the analyst only: the curator holds every raw item",
    "central (Gaussian)": "the analyst only: the curator holds every raw item",
    "secure aggregation": "the server and the analyst, within the protocol's threshold of colluding devices",
}
#: a replaced item moves two counts by one: l1 sensitivity 2, l2 sensitivity sqrt(2)
CENTRAL_SENSITIVITY = {"l1": 2, "l2": math.sqrt(2.0)}


@dataclass(frozen=True)
class LadderRow:
    """One deployment model: its stated central guarantee, parameters, per-item error and what each party is trusted with.

    Attributes
    ----------
    model : str
        ``"local"``, ``"shuffled"``, ``"sample-and-threshold"``, ``"central (discrete Laplace)"``, ``"central
        (Gaussian)"`` or ``"secure aggregation"``.
    runs_in_dpdist : bool
        Whether dpdist runs this deployment (False: computed only).
    guarantee : PrivacyGuarantee or None
        What the row states (None: the row is not offered, ``notes`` say why).
    parameters : dict
        The row's own (epsilon0, threshold and p, noise parameters, honest reports, ...).
    mse, variance : float
        Mean over the items of the squared error and of the variance of the estimated frequency (NaN: not offered).
    suppressed : float
        Expected number of items suppressed (sample-and-threshold), else 0.
    assumptions : tuple of (party, what it must do or may do)
    notes : tuple of str
    guesses : tuple of PartyGuess
        What each party can guess of one device's item (:mod:`._ladder_odds`; none where the row is not offered).
    """

    model: str
    runs_in_dpdist: bool
    guarantee: PrivacyGuarantee | None
    parameters: dict
    mse: float
    variance: float
    suppressed: float = 0.0
    assumptions: tuple = ()
    notes: tuple = field(default=())
    guesses: tuple = field(default=())

    @property
    def offered(self) -> bool:
        return self.guarantee is not None

    @property
    def holds_against(self) -> str:
        """Whom the stated guarantee holds against, in a few words (:data:`HOLDS_AGAINST`)."""
        return HOLDS_AGAINST[self.model]

    @property
    def rmse(self) -> float:
        return math.sqrt(self.mse) if math.isfinite(self.mse) else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "runs_in_dpdist": self.runs_in_dpdist,
                "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
                "holds_against": HOLDS_AGAINST_SAID[self.model],
                "parameters": self.parameters, "mse": _finite(self.mse), "variance": _finite(self.variance),
                "rmse": _finite(self.rmse), "suppressed": self.suppressed,
                "assumptions": [{"party": party, "assumes": text} for party, text in self.assumptions],
                "notes": list(self.notes), "guesses": [guess.to_dict() for guess in self.guesses]}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def assumptions_of(model: str, parameters: dict) -> tuple[tuple[str, str], ...]:
    """Party by party, what ``model``'s stated guarantee needs (who may collude, who must be honest, what a device
    trusts), with the row's numbers filled in."""
    colluding = parameters.get("colluding", 0)
    if model == "local":
        return (("device", "runs dpdist's randomizer with fresh secure randomness: the only party it trusts"),
                ("collector", "may be malicious and see every report with its sender"),
                ("other devices", "any number may collude with the collector: the guarantee does not depend on them"))
    if model == "shuffled":
        tokens = parameters["tokens_each"]
        return (("device", "trusts its randomizer, and that the relay strips who sent a report from what it says (the "
                           "report is sealed to the collector's key: the relay never reads it)"),
                ("relay", "does not collude with the collector (each token is bound to its report: a report the relay "
                          "drops costs data, not privacy); a batch holds every admitted report of a round"),
                ("issuer", "independent of the collector; at most tokens_each = "
                           f"{tokens} token(s) per credential (one report each), so a device, the one protected "
                           f"included, sends at most {tokens} report(s) per round: the stated guarantee is per device, "
                           + ("one report" if tokens == 1 else f"its {tokens} reports by group privacy")),
                ("other devices", f"at most {colluding} are the collector's or the relay's (x {tokens} tokens = "
                                  f"{colluding * tokens} known reports); at least {parameters['honest_reports']} "
                                  "reports are honest and fresh"),
                ("collector", "keeps no arrival time or sender id, accepts no report around the relay"))
    if model == "sample-and-threshold":
        return (("device", "samples itself honestly with probability p and fresh randomness (a device that always "
                           "reports is a colluding one)"),
                ("aggregation server", "learns only items with at least K reports and their counts: needs the "
                                       "threshold encryption to hold (its randomness server does not collude with "
                                       "it) and is trusted not to use what else it sees (in STAR, how many reports "
                                       "share each unrevealed item: outside the stated guarantee)"),
                ("other devices", f"at most {colluding} are the server's or forged (Sybils), each putting in up to "
                                  f"tokens_each = {parameters['tokens_each']} report(s) (the relay row's adversary): "
                                  f"{parameters['colluding_reports']} forged report(s), each lowering the threshold "
                                  f"by one: accounted at K - {parameters['colluding_reports']}"),
                ("analyst", "sees the released counts only"))
    if model.startswith("central"):
        return (("device", "sends its raw item: trusts the curator entirely"),
                ("curator", "honest and secure: holds every raw item, draws the noise with a secure generator, "
                            "releases the noisy histogram only"),
                ("analyst", "sees the noisy histogram only; colluding devices change nothing"))
    if model == "secure aggregation":
        return (("device", "adds its share of the noise and trusts the protocol's cryptography (not run by dpdist)"),
                ("server", "learns only the sum; colludes with at most the protocol's threshold of devices"),
                ("other devices", f"at most {colluding} devices (one share each, whatever tokens_each) are the "
                                  f"server's or skip their noise share (dropouts "
                                  f"included): the other {parameters['honest_devices']} shares alone give the "
                                  "guarantee"))
    raise InvalidParameterError(f"No assumptions are written for the ladder model {model!r}.")


def counts_of(frequencies: np.ndarray, n: int) -> np.ndarray:
    """The item counts of ``n`` devices nearest ``frequencies`` (largest remainders: they sum to ``n``)."""
    exact = np.asarray(frequencies, dtype=np.float64) * n
    counts = np.floor(exact).astype(np.int64)
    short = n - int(counts.sum())
    if short > 0:
        counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def threshold_errors(counts: np.ndarray, p: float, threshold: int) -> tuple[float, float, float]:
    r"""``(mse, variance, suppressed)`` of :math:`\hat f_i = S_i 1\{S_i \ge K\}/(np)`, :math:`S_i \sim
    \mathrm{Bin}(c_i, p)`, means over the items (``suppressed``: expected items below the threshold), exactly:
    :math:`\mathbb E[S 1\{S \ge K\}] = c p - \sum_{s < K} s\,\Pr[S = s]`, likewise the second moment."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    below = np.arange(threshold)[None, :]
    pmf = np.asarray(stats.binom.pmf(below, counts[:, None], p), dtype=np.float64)  # Pr[S = s], s < K
    first = counts * p - (pmf * below).sum(axis=1)
    second = counts * p * (1 - p) + (counts * p) ** 2 - (pmf * below**2).sum(axis=1)
    mean, square = first / (n * p), second / (n * p) ** 2
    truth = counts / n
    variance = square - mean**2
    mse = square - 2 * truth * mean + truth**2
    return float(np.mean(mse)), float(np.mean(variance)), float(pmf.sum(axis=1).sum())
