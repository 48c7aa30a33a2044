r"""The maximal gain attack (MGA) of Cao, Jia & Gong on GRR, unary encodings and OLH: fake reports, vectorized.

Cao, Jia & Gong ("Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX Security
2021, sec. 4) let an attacker inject :math:`m` fake users among :math:`n` genuine ones,
:math:`\beta = m/(n+m)`, and craft their reports to maximize the *overall gain* of :math:`r`
target items :math:`T`, :math:`G = \sum_{t \in T} E[\tilde f_{t,\text{after}} - \tilde f_{t,\text{before}}]`.
With a pure frequency oracle (a report supports its item with probability :math:`p`, another with
:math:`q`), the estimate of :math:`N` reports is :math:`\tilde f_t = (C_t/N - q)/(p - q)`, so a fake
report that supports :math:`s` of the targets adds :math:`s/(N(p-q))` to their sum and the gain is
(their Theorems 1-3, written with this package's exact :math:`p, q`)

.. math::

    G = \beta\left(\frac{\bar s - r q}{p - q} - f_T\right),

with :math:`\bar s` the mean number of targets a fake report supports and :math:`f_T` the genuine
frequency of the targets.  The attack maximizes :math:`\bar s`:

* GRR (a report supports one item): each fake user reports a target drawn uniformly, :math:`\bar s = 1`:
  :math:`G = \beta(1 - f_T) + \beta (d - r)/(e^\varepsilon - 1)` at GRR's :math:`p, q` (their Theorem 1);
* OUE and SUE: the bits of every target set, :math:`\bar s = r`, and :math:`l - r` other bits drawn
  uniformly with :math:`l = \lfloor p + (d-1)q \rfloor` the expected number of 1s of a genuine
  report, so that the number of 1s does not give the fake reports away (sec. 4.2): at OUE's
  :math:`p = 1/2`, :math:`G = \beta(2 r e^\varepsilon/(e^\varepsilon - 1) - f_T)` (Theorem 2);
* OLH: each fake user draws ``hash_candidates`` hash seeds, keeps the one hashing the most targets
  to one value, and reports that value (sec. 4.3), :math:`\bar s \to r` with enough candidates
  (Theorem 3, with :math:`q` the family's exact support probability).

:func:`maximal_gain_attack` returns the fake reports in the protocol's own report format, so they
aggregate, merge and pass validation like genuine ones; :func:`expected_gain` is :math:`G`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._rng import check_rng
from .._types import Seed
from .._validation import AttributeIn, Integer, Interval, Items, OneOf, validate_params
from ..errors import OutOfDomainError
from ..local import LocalProtocol
from ..local.frequency import _hashing

__all__ = ["maximal_gain_attack", "expected_gain", "ATTACKED_PROTOCOLS"]

#: the protocols :func:`maximal_gain_attack` crafts reports for
#: (RUE is unary encoding and RLH local hashing with other (p, q) or g: the same construction)
ATTACKED_PROTOCOLS = ("grr", "oue", "sue", "rue", "olh", "rlh")
#: cells (fake users x candidate seeds x targets) searched at once: 2**16 int64 (512 KB) keeps the search's arrays
#: in the CPU cache, 2.5 times faster than 2**22 (32 MB); the same reports (the seeds are drawn in the same order)
_CHUNK_CELLS = 1 << 16


#: the target items: one id, or several
_ID = Integer(low=-(2**63), high=2**63 - 1)  # an int64: one outside the domain is OutOfDomainError, by _check
_TARGETS = OneOf((_ID, Items(_ID, "", min_length=1)), "an item id (an int64) or a non-empty 1-D array of them")


#: the protocols the attacks know
_PROTOCOL = AttributeIn(LocalProtocol, "name", tuple(ATTACKED_PROTOCOLS), f"one of the protocols {list(ATTACKED_PROTOCOLS)} "
                        "(dpdist.local.make)")


def _check(owner: str, protocol: Any, targets: Any) -> np.ndarray:
    """The targets (ints, of an attacked protocol: the caller's table checked them) as an array of distinct items of ``protocol``'s domain."""
    d = int(protocol.domain_size)
    array = np.atleast_1d(np.asarray(targets, dtype=np.int64))
    if array.min() < 0 or array.max() >= d or np.unique(array).size != array.size:
        raise OutOfDomainError(
            f"The 'targets' argument of {owner} must hold distinct items in [0, {d}). Got {targets!r} instead."
        )
    return array


@validate_params({"protocol": _PROTOCOL, "n_fake": Integer(low=0), "targets": _TARGETS, "hash_candidates": Integer(low=1, high=1 << 20)})
def maximal_gain_attack(
    protocol: LocalProtocol, n_fake: int, targets: Any, *, rng: Seed = None, hash_candidates: int = 1000
) -> np.ndarray:
    r"""The reports of ``n_fake`` fake users running the maximal gain attack on ``targets``.

    Parameters
    ----------
    protocol : LocalProtocol
        ``grr``, ``oue``, ``sue``, ``rue``, ``olh`` or ``rlh`` (:data:`ATTACKED_PROTOCOLS`).
    n_fake : int
        Number of fake users (``>= 0``).
    targets : array_like of int
        The :math:`r` distinct target items.
    rng : None, int or Generator
        The attacker's randomness (which target, which padding bits, which hash seeds).
    hash_candidates : int
        OLH: hash seeds each fake user tries (Cao et al. sample many and keep the best).

    Returns
    -------
    ndarray
        ``n_fake`` reports in ``protocol.report_format``: add them to an aggregator beside genuine ones.

    Notes
    -----
    The construction and its gain are in the module docstring (:mod:`dpdist.testing._poisoning`;
    Cao, Jia & Gong, USENIX Security 2021, sec. 4 and Theorems 1-3).
    """
    owner = "maximal_gain_attack"
    items = _check(owner, protocol, targets)
    generator = check_rng(rng, owner=owner)
    proto: Any = protocol
    if protocol.name == "grr":  # one uniformly drawn target per fake report (Theorem 1)
        return items[generator.integers(0, items.size, size=n_fake)].astype(protocol.report_format.dtype)
    if protocol.name in ("olh", "rlh"):
        return _hash_reports(proto, n_fake, items, generator, hash_candidates)
    return _unary_reports(proto, n_fake, items, generator)


def _unary_reports(protocol: Any, n_fake: int, items: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """Every target bit set, and ``l - r`` other bits drawn without replacement (``l`` the expected number of 1s)."""
    d = protocol.domain_size
    p, q = protocol.support_probabilities()
    padding = max(int(math.floor(p + (d - 1) * q)) - items.size, 0)
    others = np.setdiff1d(np.arange(d), items)
    bits = np.zeros((n_fake, d), dtype=bool)
    bits[:, items] = True
    if padding and n_fake:
        # the `padding` smallest of one uniform key per (user, other item): a uniform subset per user
        chosen = np.argpartition(generator.random((n_fake, others.size)), padding - 1, axis=1)[:, :padding]
        bits[np.repeat(np.arange(n_fake), padding), others[chosen.ravel()]] = True
    return protocol.pack(bits)


def _hash_reports(
    protocol: Any, n_fake: int, items: np.ndarray, generator: np.random.Generator, candidates: int
) -> np.ndarray:
    """Per fake user: the seed (of ``candidates``) hashing the most targets to one value, and that value."""
    prime, g = int(protocol.params["hash_prime"]), protocol.hash_range
    reports = np.empty((n_fake, 2), dtype=np.uint64)
    chunk = max(1, _CHUNK_CELLS // (candidates * items.size))
    for start in range(0, n_fake, chunk):
        users = min(chunk, n_fake - start)
        seeds = generator.integers(0, _hashing.seed_count(prime), size=(users, candidates), dtype=np.int64)
        rows = np.arange(users)
        if items.size == 1:  # one target: every candidate holds it alone, the first is kept
            choice = np.zeros(users, dtype=np.int64)
            value = _hashing.hash_items(seeds[:, 0], items[0], prime, g)
        else:
            hashed = _hashing.hash_items(seeds[..., None], items, prime, g)  # (users, candidates, r)
            # for each (user, candidate): how many targets share each target's hash value (a pass per other
            # target, not an (r, r) comparison per cell summed over its short last axis)
            together = np.zeros(hashed.shape, dtype=np.int64)
            for other in range(items.size):
                together += hashed == hashed[..., other : other + 1]
            best_count = together[..., 0].copy()
            for other in range(1, items.size):
                np.maximum(best_count, together[..., other], out=best_count)
            choice = best_count.argmax(axis=1)  # the first candidate with the most targets together
            best_target = together[rows, choice].argmax(axis=-1)  # its first target with that many
            value = hashed[rows, choice, best_target]
        reports[start : start + users, 0] = seeds[rows, choice]
        reports[start : start + users, 1] = value
    return reports


@validate_params({"protocol": _PROTOCOL, "targets": _TARGETS, "fake_fraction": Interval(0.0, 1.0, closed="left"),
                  "target_frequency": Interval(0.0, 1.0, closed="both")})
def expected_gain(protocol: LocalProtocol, targets: Any, fake_fraction: float, target_frequency: float) -> float:
    r"""The MGA's overall gain :math:`G = \beta((\bar s - r q)/(p - q) - f_T)` (Cao et al., Theorems 1-3).

    Parameters
    ----------
    protocol : LocalProtocol
        ``grr``, ``oue``, ``sue``, ``rue``, ``olh`` or ``rlh``.
    targets : array_like of int
        The target items (only their number :math:`r` enters).
    fake_fraction : float
        :math:`\beta = m/(n+m)`, in ``[0, 1)``.
    target_frequency : float
        :math:`f_T`, the genuine users' frequency of the targets together, in ``[0, 1]``.

    Returns
    -------
    float
        The expected increase of the targets' summed unbiased estimate, with :math:`\bar s = 1` for
        GRR and :math:`r` for the others (OLH: every target hashed together, the limit of many candidates).
    """
    owner = "expected_gain"
    items = _check(owner, protocol, targets)
    beta, f_t = fake_fraction, target_frequency
    p, q = protocol.support_probabilities()  # type: ignore[attr-defined]
    supported = 1 if protocol.name == "grr" else items.size
    return beta * ((supported - items.size * q) / (p - q) - f_t)
