r"""The prefix extending method as a protocol, ``pem``: heavy hitters of a huge or unknown domain.

PEM (Wang, Li, Lin, Jha & Li, "Locally Differentially Private Heavy Hitter
Identification", IEEE TDSC 2021 / arXiv:1708.06674, sec. V) finds the
:math:`k` most frequent items of a domain of :math:`2^L` bit strings (or of
words, encoded as bit strings by :class:`~dpdist.local.StringCodec`) without
enumerating it.

Client.  A user picks a group :math:`i` uniformly among :math:`G`
(independently of the item) and reports ``(i, j, y)``: the FLH report
(:mod:`~dpdist.local.frequency.flh`, public function :math:`j`, perturbed hash
:math:`y`) of the first :math:`s_i` bits of the item, :math:`s_i = \gamma + i\eta`
(:math:`\gamma = \lceil\log_2 k\rceil`, :math:`\eta` = ``step``,
:math:`s_G = L`; the paper's sec. V-A).  Prefixes of up to 62 bits are mapped to
FLH's domain :math:`[0, P)` by a fixed public mixing (SplitMix64 mod
:math:`P = 2^{31} - 1`).

Privacy.  Every user reports once, at the full :math:`\varepsilon`: the groups
are disjoint, so the whole collection is :math:`\varepsilon`-LDP (parallel
composition; the paper's privacy split).  Exactly,
:math:`\Pr[(i, j, y) \mid v] = \frac{1}{G S}\,\mathrm{GRR}_g(y \mid h_j(\mathrm{mix}(v_{:s_i})))`,
between :math:`\frac{1}{GS}\frac{1 - p}{g - 1}` and :math:`\frac{p}{GS}`, a
ratio of :math:`e^\varepsilon`; ``channel()`` lists these :math:`G S g`
outputs and the conformance suite checks them.

Server.  The aggregator keeps one FLH table per group (:math:`G \times S \times g`
counts, mergeable by addition).  ``estimate`` runs the paper's rounds on them:
group 1 ranks all :math:`2^{s_1}` prefixes (those a word can start with, for
words), keeps the top :math:`k`; group :math:`i > 1` ranks the
:math:`k 2^\eta` one-step extensions of the survivors; group :math:`G` ranks
full items.  Since FLH answers any item from its table, the rounds need no
interaction with the devices: every user reports once, at any time.

Collisions.  Two candidates of a round collide in the mixing with probability
about :math:`|C_i|^2/(2P) \approx 10^{-4}`, which only merges their counts.
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist

import numpy as np

from ..._validation import EPSILON, Alphabet, Either, Integer, Interval, Optional, check_integer_values, refused_values
from ...errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from .._protocol import LocalProtocol, ParameterDependentTags, ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from ...estimates import HeavyHitters
from ..words import MAX_BITS, StringCodec, mix_prefixes
from . import _hashing
from .flh import FLH, MAX_HASH_RANGE, default_hash_range
from ..._types import ArrayLike

__all__ = ["PEM", "prefix_lengths"]

_MERSENNE_31 = 2**31 - 1
#: largest number of counts the aggregator keeps (all groups' tables)
_MAX_STATISTIC = 1 << 24
#: largest first round (it enumerates every prefix of that many bits)
_MAX_FIRST_BITS = 20


def prefix_lengths(bits: int, k: int, step: int) -> list[int]:
    r"""The groups' prefix lengths :math:`s_i = \lceil\log_2 k\rceil + i\eta`, the last one ``bits``."""
    start = min(bits, max(1, math.ceil(math.log2(k))))
    lengths = list(range(start + step, bits, step)) + [bits]
    return lengths


def default_step(k: int) -> int:
    r"""The paper's rule of thumb for :math:`\eta`: :math:`k 2^\eta \le 4096` candidates per round, at most 8."""
    return max(1, min(8, int(math.log2(4096 / k)) if k < 4096 else 1))


@register
class PEM(LocalProtocol):
    r"""Prefix extending method: the heavy hitters of :math:`2^L`-bit items or of words (module docstring).

    Parameters
    ----------
    epsilon : float
        Each user's budget (one report per user).
    bits : int, optional
        Item length :math:`L` (1..62) for integer items; exactly one of ``bits``
        and ``alphabet``.
    alphabet : str, optional
        For words: the public alphabet of :class:`~dpdist.local.StringCodec`
        (then :math:`L` = ``max_chars`` x bits per symbol, and ``privatize``
        takes strings; words are cut to ``max_chars``).
    max_chars : int
        Longest word, in characters (default 12; with ``alphabet``).
    k : int
        Number of heavy hitters the rounds keep (1..4096, default 10).
    step : int, optional
        Bits added per round :math:`\eta` (1..16); default :func:`default_step`.
    hash_count : int
        FLH's public family size :math:`S` (default 4096): a table of
        :math:`S g` counts per group; the family's bias has mean square about
        :math:`\lVert f\rVert_2^2/(S(g-1))`.  FLH's range :math:`g` is OLH's,
        :math:`\operatorname{round}(e^\varepsilon + 1)`, capped so that all groups' tables
        hold at most :math:`2^{24}` counts (:math:`g \le 2^{24}/(GS)`, and :math:`2^{20}`):
        every :math:`\varepsilon` of the supported range works; a capped :math:`g` costs
        variance only.
    family_seed : int
        Public seed of FLH's family (default 0).

    Notes
    -----
    Reports are ``(n, 3)`` unsigned arrays: group :math:`i \in [0, G)`, function
    index :math:`j \in [0, S)`, perturbed hash :math:`y \in [0, g)`.
    ``estimate`` returns a :class:`~dpdist.local.HeavyHitters`.
    """

    name = "pem"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: one cell of one group's table per report."""
        return 1
    summary = "prefix extending method: heavy hitters of a huge or unknown domain (bit strings or words), FLH per group"
    tags = ParameterDependentTags(  # pyright: ignore[reportAssignmentType]  (a descriptor: ProtocolTags on the class and each instance)
        ProtocolTags(kind="heavy_hitters", finite_channel=True, exact_simulate=True, unbiased=False),
        lambda protocol, tags: dataclasses.replace(tags, words=protocol.codec is not None),
    )
    _constraints = {
        "epsilon": EPSILON,
        "bits": Optional(Integer(low=1, high=MAX_BITS)),
        "alphabet": Optional(Alphabet()),
        "max_chars": Integer(low=1, high=MAX_BITS),
        "k": Integer(low=1, high=4096),
        "step": Optional(Integer(low=1, high=16)),
        "hash_count": Integer(low=1, high=1 << 20),
        "family_seed": Integer(low=0, high=2**63 - 1),
    }
    _relations = (Either("bits", "alphabet", exactly=True, why="integer items of that many bits, or words over the alphabet",
                         counterexample={"bits": None, "alphabet": None}),)
    _defaults = {"bits": None, "alphabet": None, "max_chars": 12, "k": 10, "step": None, "hash_count": 4096, "family_seed": 0}
    estimate_options = {
        "k": Integer(low=1, high=4096),
        "threshold": Interval(0.0, 1.0, closed="both"),
        "level": Interval(0.0, 1.0, closed="neither"),
    }

    def _setup(self):
        params = self._params
        self._codec = None
        if params["alphabet"] is not None:
            self._codec = StringCodec(alphabet=params["alphabet"], max_chars=params["max_chars"])
            if self._codec.bits > MAX_BITS:
                raise InvalidParameterError(
                    f"PEM encodes words in max_chars x {self._codec.bits_per_char} bits, at most {MAX_BITS}. "
                    f"Got max_chars={params['max_chars']!r} ({self._codec.bits} bits); lower 'max_chars'."
                )
        self._bits = self._codec.bits if self._codec is not None else params["bits"]
        self._step = params["step"] if params["step"] is not None else default_step(params["k"])
        self._lengths = np.array(prefix_lengths(self._bits, params["k"], self._step), dtype=np.int64)
        if self._lengths[0] > _MAX_FIRST_BITS:
            raise InvalidParameterError(
                f"PEM's first round would enumerate 2**{self._lengths[0]} prefixes (over 2**{_MAX_FIRST_BITS}); "
                "lower 'step' or raise 'k'."
            )
        # OLH's g, capped so that the groups' tables fit in _MAX_STATISTIC counts at any epsilon
        tables = self._lengths.size * params["hash_count"]
        if 2 * tables > _MAX_STATISTIC:
            raise InvalidParameterError(
                f"PEM keeps {self._lengths.size} groups x hash_count x hash_range = {self._lengths.size} x "
                f"{params['hash_count']} x (at least 2) counts; the product must be <= {_MAX_STATISTIC}. "
                "Lower 'hash_count' (or raise 'step')."
            )
        hash_range = default_hash_range(self.epsilon, min(MAX_HASH_RANGE, _MAX_STATISTIC // tables))
        self._oracle = FLH(epsilon=self.epsilon, domain_size=_MERSENNE_31, hash_count=params["hash_count"],
                           hash_range=hash_range, family_seed=params["family_seed"])
        self._cells = self._oracle.statistic_size

    # ------------------------------------------------------------------ identity
    @property
    def bits(self) -> int:
        """Item length :math:`L` in bits."""
        return self._bits

    @property
    def domain_size(self) -> int:
        """:math:`2^L`: the items are the integers below it (never enumerated)."""
        return 1 << self._bits

    @property
    def codec(self) -> StringCodec | None:
        """The word encoding, for a protocol over words."""
        return self._codec

    @property
    def prefix_lengths(self) -> list[int]:
        """:math:`s_1 < \\dots < s_G = L`, the prefix length each group reports."""
        return self._lengths.tolist()

    @property
    def groups(self) -> int:
        return int(self._lengths.size)

    @property
    def oracle(self) -> FLH:
        """The FLH oracle every group uses, whose items are the mixed prefixes."""
        return self._oracle

    @property
    def statistic_size(self) -> int:
        return self.groups * self._cells

    @property
    def takes_strings(self) -> bool:
        """Whether ``privatize`` reads words (a protocol with an ``alphabet``): ``tags.words``."""
        return self.tags.words

    # ------------------------------------------------------------------ client
    def _check_values(self, values):
        array = np.asarray(values)
        if array.ndim == 0:
            array = array.reshape(1)
        if array.dtype.kind in "USO" and array.size:
            if self._codec is None:
                raise InvalidValueTypeError(
                    f"The 'values' argument of PEM must hold integers in [0, 2**{self._bits}); words need a PEM "
                    f"made with an 'alphabet'. Got dtype {array.dtype}."
                )
            if array.dtype.kind == "O" and not all(isinstance(word, str) for word in array.ravel().tolist()):
                raise InvalidValueTypeError("The 'values' argument of PEM must hold words (str) or integer items.")
            if array.ndim != 1:
                raise InvalidValueTypeError(f"The 'values' argument of PEM must be 1-D. Got shape {array.shape}.")
            return self._codec.encode(array, owner="PEM")
        try:
            return check_integer_values(array, self.domain_size, owner="PEM")
        except OutOfDomainError:
            bad = (array < 0) | (array >= self.domain_size)
            raise refused_values(OutOfDomainError, f"The 'values' argument of PEM must hold integers in [0, 2**{self._bits})",
                                 int(np.count_nonzero(bad)), "outside it", int(np.flatnonzero(bad)[0])) from None

    def _prefixes(self, values, groups):
        return values >> (self._bits - self._lengths[groups])

    def _privatize(self, values, rng):
        groups = rng.integers(0, self.groups, size=values.size, dtype=np.int64)
        reports = self._oracle._privatize(mix_prefixes(self._prefixes(values, groups)), rng)
        return np.column_stack([groups, reports]).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        oracle = self._oracle
        return {"g": oracle.hash_range, "keep": oracle._keep, "lengths": self.prefix_lengths, "hashCount": oracle.hash_count,
                "bits": self.bits}

    def report_hashes(self, reports: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`FLH.report_hashes <dpdist.local.frequency.flh.FLH.report_hashes>`: the hash value of each item's
        prefix at each report's group, under the report's function, and the reported value."""
        reports, _ = self.report_format.read(reports)
        reports = reports.astype(np.int64)
        items = self._check_values(items)
        groups = np.broadcast_to(reports[:, :1], (len(reports), items.size))
        prefixes = mix_prefixes(self._prefixes(items[None, :], groups))
        oracle = self._oracle
        seeds = oracle._seeds[reports[:, 1]][:, None]
        return _hashing.hash_items(seeds, prefixes, oracle._prime, oracle.hash_range), reports[:, 2]

    def _report_format(self):
        oracle = self._oracle
        return IntegerRowReports(
            [Column("group", self.groups), Column("function", oracle.hash_count, label="function index"), Column("value", oracle.hash_range)]
        )

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        reports = reports.astype(np.int64)
        return reports[:, 0] * self._cells + reports[:, 1] * self._oracle.hash_range + reports[:, 2]

    def _accumulate(self, reports):
        return np.bincount(self.report_index(reports), minlength=self.statistic_size).astype(np.int64, copy=False)

    def _simulate(self, values, rng):
        """Exact: users of an item split over the groups by a multinomial; each group's table by FLH's sampler."""
        items, counts = np.unique(values, return_counts=True)
        per_group = rng.multinomial(counts, np.full(self.groups, 1.0 / self.groups)).reshape(items.size, self.groups)
        oracle, tables = self._oracle, []
        for group, length in enumerate(self._lengths):
            prefixes, owner = np.unique(items >> (self._bits - length), return_inverse=True)
            members = np.bincount(owner.ravel(), weights=per_group[:, group], minlength=prefixes.size).astype(np.int64)
            kept = rng.binomial(members, oracle._keep)
            held = kept > 0
            mixed = mix_prefixes(prefixes[held])
            tables.append(oracle.sample_table(mixed, kept[held], int(members.sum() - kept.sum()), rng))
        return np.concatenate(tables)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """:math:`\\frac1G \\times` FLH's channel of each group's mixed prefix; column ``i S g + j g + y``."""
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        oracle = self._oracle  # every group's block is FLH's law over its (items, S) hash values, divided by G
        hashed = np.stack([oracle._hashed(mix_prefixes(items >> (self._bits - length))) for length in self._lengths], 1)
        return oracle._grr_law(hashed, oracle.hash_count, self.groups).reshape(items.size, self.statistic_size)

    # ------------------------------------------------------------------ estimate
    def _estimate(self, aggregator, *, k=None, threshold=None, level=0.95):
        """Run the rounds (module docstring) on the groups' tables; the last round's frequencies and their SEs.

        ``k`` (default the protocol's) survivors per round; ``threshold`` keeps
        only the found items whose estimated frequency is at least that; the
        standard errors are FLH's (pure-oracle variance at the estimate, the
        family's bias left out) and ``level`` sets the intervals of
        ``details["low"]`` / ``details["high"]``.
        """
        k = self._params["k"] if k is None else k
        oracle = self._oracle
        p_star, q_star = oracle.support_probabilities()
        tables = np.asarray(aggregator.statistic).reshape(self.groups, self._cells)
        first = int(self._lengths[0])
        candidates = np.arange(1 << first, dtype=np.int64)
        rounds, previous, users = [], first, 0
        frequencies = np.zeros(0)  # (set by the first group: there is at least one)
        for group, length in enumerate(self._lengths.tolist()):
            if group > 0:
                extra = length - previous
                candidates = (candidates[:, None] << extra | np.arange(1 << extra)[None, :]).ravel()
            if self._codec is not None:
                candidates = candidates[self._codec.valid_prefixes(candidates, length)]
            users = int(tables[group].sum())
            support = oracle.support_counts_in_table(tables[group], mix_prefixes(candidates))
            estimate = (support / max(users, 1) - q_star) / (p_star - q_star)
            order = np.argsort(-estimate, kind="stable")[:k]
            rounds.append({"prefix_bits": length, "users": users, "candidates": int(candidates.size)})
            candidates, frequencies, previous = candidates[order], estimate[order], length
        share = np.clip(frequencies, 0.0, 1.0)
        variance = (share * p_star * (1 - p_star) + (1 - share) * q_star * (1 - q_star)) / (
            max(users, 1) * (p_star - q_star) ** 2
        )
        standard_error = np.sqrt(variance)
        if threshold is not None:
            keep = frequencies >= threshold
            candidates, frequencies, standard_error = candidates[keep], frequencies[keep], standard_error[keep]
        z = NormalDist().inv_cdf(0.5 + level / 2)
        return HeavyHitters(
            items=candidates,
            frequencies=frequencies,
            n=int(aggregator.n),
            epsilon=self.epsilon,
            labels=self._codec.decode(candidates) if self._codec is not None else None,
            guarantee=self.guarantee,
            standard_error=standard_error,
            details={
                "rounds": rounds,
                "bits": self._bits,
                "step": self._step,
                "k": k,
                "threshold": threshold,
                "oracle": "flh",
                "hash_count": oracle.hash_count,
                "level": level,
                "low": frequencies - z * standard_error,
                "high": frequencies + z * standard_error,
            },
        )
