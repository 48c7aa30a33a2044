"""From reductions to epsilon: the worst pair, the best candidate, bisection; rounds through :mod:`._composition`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .._documents import read_dataclass
from .._guarantee import AssumingGuarantee
from .._types import ArrayLike
from .._validation import Implies, Integer, Interval, Optional, Options, check_param, validate_params
from ..errors import InvalidParameterError
from ..local import LocalProtocol
from . import _channel, _closed_form, _composition, _structured
from ._checks import PROTOCOL, check_delta, check_epsilon0, check_n, check_protocol
from ._reduction import Reduction, pair_divergence

__all__ = [
    "METHODS",
    "ShuffledAccount",
    "ShuffledGuarantee",
    "assumptions_of",
    "SHUFFLE_ASSUMPTIONS",
    "account",
    "shuffled",
    "generic_reduction",
    "numerical_delta",
    "numerical_epsilon",
    "channel_delta",
    "channel_epsilon",
    "compose_rounds",
]

#: what a shuffled guarantee (and a shuffled round's loss) assumes, party by party
SHUFFLE_ASSUMPTIONS = (
    "the shuffler (relay) does not collude with the collector, and forwards the reports devices randomized (it "
    "substitutes none of its own)",
    "each round's batch holds the reports of n distinct devices, one each, fresh for the round (no shuffle's sample "
    "reused across rounds)",
)


@dataclass(frozen=True, eq=False)
class ShuffledGuarantee(AssumingGuarantee):
    """The central guarantee of shuffled reports (:func:`shuffled`): a :class:`~dpdist.privacy.PrivacyGuarantee`, with
    its fields, ``to_dict`` (``ShuffledGuarantee.from_dict`` reads it back as the same guarantee, with
    :data:`SHUFFLE_ASSUMPTIONS`; ``PrivacyGuarantee.from_dict`` of it gives the plain guarantee, which assumes nothing
    and compares equal: a document holds no assumptions), equality and hash, that holds only
    under ``assumptions`` (:data:`SHUFFLE_ASSUMPTIONS`: the shuffler does not collude with the collector, and each
    batch holds fresh reports of distinct devices).  ``describe()`` ends with them (``"; assuming: ..."``), and a budget
    session that charges it keeps them in its account's statement, as it does for
    :func:`~dpdist.amplification.shuffled_loss`; so do :func:`dpdist.privacy.sequential`, ``parallel``, ``split``
    and ``convert`` (an :class:`~dpdist._guarantee.AssumingGuarantee`, which it builds on)."""

    assumptions: tuple[str, ...] = SHUFFLE_ASSUMPTIONS


#: ``numerical``: the channel's reductions when the protocol has a small finite channel, else ``generic``
METHODS = ("numerical", "channel", "generic", "closed-form")
#: what an account over several rounds says of their composition
COMPOSITION_NOTE = (
    "rounds composed through the privacy loss distribution of a pair that dominates every round's neighbouring pairs "
    "(connect-the-dots from the round's hockey-stick bound, Doroshenko et al. 2022; dominating pairs compose, Zhu, "
    "Dathathri & Gopi 2022), convolved as in Koskela, Jalko & Honkela 2020"
)
_RELATIVE_PRECISION = 1e-4  # bisection stops when the bracket is this narrow (relative)


@validate_params({"clone": Optional(Interval(0.0, 1.0, closed="right"))})
def generic_reduction(epsilon0: float, clone: float | None = None) -> Reduction:
    """FMT21's clone reduction for any ``epsilon0``-LDP randomizer (clone probability ``e^-epsilon0`` unless given)."""
    w = math.exp(-epsilon0) if clone is None else clone
    e = math.exp(epsilon0)
    return Reduction((e / (e + 1), 1 / (e + 1), 0.0), (1 / (e + 1), e / (e + 1), 0.0), (w / 2, w / 2, 0.0))


class _Bound:
    """``delta(t)``: the largest over pair classes of the smallest over their candidates."""

    def __init__(self, classes: Sequence[Sequence[Reduction]], n: int):
        self.classes = [[pair_divergence(reduction, n) for reduction in candidates] for candidates in classes]
        self.t_max = max(math.log(reduction.ratio) for candidates in classes for reduction in candidates)

    def __call__(self, t: float) -> float:
        return max(min(candidate.delta(t) for candidate in candidates) for candidates in self.classes)

    def within(self, t: float, delta: float) -> bool:
        """Whether ``delta(t) <= delta``, evaluating candidates lazily (the last one that fit is tried first)."""
        for candidates in self.classes:
            for index, candidate in enumerate(candidates):
                if candidate.delta(t) <= delta:
                    candidates.insert(0, candidates.pop(index))
                    break
            else:
                return False
        return True

    def epsilon(self, delta: float) -> float:
        """The smallest ``t`` found (to 1e-4 relative) with ``delta(t) <= delta``; ``t_max`` at worst."""
        return _bisect(lambda t: self.within(t, delta), self.t_max)

    def curve(self, points) -> np.ndarray:
        """Upper bounds on ``delta`` at each of ``points`` (increasing): per pair class, its candidate smallest at
        the middle point, and on the upper half the smaller of it and the candidate smallest at the last point
        (each candidate bounds its class's pairs, so any of them is valid; fewer evaluations than all of them)."""
        points = np.asarray(points, dtype=np.float64)
        middle, last, upper = float(points[points.size // 2]), float(points[-1]), points.size // 2
        values = np.zeros(points.size)
        for candidates in self.classes:
            at_middle = min(candidates, key=lambda candidate: candidate.delta(middle))
            at_last = min(candidates, key=lambda candidate: candidate.delta(last))
            own = np.array([at_middle.delta(float(t)) for t in points])
            if at_last is not at_middle:
                own[upper:] = np.minimum(own[upper:], [at_last.delta(float(t)) for t in points[upper:]])
            values = np.maximum(values, own)
        return values


def _bisect(feasible: Callable[[float], bool], high: float) -> float:
    """The smallest ``t`` in ``[0, high]`` (to 1e-4 relative) with ``feasible(t)``, for a monotone ``feasible``."""
    if feasible(0.0):
        return 0.0
    low = 0.0
    while high - low > _RELATIVE_PRECISION * high:
        middle = 0.5 * (low + high)
        if feasible(middle):
            high = middle
        else:
            low = middle
    return high


def numerical_delta(epsilon: float, epsilon0: float, n: int, clone: float | None = None) -> float:
    """:math:`\\delta(\\varepsilon)` of FMT21's clone reduction (any ``epsilon0``-LDP randomizer, or the given clone probability)."""
    return pair_divergence(generic_reduction(check_epsilon0(epsilon0), clone), check_n(n)).delta(epsilon)


def numerical_epsilon(epsilon0: float, n: int, delta: float, clone: float | None = None) -> float:
    """The smallest :math:`\\varepsilon` (to 1e-4 relative) with :func:`numerical_delta` at most ``delta``."""
    epsilon0, n, delta = check_epsilon0(epsilon0), check_n(n), check_delta(delta)
    return _Bound([[generic_reduction(epsilon0, clone)]], n).epsilon(delta)


@validate_params({"channel": _channel.CHANNEL}, owner="amplification.channel_delta")
def channel_delta(channel: ArrayLike, n: int, epsilon: float) -> float:
    r""":math:`\delta(\varepsilon)` of ``n`` shuffled reports through ``channel``: the largest over pair classes of the
    smallest over their candidate reductions (:mod:`._channel`)."""
    return _Bound(_channel.channel_reductions(channel), check_n(n))(float(epsilon))


@validate_params({"channel": _channel.CHANNEL}, owner="amplification.channel_epsilon")
def channel_epsilon(channel: ArrayLike, n: int, delta: float) -> float:
    """The central epsilon at ``delta`` of ``n`` shuffled reports, one per user, through ``channel`` (rows: inputs)."""
    n, delta = check_n(n), check_delta(delta)
    return _Bound(_channel.channel_reductions(channel), n).epsilon(delta)


def compose_rounds(round_within: Callable[[float, float], bool], epsilon0: float, rounds: int, delta: float) -> float:
    r"""The central epsilon at total ``delta`` of ``rounds`` rounds; ``round_within(t, d)``: whether one round's curve
    has :math:`\delta(t) \le d`.

    Each round is :math:`(\varepsilon_r, \delta_r)`-DP for every :math:`\delta_r`
    (:math:`\varepsilon_r` read off its curve); ``rounds`` of them compose, adaptively, to
    :math:`(\varepsilon', 1 - (1-\delta_r)^k (1 - \delta_k(\varepsilon_r, \varepsilon')))`-DP, the optimal
    composition of Kairouz, Oh & Viswanath (ICML 2015, Thm. 3.3), with
    :math:`\delta_k(\varepsilon, \varepsilon') = \mathbb E_{L \sim \mathrm{Bin}(k, 1/(1+e^\varepsilon))}
    [(1 - e^{\varepsilon' - (k-2L)\varepsilon})_+]`.  The split :math:`\delta_r` is searched on a
    grid; the result is never above ``rounds * epsilon0`` (pure sequential composition).

    It needs only a curve's ``within`` test; :func:`account` composes rounds through their privacy loss
    distributions instead (:mod:`._composition`; up to 9.4x tighter at 30 rounds of GRR, 16x at 100).
    """
    rounds = check_param("amplification", "rounds", rounds, Integer(low=1, high=10**6))
    if rounds == 1:
        return min(_bisect(lambda t: round_within(t, delta), epsilon0), epsilon0)
    best = rounds * epsilon0
    for share in (0.5, 0.2, 0.05, 0.01):
        per_round = share * delta / rounds
        epsilon_r = _bisect(lambda t: round_within(t, per_round), epsilon0)
        if epsilon_r == 0.0:
            continue
        budget = 1 - (1 - delta) / (1 - per_round) ** rounds  # delta_k(eps_r, eps') must stay below this
        if budget <= 0:
            continue
        best = min(best, _bisect(lambda e: _rr_composition(epsilon_r, rounds, e) <= budget, rounds * epsilon_r))
    return best


def _rr_composition(epsilon: float, rounds: int, target: float) -> float:
    """Hockey-stick divergence at ``e^target`` of ``rounds``-fold binary randomized response with ``epsilon``."""
    from scipy import stats  # lazy: loads scipy (0.4-2 s)

    ones = np.arange(rounds + 1)
    weights = stats.binom.pmf(ones, rounds, 1 / (1 + math.exp(epsilon)))
    return float(np.dot(weights, np.maximum(1 - np.exp(target - (rounds - 2 * ones) * epsilon), 0.0)))


@dataclass(frozen=True)
class ShuffledAccount:
    """The central ``(epsilon, delta)`` of ``n`` shuffled reports (per round) of a protocol, and how it was derived
    (:func:`shuffled` states it as a :class:`~dpdist.privacy.PrivacyGuarantee`)."""

    epsilon: float
    delta: float
    n: int
    epsilon0: float
    method: str
    rounds: int = 1
    pair_classes: int = 0
    notes: tuple[str, ...] = field(default=())
    #: how the rounds were composed: ``"none"`` (one round) or ``"privacy loss distribution"`` (:mod:`._composition`)
    composition: str = "none"

    def to_dict(self) -> dict:
        return {
            "epsilon": self.epsilon, "delta": self.delta, "n": self.n, "epsilon0": self.epsilon0,
            "method": self.method, "rounds": self.rounds, "pair_classes": self.pair_classes, "notes": list(self.notes),
            "composition": self.composition,
        }

    @classmethod
    def from_dict(cls, document: dict) -> "ShuffledAccount":
        """The account whose :meth:`to_dict` is ``document``; a field missing, of another type or NaN is refused by
        name (:class:`~dpdist.errors.MalformedDocumentError`)."""
        return read_dataclass(cls, document)


@validate_params({"protocol": PROTOCOL, "method": Options(METHODS)}, owner="shuffled", relations=(
    Implies("rounds", (1,), "method", ("closed-form",), why="FMT21's closed form accounts for one round; 'numerical' "
            "composes rounds", counterexample={"method": "closed-form", "rounds": 2}),))
def account(protocol: LocalProtocol, n: int, delta: float, method: str = "numerical", rounds: int = 1) -> ShuffledAccount:
    """The central guarantee of ``n`` shuffled reports of ``protocol`` per round, over ``rounds`` rounds.

    ``method``: ``"channel"`` (the reductions read from ``protocol.channel()``), ``"generic"`` (FMT21's
    clone reduction for any ``epsilon0``-LDP randomizer), ``"closed-form"`` (FMT21, Thm. 3.1; one round), or
    ``"numerical"``: ``"channel"`` when the protocol has a finite channel small enough to enumerate its pairs,
    ``"generic"`` otherwise.  ``rounds > 1`` compose through a dominating pair's privacy loss distribution
    (:mod:`._composition`; stated in ``composition`` and ``notes``).  Memoized protocols are refused (their
    rounds share a memo).
    """
    protocol = check_protocol(protocol)
    n, delta = check_n(n), check_delta(delta)
    _refuse_memoized(protocol)
    epsilon0 = float(protocol.guarantee.epsilon)
    notes: list[str] = []
    if method == "closed-form":
        epsilon = min(_closed_form.closed_form_epsilon(epsilon0, n, delta), epsilon0)
        return ShuffledAccount(epsilon, delta, n, epsilon0, method, notes=("FMT21 Theorem 3.1",))
    rounds = check_param("amplification", "rounds", rounds, Integer(low=1, high=10**6))
    classes, used = _reductions(protocol, epsilon0, method, notes)
    bound = _Bound(classes, n)
    if rounds == 1:
        epsilon, composition = compose_rounds(bound.within, max(epsilon0, bound.t_max), 1, delta), "none"
    else:
        epsilon = _composition.composed_epsilon(bound.curve, bound.within, bound.t_max, rounds, delta)
        composition = "privacy loss distribution"
        notes.append(COMPOSITION_NOTE)
    return ShuffledAccount(min(epsilon, rounds * epsilon0), delta, n, epsilon0, used, rounds, len(classes), tuple(notes),
                           composition)


def _why_no_channel(protocol, error: BaseException) -> str:
    """Why ``protocol.channel()`` gave no finite channel, in the words of a guarantee's notes (a relayed campaign's
    statement, docs/explanation/accounting.md "Amplification by shuffling (accounting)", does not quote the exception)."""
    if protocol.tags.kind == "numerical":
        return f"{protocol.display_name} randomizes real numbers: its inputs are no finite list"
    if isinstance(error, MemoryError):
        return f"the channel of {protocol.display_name} is too large to hold in memory"
    if isinstance(error, NotImplementedError):
        return f"the channel of {protocol.display_name} has too many outputs to enumerate"
    return str(error)  # the channel's own check (:mod:`._channel`), worded as a statement: too many pairs, not a law


def shuffled(protocol: LocalProtocol, n: int, delta: float, *, method: str = "numerical", rounds: int = 1) -> ShuffledGuarantee:
    """The central guarantee of ``n`` shuffled reports of ``protocol`` per round, over ``rounds`` rounds.

    ``protocol`` is a local protocol or its config (a dict); its name alone is refused, since its epsilon and
    domain decide the guarantee.  Amplification by shuffling, computed from the protocol's exact channel (or, without a usable
    one, for any randomizer with its epsilon): see :mod:`dpdist.amplification` for the method,
    its citations and the assumptions (the shuffler does not collude with the collector; the
    collector sees each batch of ``n`` as a multiset).  Rounds compose through their privacy loss
    distributions.  Returns :func:`account`'s ``(epsilon, delta)`` as a guarantee under ``"replace"``
    neighbours, ``model="central"`` (public as :func:`dpdist.privacy.shuffled`): a :class:`ShuffledGuarantee`, a
    :class:`~dpdist.privacy.PrivacyGuarantee` whose ``describe()`` ends with those assumptions
    (:data:`SHUFFLE_ASSUMPTIONS`, naming ``n`` and the rounds: :func:`assumptions_of`) and which a budget session
    charges keeping them.

    >>> from dpdist import local, privacy
    >>> privacy.shuffled(local.make("grr", epsilon=4.0, domain_size=8), n=10**6, delta=1e-8).epsilon < 0.05
    True
    """
    result = account(protocol, n, delta, method, rounds)
    return ShuffledGuarantee(max(result.epsilon, 1e-12), result.delta, "replace", "central",
                             assumptions=assumptions_of(n, rounds))


def assumptions_of(n: int, rounds: int = 1) -> tuple[str, ...]:
    """:data:`SHUFFLE_ASSUMPTIONS` naming the shuffle they are about, by its batch size ``n`` (and its rounds, past one):
    a statement read alone (a budget file's charge line) says of how many devices each batch must hold reports, and a
    session's line listing two shuffles' assumptions scopes each to its own ("the shuffle of n = 1000: ...")."""
    of_rounds = f" ({rounds} rounds)" if rounds > 1 else ""
    named = SHUFFLE_ASSUMPTIONS[1].replace("n distinct devices", f"{int(n)} distinct devices")
    return (SHUFFLE_ASSUMPTIONS[0], f"the shuffle of n = {int(n)}{of_rounds}: {named}")


def shuffled_within(protocol: LocalProtocol, n: int, delta: float, epsilon: float) -> bool:
    """Whether ``shuffled(protocol, n, delta).epsilon <= epsilon`` (one round, ``method="numerical"``), for a search
    over ``epsilon0`` (the trust ladder's relayed row).

    Where the curve's ``delta(epsilon)`` is already above ``delta`` (and ``epsilon0`` above ``epsilon``), the search
    over epsilon :func:`shuffled` runs can only end above ``epsilon`` (it returns a point where the curve is within
    ``delta``, and the curve does not increase): the answer is ``False`` from one evaluation instead of a search's
    fourteen.  Otherwise :func:`shuffled` decides.  The same answers.
    """
    protocol = check_protocol(protocol)
    n, delta = check_n(n), check_delta(delta)
    _refuse_memoized(protocol)
    epsilon0 = float(protocol.guarantee.epsilon)
    if epsilon0 > epsilon:
        classes, _ = _reductions(protocol, epsilon0, "numerical", [])
        if not _Bound(classes, n).within(float(epsilon), delta):
            return False
    return shuffled(protocol, n, delta).epsilon <= epsilon


def _reductions(protocol, epsilon0: float, method: str, notes: list[str]):
    if method in ("channel", "numerical"):
        structured = _structured.pair_classes(protocol)
        if structured is not None:
            notes.append("one pair class by symmetry; its output classes computed in closed form")
            return [_channel.pair_reductions(*structured)], "channel"
        try:
            channel = _channel.check_channel(protocol.channel(), f"{protocol.display_name}.channel")
            classes = _channel.channel_reductions(channel)
        except (NotImplementedError, InvalidParameterError, MemoryError) as error:
            why = _why_no_channel(protocol, error)  # words for a statement, not the exception's text
            if method == "channel":
                raise InvalidParameterError(f"{protocol.display_name}: no usable finite channel ({why}).") from None
            notes.append(f"no usable finite channel ({why}); the bound for any {epsilon0:g}-LDP randomizer is used")
        else:
            realized = _channel.realized_epsilon(channel)
            if realized > epsilon0 * (1 + 1e-9):
                raise InvalidParameterError(
                    f"{protocol.display_name}'s channel loses {realized!r} per report, more than its stated epsilon {epsilon0!r}."
                )
            return classes, "channel"
    return [[generic_reduction(epsilon0)]], "generic"


def _refuse_memoized(protocol) -> None:
    if protocol.tags.memoized:
        raise InvalidParameterError(
            f"{protocol.display_name} memoizes a permanent response per device: its rounds share the memo, so a "
            "round's shuffled guarantee does not compose over rounds, and one round's channel is not what a device "
            "reveals over time. Shuffling accounts for memoryless protocols."
        )
