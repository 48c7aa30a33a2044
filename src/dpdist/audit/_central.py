r"""Audits on neighbouring datasets: a central release, and a local mechanism applied to a whole column.

The certificate is the local audit's (:mod:`dpdist.audit._black_box`): output events chosen on earlier releases,
certified on fresh ones with Clopper-Pearson bounds, every bound at once at confidence :math:`1 - \alpha`; the
"inputs" are now datasets, and only neighbouring ones are compared (:mod:`dpdist.audit._neighbours`), so the
bound is on the epsilon of the promise :math:`\Pr[M(D) \in E] \le e^\varepsilon \Pr[M(D') \in E] + \delta` for
neighbours :math:`D, D'` (the event-based bound of Jagielski, Ullman & Oprea 2020 and of DP-Auditorium's
testers, Kong et al. 2024, with exact binomial bounds and the multiple comparisons paid for).

**Whole columns.**  A local randomizer is :math:`\varepsilon`-LDP when each record's output depends on that
record alone; a *mechanism applied to a column* may take its domain, clipping bounds, hash seed or scale from
the column, and then one record's value changes every record's output (trasgoDP's k-ary randomized response
draws its categories from ``np.unique`` of the column: a value nobody else has appears in the outputs only when
its holder is there).  :func:`audit_column` audits such a mechanism on neighbouring columns that differ in one
record, inside backgrounds chosen adversarially, with the whole output column as the output: a mechanism that
is :math:`\varepsilon`-LDP per record is :math:`\varepsilon`-DP on the column under replace-one neighbours, so
the claim is the same number.

References
----------
M. Jagielski, J. Ullman, A. Oprea (2020). Auditing Differentially Private Machine Learning: How Private is
Private SGD? NeurIPS 2020.

W. Kong, A. Medina, M. Ribero, U. Syed (2024). DP-Auditorium: a Large Scale Library for Auditing Differential
Privacy. IEEE S&P 2024.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .._rng import check_rng
from .._types import Seed
from .._validation import CallableRule, Either, validate_params
from ..errors import InvalidParameterError
from ._given import _positional_arguments
from ._neighbours import Neighbouring, NeighbouringPair, adversarial
from ._randomizer import Randomizer
from ._result import AuditResult
from ._run import assemble, certify, check_settings

__all__ = ["audit_central", "audit_column"]

#: without neighbouring datasets given, the auditor chooses them from the domain
_NEEDS_DOMAIN = Either("domain", "neighbours", why="the auditor chooses neighbouring datasets from d items or bounds "
                       "(low, high)", counterexample={"epsilon": 1.0})


@validate_params({"release": CallableRule("a callable release(dataset, rng) (or release(dataset))")},
                 owner="dpdist.audit.central", relations=(_NEEDS_DOMAIN,))
def audit_central(
    release: Callable[..., Any],
    epsilon: float,
    neighbours: Neighbouring | list | None = None,
    *,
    domain: Any = None,
    size: int = 16,
    relation: str = "add-remove",
    delta: float = 0.0,
    features: Callable[[Any], Any] | None = None,
    name: str | None = None,
    batched: bool = False,
    alpha: float = 1e-3,
    samples: int = 10_000,
    pilot: int | None = None,
    sequential: bool = True,
    keep: int = 4,
    bins: int = 16,
    max_cells: int = 4096,
    float_bits: bool = True,
    rng: Seed = None,
) -> AuditResult:
    r"""Certify a lower bound on a central release's epsilon on neighbouring datasets.

    Parameters
    ----------
    release : callable
        ``release(dataset, rng) -> output`` (or ``release(dataset)``, its own randomness): one release of one
        dataset; the output is numbers (a count, quantiles, a histogram) or anything ``features`` turns into them.
    epsilon : float
        The epsilon it claims (with ``delta``).
    neighbours : Neighbouring or list of (dataset, neighbour) pairs, optional
        The datasets to compare (:func:`dpdist.audit.add_remove`, :func:`dpdist.audit.replace_one`, or pairs of
        your own, e.g. with one person's records removed: their relation is then "the pairs given").  Default:
        :func:`dpdist.audit.adversarial` of ``domain``, ``size`` and ``relation``.
    domain : int or (low, high), optional
        For the default neighbours: ``d`` items or real bounds.
    size : int
        For the default neighbours: records per dataset.
    relation : str
        For the default neighbours: ``"add-remove"`` (default) or ``"replace-one"``.
    delta : float
        The delta of an (epsilon, delta) claim, subtracted from each certified lower bound.
    features : callable, optional
        ``features(output) -> numbers``, a fixed function of one release (a post-processing: bounds stay valid).
    name : str, optional
        Shown in the report.
    batched : bool
        ``release`` takes many datasets at once, one per row of a 2-D float array (shorter ones padded with NaN at
        the end: drop them), and returns one output row per dataset: one call per batch instead of one per release
        (a mechanism in another process).
    alpha, samples, pilot, sequential, keep, bins, max_cells, float_bits, rng
        As :func:`dpdist.audit.audit`; ``samples`` is releases per dataset (default 10,000: a release is one call).

    Returns
    -------
    AuditResult
        Its ``neighbouring`` states the relation and its witness the two datasets.
    """
    owner = "dpdist.audit.central"
    settings = check_settings(owner, epsilon, delta=delta, alpha=alpha, samples=samples, pilot=pilot,
                              sequential=sequential, keep=keep, bins=bins, max_cells=max_cells, float_bits=float_bits)
    relation_given = _neighbouring(neighbours, domain, size, relation, owner)
    randomizer = _releases(release, relation_given, features, name or _name_of(release), settings.claim, batched)
    return _run_on_datasets(randomizer, relation_given, settings, rng, owner)


@validate_params({"mechanism": CallableRule("a callable mechanism(column, rng) (or mechanism(column))")},
                 owner="dpdist.audit.column", relations=(_NEEDS_DOMAIN,))
def audit_column(
    mechanism: Callable[..., Any],
    epsilon: float,
    domain: Any = None,
    *,
    neighbours: Neighbouring | list | None = None,
    size: int = 16,
    name: str | None = None,
    batched: bool = False,
    alpha: float = 1e-3,
    samples: int = 10_000,
    pilot: int | None = None,
    sequential: bool = True,
    keep: int = 4,
    bins: int = 16,
    max_cells: int = 4096,
    float_bits: bool = True,
    rng: Seed = None,
) -> AuditResult:
    r"""Audit a local mechanism applied to a whole column, per record, on neighbouring columns.

    ``mechanism(column, rng) -> outputs`` (or ``mechanism(column)``) randomizes every record of a column and
    may take anything from the column (its categories, bounds, scale, a hash seed); its claim is the epsilon
    it promises each record.  The audit compares columns that differ in one record (replace-one: the column's
    length is public), inside backgrounds :func:`dpdist.audit.adversarial` chooses from ``domain`` (a value
    nobody else has, an extreme value, a constant column) or the ``neighbours`` given, and certifies on the whole
    output column.  Other arguments as :func:`audit_central`.
    """
    owner = "dpdist.audit.column"
    settings = check_settings(owner, epsilon, alpha=alpha, samples=samples, pilot=pilot, sequential=sequential,
                              keep=keep, bins=bins, max_cells=max_cells, float_bits=float_bits)
    relation_given = _neighbouring(neighbours, domain, size, "replace-one", owner)
    randomizer = _releases(mechanism, relation_given, None, name or _name_of(mechanism), settings.claim, batched)
    return _run_on_datasets(randomizer, relation_given, settings, rng, owner,
                            note="whole-column mode: the output is every record's output; the claim is per record "
                                 "(epsilon-LDP per record is epsilon-DP on the column under replace-one)")


def _run_on_datasets(randomizer: Randomizer, relation: Neighbouring, settings, rng: Seed, owner: str,
                     note: str = "") -> AuditResult:
    """The audit's steps on the datasets of ``relation`` (inputs are their indices, pairs the neighbours)."""
    generator = check_rng(rng, owner=owner)
    count = 2 * len(relation.pairs)
    inputs = np.arange(count)
    pairs = inputs.reshape(-1, 2)
    found = certify(randomizer, inputs, pairs, settings, generator)
    if found.witness:
        found.witness["datasets"] = relation.pairs[int(found.witness["input"]) // 2].differs
    text = f"{len(relation.pairs)} pair(s) of neighbouring datasets: " + "; ".join(p.differs for p in relation.pairs)
    return assemble(randomizer, settings, found, None, text, count, rng, neighbouring=relation.relation,
                    notes=(note,) if note else ())


def _neighbouring(neighbours: Any, domain: Any, size: int, relation: str, owner: str) -> Neighbouring:
    if isinstance(neighbours, Neighbouring):
        return neighbours
    if neighbours is None:  # then a domain: the callers' tables (_NEEDS_DOMAIN)
        return adversarial(domain, size, relation)
    try:
        pairs = tuple(NeighbouringPair(first, second, f"given pair {i}") for i, (first, second) in enumerate(neighbours))
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'neighbours' argument of {owner} must be a dpdist.audit.Neighbouring or a list of (dataset, "
            f"neighbour) pairs. Got {type(neighbours).__name__}."
        ) from None
    return Neighbouring("the pairs given (their relation is the caller's)", pairs)


def _releases(release: Callable[..., Any], relation: Neighbouring, features: Callable[[Any], Any] | None, name: str,
              claim: float, batched: bool = False) -> Randomizer:
    """A :class:`Randomizer` over dataset indices: one release of each dataset asked for, in the order asked."""
    # release: callable (the callers' tables)
    datasets = [d for pair in relation.pairs for d in (pair.dataset, pair.neighbour)]
    seeded = _positional_arguments(release) >= 2
    shown = features if features is not None else (lambda output: np.asarray(output).ravel())

    def sample(indices: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if batched:  # datasets of unequal lengths (add-remove) padded with NaN at the end
            chosen = [np.asarray(datasets[i], dtype=np.float64) for i in indices.tolist()]
            stacked = np.full((len(chosen), max(len(d) for d in chosen), *chosen[0].shape[1:]), np.nan)
            for row, data in zip(stacked, chosen):
                row[: len(data)] = data
            rows = release(stacked, rng) if seeded else release(stacked)
            return np.asarray([np.asarray(shown(row)).ravel() for row in rows])
        outputs = [shown(release(datasets[i], rng) if seeded else release(datasets[i])) for i in indices.tolist()]
        return np.stack([np.asarray(output).ravel() for output in outputs])  # one release per call: its own loop

    return Randomizer(sample, name=name, epsilon=claim, seeded=seeded,
                      notes=("one release per call of the mechanism (its own Python loop over datasets)",))


def _name_of(function: Callable[..., Any]) -> str:
    if inspect.isclass(function):
        return function.__name__
    return str(getattr(function, "__qualname__", None) or type(function).__name__)
