r"""Range queries over numerical attributes with PriPL-Trees and data-aware 2-D grids (multi-phase).

Wang, Ye, Hu, Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
Differential Privacy", PVLDB 17(11), 2024 (full version arXiv:2407.13532; authors' code
github.com/LeixiaWang/PriPLT).

Unlike ``hdg`` (one report per user against a fixed grid), PriPL-Tree is *adaptive*: what later users
are asked depends on what earlier users reported.  The users are split at random, independently of
their records, into disjoint groups; every user reports once, at the full :math:`\varepsilon`, through an
existing dpdist protocol, so the whole collection is :math:`\varepsilon`-LDP per user (parallel
composition over disjoint groups, sec. 3.6.1; :attr:`PriPLTrees.guarantee`).  With :math:`m` attributes
(sec. 4.1; :math:`m = 1` gives every user to the tree, sec. 3):

* **Round 0** (phase 1 of each tree, sec. 3.3): of the :math:`N/(2m)` users of attribute :math:`A_i`, a
  share :math:`\alpha` (default 0.2) report their value through ``sw`` (square wave) on ``resolution``
  bins; its EM and EMS histograms are fitted by a continuous PL function (Algorithm 1,
  :mod:`._pl_fit`).
* **Round 1** (phase 2, sec. 3.4): the fit's segments become the leaves of a tree whose nodes are
  reduced by the expected query error (Algorithm 2, eqs. 7-8); the attribute's other users are
  allocated along the root-to-leaf paths and fall into *bands*, each reporting which interval of its
  own partition holds the value through a frequency oracle (``oue`` as in the paper, or ``"auto"``:
  ``grr`` for fewer than :math:`3e^\varepsilon + 2` intervals); phase 3 refines the tree without users
  (sec. 3.5, eqs. 9-10, Algorithm 4; :mod:`._pripl_tree`).
* **Round 2** (sec. 4.2, :math:`m \ge 2`): each pair's grid is partitioned from the two trees
  (Algorithm 3, :mod:`._adaptive_grid`) and the pair's :math:`N/(2\binom{m}{2})` users report their
  cell through the same kind of oracle.  The grids and trees are then made consistent (sec. 4.3) and
  each pair's response matrix fitted (step 4).

:meth:`PriPLTrees.protocols` gives each round's groups (their protocols and the public cuts a device maps
its value with) from the earlier rounds' aggregates; :meth:`PriPLTrees.estimate` releases a
:class:`~dpdist.estimates.RangeEstimate`; :meth:`PriPLTrees.run` / :func:`pripl_ranges` simulate
all rounds on a table of records.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._guarantee import PrivacyGuarantee
from ..._missing import missing_policy, records_missing, with_policy_note
from ..._rng import check_rng
from ..._types import Seed
from ..._validation import EPSILON, Admits, Boolean, Integer, Interval, Items, Options, check_param, clip_real_values
from ...errors import ClippedValuesWarning, InvalidParameterError, SmallSampleWarning
from ...estimates import RangeEstimate
from .._aggregator import Aggregator
from .._protocol import LocalProtocol, make
from ._adaptive_grid import adaptive_partition, fit_grid_to_leaves, response_matrix, update_leaves
from ._pl_fit import PLFit, fit_piecewise_linear
from ._pripl_tree import RefinedTree, TreeShape, build_tree, clip_slopes, leaf_density, norm_sub, refine_tree
from ._records import record_columns
from ._schema import Attribute, Attributes
from ._values import check_column

__all__ = ["PriPLTrees", "PhaseGroup", "pripl_ranges"]

_OWNER = "local.multi.pripl"


def _not_groups(groups: Mapping) -> str | None:
    """Why ``groups`` is not a round's aggregates (None: every value is an Aggregator)."""
    kinds = sorted({type(value).__name__ for value in groups.values() if not isinstance(value, Aggregator)})
    return f"values of type {kinds}" if kinds else None


#: The aggregates of the earlier rounds: one dict per round, group name -> Aggregator.
_HISTORY = Items(Admits(Mapping, _not_groups, "a dict of group name -> Aggregator"),
                 "a list, one dict per earlier round mapping its group names to their aggregators")


@dataclass(frozen=True)
class PhaseGroup:
    """One group of users of one round: its ``protocol`` and how a value becomes its input.

    ``attributes`` are the schema indices the group reports on; ``cuts`` (``None`` for the ``sw`` group)
    the inner edges, in bins of ``resolution``, of each attribute's intervals: a record reports item
    ``searchsorted(cuts[0], bin_0, "right")`` (1-D) or ``that * (len(cuts[1]) + 1) + searchsorted(cuts[1], bin_1,
    "right")`` (2-D).  ``users`` is the group's size for ``n`` users in all.
    """

    name: str
    protocol: LocalProtocol
    attributes: tuple[int, ...]
    cuts: tuple[np.ndarray, ...] | None
    users: int

    def inputs(self, columns: Sequence[np.ndarray], bounds: Sequence[tuple[float, float]], resolution: int) -> np.ndarray:
        """The protocol's inputs for records whose attribute columns (in the attributes' units) are ``columns``."""
        if self.cuts is None:
            return np.asarray(columns[self.attributes[0]], dtype=np.float64)
        item = np.zeros(len(columns[0]), dtype=np.int64)
        for attribute, cuts in zip(self.attributes, self.cuts):
            lo, hi = bounds[attribute]
            unit = np.clip((np.asarray(columns[attribute], dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)
            bins = np.minimum((unit * resolution).astype(np.int64), resolution - 1)
            item = item * (cuts.size + 1) + np.searchsorted(cuts, bins, side="right")
        return item


@dataclass(frozen=True)
class _Tree:
    fit: PLFit
    shape: TreeShape
    refined: RefinedTree | None


class PriPLTrees:
    r"""The public plan of a PriPL-Tree collection over numerical attributes (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Every user's budget (one report, at ``epsilon``).
    attributes : list of dict
        One or more numerical attributes (``{"name": ..., "bounds": [lo, hi]}``).
    resolution : int
        :math:`d`, equal bins per attribute (default 256, the paper's multi-dimensional setting).
    alpha : float
        :math:`\alpha`, the share of a tree's users in phase 1 (default 0.2, sec. 5.1).
    eta : float
        :math:`\eta` of :math:`Err_G` (default 0.04, sec. 4.2).
    max_segments : int
        :math:`K_{max}` (default 32, sec. 3.3.2).
    granularity : int
        :math:`\phi`, candidate breakpoints per search level (default 128; the authors' code uses 128).
    oracle : {"oue", "auto"}
        The frequency oracle of the tree bands and grids: ``"oue"`` (the paper's) or ``"auto"`` (``grr``
        below :math:`3e^\varepsilon + 2` items).
    """

    def __init__(self, *, epsilon: float, attributes: Sequence[Mapping[str, Any]], resolution: int = 256,
                 alpha: float = 0.2, eta: float = 0.04, max_segments: int = 32, granularity: int = 128,
                 oracle: str = "oue"):
        self.epsilon = float(check_param(_OWNER, "epsilon", epsilon, EPSILON))
        entries = check_param(_OWNER, "attributes", attributes, Attributes(kind="numerical", bare=True))
        self.attributes = tuple(Attribute.from_dict(entry) for entry in entries)
        self.resolution = int(check_param(_OWNER, "resolution", resolution, Integer(low=8, high=1024)))
        self.alpha = float(check_param(_OWNER, "alpha", alpha, Interval(0.0, 1.0, closed="neither")))
        self.eta = float(check_param(_OWNER, "eta", eta, Interval(0.0, math.inf, closed="neither")))
        self.max_segments = int(check_param(_OWNER, "max_segments", max_segments, Integer(low=2, high=256)))
        self.granularity = int(check_param(_OWNER, "granularity", granularity, Integer(low=2, high=4096)))
        self.oracle = check_param(_OWNER, "oracle", oracle, Options(("oue", "auto")))
        self.pairs = list(itertools.combinations(range(len(self.attributes)), 2))

    # ------------------------------------------------------------------ public facts
    @property
    def rounds(self) -> int:
        """2 for one attribute (phases 1 and 2 of the tree), 3 with the pairs' grids."""
        return 3 if self.pairs else 2

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """epsilon-LDP per user: one report through one group's protocol at epsilon, the groups disjoint."""
        return self._sw(0).guarantee

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "attributes": [a.to_dict() for a in self.attributes],
                "resolution": self.resolution, "alpha": self.alpha, "eta": self.eta,
                "max_segments": self.max_segments, "granularity": self.granularity, "oracle": self.oracle}

    def split(self, n: int) -> dict[str, int]:
        """Users of each attribute's tree (``"tree:<name>"``), its phase 1 (``"sw:<name>"``) and each pair's grid
        (``"grid:<a>,<b>"``) for ``n`` users in all: half to the trees and half to the grids (sec. 4.1)."""
        n = int(check_param(_OWNER, "n", n, Integer(low=10 * len(self.attributes) + 10 * len(self.pairs))))
        m = len(self.attributes)
        per_tree = n // m if not self.pairs else n // (2 * m)
        out: dict[str, int] = {}
        for attribute in self.attributes:
            out[f"tree:{attribute.name}"] = per_tree
            out[f"sw:{attribute.name}"] = max(int(self.alpha * per_tree), 1)
        rest = n - m * per_tree
        for k, (a, b) in enumerate(self.pairs):
            share = rest // len(self.pairs) + (rest % len(self.pairs) if k == len(self.pairs) - 1 else 0)
            out[f"grid:{self.attributes[a].name},{self.attributes[b].name}"] = share
        return out

    # ------------------------------------------------------------------ rounds
    def _sw(self, index: int) -> LocalProtocol:
        lo, hi = self.attributes[index].interval
        return make("sw", epsilon=self.epsilon, bounds=(lo, hi), bins=self.resolution)

    def _oracle(self, items: int) -> LocalProtocol:
        name = self.oracle
        if name == "auto":
            name = "grr" if items < 3.0 * math.exp(self.epsilon) + 2.0 else "oue"
        return make(name, epsilon=self.epsilon, domain_size=items)

    def _node_threshold(self, n: int) -> float:
        """The standard deviation of a node's OUE frequency from all of a tree's phase-2 users (Algorithm 1, line 12)."""
        e = math.exp(self.epsilon)
        sizes = self.split(n)
        users = sizes[f"tree:{self.attributes[0].name}"] - sizes[f"sw:{self.attributes[0].name}"]
        return math.sqrt(4 * e / (max(users, 1) * (e - 1) ** 2))

    def protocols(self, round_index: int, history: Sequence[Mapping[str, Aggregator]], n: int) -> list[PhaseGroup]:
        """The groups of round ``round_index`` (0-based) for ``n`` users in all, from the earlier rounds' aggregates
        (``history[r]`` maps round ``r``'s group names to their aggregators)."""
        index = check_param(_OWNER, "round_index", round_index, Integer(low=0, high=self.rounds - 1))
        history = self._check_history(history)
        if len(history) != index:
            raise InvalidParameterError(f"{_OWNER}: round {index} needs the aggregates of the {index} round(s) before "
                                        f"it. Got {len(history)}.")
        sizes = self.split(n)
        if index == 0:
            return [PhaseGroup(f"sw:{a.name}", self._sw(i), (i,), None, sizes[f"sw:{a.name}"])
                    for i, a in enumerate(self.attributes)]
        trees = self._trees(history, n)
        if index == 1:
            groups = []
            for i, (attribute, tree) in enumerate(zip(self.attributes, trees)):
                users = sizes[f"tree:{attribute.name}"] - sizes[f"sw:{attribute.name}"]
                counts = np.diff(np.floor(tree.shape.bands * users + 1e-9).astype(np.int64))
                for band, count in enumerate(counts):
                    if count <= 0:
                        continue
                    cuts = tree.shape.band_cuts(band)
                    groups.append(PhaseGroup(f"tree:{attribute.name}:{band}", self._oracle(cuts.size + 1), (i,),
                                             (cuts,), int(count)))
            return groups
        groups = []
        for a, b in self.pairs:
            cells = self._grid_cells(trees, a, b, n)
            name = f"grid:{self.attributes[a].name},{self.attributes[b].name}"
            groups.append(PhaseGroup(name, self._oracle(cells[0].size * cells[1].size), (a, b),
                                     (cells[0][1:], cells[1][1:]), sizes[name]))
        return groups

    def _check_history(self, history: Any) -> list[Mapping[str, Aggregator]]:
        return list(check_param(_OWNER, "history", history, _HISTORY))

    def _trees(self, history: Sequence[Mapping[str, Aggregator]], n: int) -> list[_Tree]:
        threshold = self._node_threshold(n)
        trees = []
        for i, attribute in enumerate(self.attributes):
            aggregator = history[0].get(f"sw:{attribute.name}")
            if aggregator is None or aggregator.n == 0:
                raise InvalidParameterError(f"{_OWNER}: round 0 has no reports of group 'sw:{attribute.name}'.")
            protocol = self._sw(i)
            em = protocol.estimate(aggregator, method="em").probabilities
            ems = protocol.estimate(aggregator, method="ems").probabilities
            fit = fit_piecewise_linear(em, ems, threshold, max_segments=self.max_segments, granularity=self.granularity)
            shape = build_tree(fit, self.resolution)
            refined = None
            if len(history) > 1:
                refined = self._refine(attribute, fit, shape, history[1], ems)
            trees.append(_Tree(fit, shape, refined))
        return trees

    def _refine(self, attribute: Attribute, fit: PLFit, shape: TreeShape, round_one: Mapping[str, Aggregator],
                histogram: np.ndarray) -> RefinedTree:
        count = shape.lefts.size
        weight_sum, weighted = np.zeros(count), np.zeros(count)
        for band, nodes in enumerate(shape.band_nodes):
            aggregator = round_one.get(f"tree:{attribute.name}:{band}")
            if aggregator is None or aggregator.n == 0:
                continue
            protocol = self._oracle(nodes.size)
            estimate = protocol.estimate(aggregator)
            variance = float(np.mean(protocol.variance(aggregator.n)))
            weight_sum[nodes] += 1.0 / variance
            weighted[nodes] += np.asarray(estimate.frequencies) / variance
        if np.any(weight_sum == 0):
            raise InvalidParameterError(f"{_OWNER}: round 1 has no reports on some node of the tree of "
                                        f"{attribute.name!r}; every band needs users.")
        return refine_tree(shape, weighted / weight_sum, 1.0 / weight_sum, histogram, fit)

    def _grid_cells(self, trees: list[_Tree], a: int, b: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        e = math.exp(self.epsilon)
        sigma2 = 4 * e / (n * (e - 1) ** 2)
        first, second = trees[a], trees[b]
        assert first.refined is not None and second.refined is not None  # round 1 is in the history
        densities = (first.refined.density(), second.refined.density())
        leaves = (first.shape.lefts[first.shape.leaves], second.shape.lefts[second.shape.leaves])
        return adaptive_partition(densities, leaves, 2 * sigma2 * len(self.pairs), self.eta)

    # ------------------------------------------------------------------ release
    def estimate(self, history: Sequence[Mapping[str, Aggregator]], n: int | None = None) -> RangeEstimate:
        """The release from every round's aggregates (``n``: the users the plan split; default all reports)."""
        history = self._check_history(history)
        if len(history) != self.rounds:
            raise InvalidParameterError(f"{_OWNER}: the release needs the aggregates of all {self.rounds} rounds. "
                                        f"Got {len(history)}.")
        reports = sum(int(agg.n) for groups in history for agg in groups.values())
        n = reports if n is None else n
        trees = self._trees(history, n)
        leaves = [t.refined.leaf_frequencies.copy() for t in trees]  # type: ignore[union-attr]
        leaf_var = [t.refined.leaf_variances.copy() for t in trees]  # type: ignore[union-attr]
        leaf_lefts = [t.shape.lefts[t.shape.leaves] for t in trees]
        grids = {}
        for a, b in self.pairs:
            cells = self._grid_cells(trees, a, b, n)
            name = f"grid:{self.attributes[a].name},{self.attributes[b].name}"
            aggregator = history[2].get(name)
            if aggregator is None or aggregator.n == 0:
                raise InvalidParameterError(f"{_OWNER}: round 2 has no reports of group {name!r}.")
            protocol = self._oracle(cells[0].size * cells[1].size)
            table = np.asarray(protocol.estimate(aggregator).frequencies).reshape(cells[0].size, cells[1].size)
            grids[(a, b)] = (cells, table, float(np.mean(protocol.variance(aggregator.n))))
        # sec. 4.3: the leaves of each tree from all its grids, then non-negative with total one
        for i in range(len(self.attributes)):
            for (a, b), (cells, table, cell_var) in grids.items():
                if i not in (a, b):
                    continue
                axis = 0 if i == a else 1
                marginal = table.sum(axis=1 - axis)
                variance = np.full(marginal.size, cell_var * table.shape[1 - axis])
                leaves[i], leaf_var[i] = update_leaves(leaves[i], leaf_var[i], leaf_lefts[i], marginal, variance,
                                                       cells[axis])
        noise = self._range_noise(leaf_var)  # before Norm-Sub: the oracles' noise the release is made of
        for i in range(len(self.attributes)):
            leaves[i] = norm_sub(leaves[i], 1.0)
        histograms = []
        for i, tree in enumerate(trees):
            shape = tree.shape
            lefts, rights = shape.lefts[shape.leaves], shape.rights[shape.leaves]
            slopes = clip_slopes(tree.fit.slopes, leaves[i], rights - lefts + 1)
            histograms.append(leaf_density(lefts, rights, leaves[i], slopes, self.resolution))
        matrices = {}
        for (a, b), (cells, table, _) in grids.items():
            fitted = fit_grid_to_leaves(table, (leaves[a], leaves[b]), (leaf_lefts[a], leaf_lefts[b]), cells)
            matrices[(a, b)] = response_matrix(histograms[a], histograms[b], fitted, cells)
        details = {
            "leaves": {a.name: leaf_lefts[i].tolist() for i, a in enumerate(self.attributes)},
            "grids": {f"{self.attributes[a].name},{self.attributes[b].name}": [c.tolist() for c in cells]
                      for (a, b), (cells, _, _) in grids.items()},
            "reports": {name: int(agg.n) for groups in history for name, agg in groups.items()},
            "oracle": self.oracle, "alpha": self.alpha, "eta": self.eta, "resolution": self.resolution,
            "range_noise_sd": noise, **_thin_data(noise, reports),
        }
        return RangeEstimate(tuple(a.name for a in self.attributes), tuple(a.interval for a in self.attributes),
                             tuple(histograms), matrices, self.epsilon, int(reports), self.guarantee, details=details)

    @staticmethod
    def _range_noise(leaf_variances: Sequence[np.ndarray]) -> float:
        """The standard deviation of the oracles' noise in the answer to a range over half of an attribute's bounds
        (its leaves' variances, each leaf estimated on its own, half of them summed), the largest over the
        attributes.  Measured against the answers' spread at epsilon 1 (2 attributes, 8 runs each): 0.43 vs 0.22 at
        n = 50, 0.17 vs 0.09 at n = 5,000, 0.04 vs 0.03 at n = 100,000 (Norm-Sub and the slope clipping narrow the
        answers below it, and the PL fit's own error is not in it)."""
        return float(max(math.sqrt(float(np.sum(variance)) / 2.0) for variance in leaf_variances))

    # ------------------------------------------------------------------ simulation
    def run(self, records: Any, rng: Seed = None, *, clip: bool = True, missing: str = "refuse") -> RangeEstimate:
        """Simulate every round on ``records`` (one user each, a dict of columns, a 2-D array in the schema's order,
        a structured array or a DataFrame), the users split at random into the groups; the release.

        ``clip=True`` (default): values outside an attribute's bounds (``±inf`` included) become the nearer bound,
        with one :class:`~dpdist.errors.ClippedValuesWarning` counting them, as HDG's and the one-round protocols'
        ``clip=True`` (``dpdist._validation.clip_real_values``); ``clip=False`` refuses them
        (:class:`~dpdist.errors.OutOfDomainError`).  ``missing``: a record with a missing value (NaN, None) is
        refused with the count (the default) or left out, its user sending no report (``"drop"``; the release's
        notes say so; :mod:`dpdist._missing`)."""
        generator = check_rng(rng, owner=_OWNER)
        clip = check_param(_OWNER, "clip", clip, Boolean())
        policy = missing_policy(_OWNER, missing, records=True)
        names = [a.name for a in self.attributes]
        columns = records_missing(record_columns(records, names, _OWNER), policy, _OWNER,
                                  f"The 'records' argument of {_OWNER}")
        checked = []
        moved = 0
        for attribute, column in zip(self.attributes, columns):
            column = np.asarray(column)
            if clip and column.dtype.kind in "fiu":
                column, count = clip_real_values(column, attribute.interval, owner=_OWNER, name=attribute.name)
                moved += count
            lo, hi = attribute.interval
            checked.append(lo + check_column(attribute, column, _OWNER) * (hi - lo))
        if moved:
            warnings.warn(
                f"PriPLTrees.run: {moved} numerical value(s) outside their attribute's bounds were clipped to "
                "them before randomization (clip=True; the count is not sent). Pass clip=False to refuse them instead.",
                ClippedValuesWarning,
                stacklevel=2,
            )
        n = checked[0].size
        sizes = self.split(n)
        order = generator.permutation(n)
        # contiguous blocks of the permutation: each tree (its phase-1 users first), then each pair's grid
        starts, position = {}, 0
        for attribute in self.attributes:
            starts[attribute.name] = position
            position += sizes[f"tree:{attribute.name}"]
        for a, b in self.pairs:
            name = f"grid:{self.attributes[a].name},{self.attributes[b].name}"
            starts[name] = position
            position += sizes[name]
        bounds = [a.interval for a in self.attributes]
        history: list[dict[str, Aggregator]] = []
        taken: dict[str, int] = {}
        for round_index in range(self.rounds):
            aggregates = {}
            for group in self.protocols(round_index, history, n):
                key = group.name if group.name.startswith("grid:") else self.attributes[group.attributes[0]].name
                first = starts[key] + taken.get(key, 0)
                taken[key] = taken.get(key, 0) + group.users
                users = order[first: first + group.users]
                inputs = group.inputs([c[users] for c in checked], bounds, self.resolution)
                aggregates[group.name] = group.protocol.simulate(inputs, rng=generator)
            history.append(aggregates)
        return with_policy_note(self.estimate(history, n), policy, "local")


def pripl_ranges(records: Any, *, epsilon: float, attributes: Sequence[Mapping[str, Any]], rng: Seed = None,
                 clip: bool = True, missing: str = "refuse", **options: Any) -> RangeEstimate:
    """Simulate a PriPL-Tree collection on ``records`` end to end (:class:`PriPLTrees`; ``options`` are its other
    parameters) and release the histograms and response matrices (:class:`~dpdist.estimates.RangeEstimate`)."""
    return PriPLTrees(epsilon=epsilon, attributes=attributes, **options).run(records, rng, clip=clip, missing=missing)


#: The noise standard deviation of a half-range answer (:meth:`PriPLTrees._range_noise`) above which a release says its
#: reports are too few: 95% of such answers may be 0.2 away from the share they estimate, or more
THIN_DATA_NOISE = 0.1


def _thin_data(noise: float, reports: int) -> dict[str, Any]:
    """``{"notes": [...]}`` and a :class:`~dpdist.errors.SmallSampleWarning` when ``noise`` is above
    :data:`THIN_DATA_NOISE` (the release's own error, not the data's: public), else ``{}``."""
    if noise <= THIN_DATA_NOISE:
        return {}
    note = (f"too few reports for these answers: at n = {reports:,} the oracles' noise alone has a standard deviation "
            f"of about {noise:.2g} in the share of records inside half of an attribute's bounds (above "
            f"{THIN_DATA_NOISE:g}: a range's answer may be off by twice that or more; more users, a larger epsilon or "
            "fewer attributes narrow it)")
    warnings.warn(SmallSampleWarning(f"{_OWNER}: {note}."), stacklevel=3)
    return {"notes": [note]}
