r"""Privacy amplification by shuffling: the central :math:`(\varepsilon, \delta)` of n shuffled local reports.

When a shuffler (a relay that strips senders and permutes reports, ``dpdist relay``) stands
between the devices and the collector, the collector sees the *multiset* of the n reports of a
batch, and an :math:`\varepsilon_0`-LDP report hides among the others.  The guarantee is central,
under ``"replace"`` neighbours (one user's value changed, the other n - 1 fixed and arbitrary),
and assumes the shuffler does not collude with the collector.

Method
------
Every bound here reduces the shuffled multiset to a post-processing of a pair of count
distributions and computes their hockey-stick divergence :math:`\delta(\varepsilon)` exactly
(by blocks that only overstate it; :mod:`._reduction`), then finds :math:`\varepsilon` by
bisection.  The reductions, for a neighbouring pair of inputs :math:`(x_0, x_1)`:

* **from the channel** (``method="channel"``, :mod:`._channel`): the victim's two output laws
  decompose exactly into three categories (two disjoint informative parts and a common rest,
  with the pair's own likelihood ratios and total variation: the victim side of Wang et al.'s
  *variation-ratio* reduction, VLDB 2024), and every other user's law dominates a mixture of
  those three parts that fits under the channel's *privacy blanket* :math:`\min_x R(x)`
  (Balle, Bell, Gascón & Nissim, CRYPTO 2019).  Each other user is then one of the three
  categories or revealed to the adversary; revealing it and the number of unrevealed users only
  helps the adversary, so the divergence of the resulting count distributions bounds the
  shuffled output's.  Unlike Wang et al.'s numerical bound, the others' common part is not
  assumed to coincide with the victim's (which their count statistic needs and a general channel
  does not give); for GRR the blanket candidate is the whole privacy blanket and the result is
  the exact blanket bound, which Su, Cheng & Wang (2025) show optimal among decomposition
  bounds, and it agrees with Wang et al.'s within 0.5% at n >= 10^5.  The bound is the largest
  over pair classes of the smallest over three candidate decompositions, at every
  :math:`\varepsilon`.
* **for any** :math:`\varepsilon_0` **-LDP randomizer** (``method="generic"``): Feldman,
  McMillan & Talwar's clone reduction (FOCS 2021, sec. 4): each other user is a clone of
  :math:`x_0` or :math:`x_1` with probability :math:`e^{-\varepsilon_0}/2` each.  (FMT's 2023
  "stronger clone" probability :math:`2/(e^{\varepsilon_0}+1)` holds only for a restricted class of
  randomizers, per their erratum; from a channel it is read off exactly instead.)
* :func:`closed_form_epsilon`: FMT21 Theorem 3.1.

``method="numerical"`` (the default) takes the channel when the protocol has one small enough to
enumerate its pairs and the generic bound otherwise.  :func:`account` says which was used.

Rounds (:mod:`._composition`): one round's curve :math:`\hat\delta(\varepsilon)` bounds every
neighbouring pair's hockey-stick divergence, so the symmetric pair whose curve connects its values on a
grid ("connect the dots", Doroshenko et al., PETS 2022) *dominates* each round's pairs at every
:math:`\varepsilon` (Zhu, Dathathri & Gopi, AISTATS 2022); dominating pairs compose, so the rounds'
privacy loss distributions are convolved (as Koskela, Jälkö & Honkela, AISTATS 2020) and
:math:`\delta(\varepsilon)` is read off exactly.  For GRR (d = 3) it is within 1-4% of the exact loss
of one concrete pair composed over the rounds, n = 10^3..10^7, :math:`\varepsilon_0` = 0.5..8, 1-100
rounds (``docs/reference/benchmarks/anonymity.md``).  :func:`compose_rounds` is the optimal composition theorem of Kairouz,
Oh & Viswanath (ICML 2015) applied to each round's :math:`(\varepsilon_r, \delta_r)`, which
:func:`account` used before (up to 9.4x looser at 30 rounds and 16x at 100).  Memoized protocols
are refused: their rounds share a memo (two shuffled rounds of l-grr lose exact :math:`\delta` 0.3 at
the sum of the epsilons, n = 2).

Checks (``tests/amplification/test_amplification.py``): on tiny n and d the exact loss of the shuffled multiset
(every arrangement of the other users) lies below the bound; for binary randomized response at
n = 10^4 the exact loss meets the bound within 25%; the numerical bound reproduces values printed
by FMT21's and Balle et al.'s public code (table in the test, with sources).  Rounds
(``tests/amplification/test_composition.py``): on tiny n the exact loss of 2-4 rounds, every
combination of per-round neighbouring pairs, lies below the composed bound; at n = 10^3..10^6 a
concrete pair's exact composed loss (:mod:`._lower_bound`) lies below it, within 1-4%.
"""

from __future__ import annotations

from .._guarantee import PrivacyGuarantee
from ..local import LocalProtocol
from ._accounting import (
    METHODS,
    ShuffledAccount,
    ShuffledGuarantee,
    account,
    channel_delta,
    channel_epsilon,
    compose_rounds,
    generic_reduction,
    numerical_delta,
    numerical_epsilon,
    shuffled,
)
from ._channel import channel_reductions, clone_probability
from ._closed_form import closed_form_epsilon
from ._loss import SHUFFLE_ASSUMPTIONS, shuffled_loss
from ._reduction import PairDivergence, Reduction

__all__ = [
    "METHODS",
    "ShuffledAccount",
    "ShuffledGuarantee",
    "account",
    "shuffled",
    "shuffled_guarantee",
    "shuffled_loss",
    "SHUFFLE_ASSUMPTIONS",
    "channel_delta",
    "channel_epsilon",
    "channel_reductions",
    "clone_probability",
    "closed_form_epsilon",
    "compose_rounds",
    "generic_reduction",
    "numerical_delta",
    "numerical_epsilon",
    "PairDivergence",
    "Reduction",
]


def shuffled_guarantee(protocol: LocalProtocol, n: int, delta: float, method: str = "numerical", rounds: int = 1) -> PrivacyGuarantee:
    """:func:`shuffled` with ``method`` and ``rounds`` by position: the central
    :class:`~dpdist.privacy.PrivacyGuarantee` of ``n`` shuffled reports of ``protocol`` per round.

    Parameters
    ----------
    protocol : LocalProtocol
        Memoryless (memoized protocols are refused).
    n : int
        Reports shuffled together (public; one per user).
    delta : float
    method : {"numerical", "channel", "generic", "closed-form"}
        See the module docstring.
    rounds : int
        Rounds of ``n`` fresh reports each, composed through their privacy loss distributions.

    Returns
    -------
    PrivacyGuarantee
        ``(epsilon, delta)`` under ``"replace"`` neighbours, ``model="central"``, never weaker than
        the local guarantee composed over the rounds.
    """
    return shuffled(protocol, n, delta, method=method, rounds=rounds)
