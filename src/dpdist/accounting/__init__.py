r"""Privacy accounting in several currencies: what a sequence of campaigns and releases has spent.

A mechanism's loss is a value, :class:`PrivacyLoss`: its :math:`(\varepsilon, \delta)` guarantee, its
:math:`\rho`-zCDP when it has one, and the privacy loss distribution (PLD) of a pair dominating its
neighbouring pairs when it has one, with where they come from and what they assume.  Composition is a
function of values (:func:`sequential`, :func:`parallel`; OpenDP's measures and combinators), and an
accountant reads one currency off the result (:func:`state`, giving a :class:`Statement`):

* ``"basic"``: the sum of the epsilons and of the deltas (Dwork & Roth 2014, Thm. 3.16);
* ``"zcdp"``: the sum of the rhos, converted at a delta (Bun & Steinke 2016; Canonne, Kamath & Steinke 2020);
* ``"pld"``: the composed PLD's :math:`\varepsilon(\delta)`, each mechanism's pair composed on a bounded lattice by
  repeated squaring (Koskela et al. 2020; Doroshenko et al. 2022): a campaign of :math:`10^9` reports costs
  under a second;
* ``"tightest"``: the smallest of those that can state every charge.

Where the losses come from:

* :func:`protocol_loss`: a local protocol's exact loss per report from its exact channel (one pair's
  output classes for GRR, SS, OUE and SUE at any domain size; every pair of an enumerable channel
  otherwise; else the worst case of its :math:`\varepsilon`), a campaign's over its reports (fresh reports
  compose; a memoized protocol's reports are one mechanism, ``guarantee_over``);
* :func:`discrete_laplace`, :func:`gaussian`: the central mechanisms by their noise;
* :meth:`PrivacyLoss.of_guarantee`: anything that states a guarantee (the worst case of it);
* :func:`dpdist.amplification.shuffled_loss`: a relayed campaign's rounds, amplified by shuffling.

What the numbers mean for a person, in odds (:mod:`._odds`): :func:`guess_odds`, how likely an attacker who sees a
device's reports guesses its value (exact from the channel, or a certified bound), and :func:`tradeoff`, a membership
test's true-positive rate at a false-positive rate (f-DP), from a guarantee or a loss.

>>> from dpdist import accounting, local
>>> daily = accounting.protocol_loss(local.make("grr", epsilon=0.1, domain_size=2))
>>> year = accounting.sequential([daily] * 365)
>>> round(accounting.state(year, 1e-8, "basic").epsilon, 6)
36.5
>>> 11.95 < accounting.state(year, 1e-8, "pld").epsilon < 12.1
True

Every statement says which accountant produced it and what it assumes: the neighbouring relation
of the guarantees, fresh randomness per mechanism (no report, memo or shuffle's sample reused), and
each mechanism's own assumptions.  ``docs/how-to/plan-a-budget.md`` ("Accountants") has the numbers.
"""

from ._accountants import ACCOUNTANTS, CHOICES, Statement, cannot_state, check_accountant, state
from ._distributions import Atoms, Composed, Curve, GaussianLoss, LossDistribution, loss_from_dict
from ._loss import FRESH_RANDOMNESS, PrivacyLoss, parallel, repeated, sequential
from ._mechanisms import discrete_laplace, gaussian
from ._odds import FPRS, RANGES, GuessOdds, TradeOff, guess_bound, guess_odds, tradeoff
from ._pld import DISCRETIZATION, delta_at, discretization_error, epsilon_at
from ._protocols import MEMO_ASSUMPTION, protocol_loss
from ._zcdp import zcdp_epsilon

__all__ = [
    "ACCOUNTANTS", "CHOICES", "Statement", "state", "cannot_state", "check_accountant", "PrivacyLoss", "sequential", "repeated", "parallel",
    "protocol_loss", "discrete_laplace", "gaussian", "Atoms", "Composed", "Curve", "GaussianLoss", "LossDistribution",
    "loss_from_dict", "DISCRETIZATION", "epsilon_at", "delta_at", "discretization_error", "zcdp_epsilon",
    "FRESH_RANDOMNESS", "MEMO_ASSUMPTION", "GuessOdds", "TradeOff", "guess_odds", "guess_bound", "tradeoff", "FPRS",
    "RANGES",
]
