r"""Audit a local randomizer's epsilon: a certified lower bound from its samples, the exact channel where stated.

Give :func:`audit` a randomizer (a function of input values, a :class:`Randomizer`, or a dpdist
protocol) and the epsilon it claims; it returns an :class:`AuditResult`:

* **black box**: output events chosen on one part of the samples and certified on fresh ones
  with exact Clopper-Pearson bounds (Clopper & Pearson 1934), the multiple comparisons over
  events and stages paid for by a union bound, give a lower bound on the realized epsilon that
  holds with probability ``1 - alpha`` for any randomizer whose outputs are independent given their
  inputs (each drawn with fresh randomness, as one user's report is; the approach of Arcolezi &
  Gambs 2023, arXiv:2309.01597, LDP-Auditor, with events found from data);
* **white box** (a dpdist protocol with a small finite channel, or an adapter stating its
  channel): the exact epsilon of the stated channel and a chi-square test that the samples
  follow it;
* a **verdict**: ``"violates"`` only when the certified lower bound (or the stated channel's
  exact epsilon) exceeds the claim; ``"channel mismatch"`` when the samples do not follow the
  stated channel; otherwise ``"no violation found"``, with the bound and what the budget could not
  examine: output events rarer than ``smallest_examined_probability`` (about 80 / samples per
  input at a claim of 1), where a loss of any size goes unseen.

>>> from dpdist import audit, local
>>> result = audit.audit(local.make("grr", epsilon=1.0, domain_size=4), samples=20_000, rng=0)
>>> result.verdict
'no violation found'

Adapters for other libraries (OpenDP, pure-LDP, multi-freq-ldpy, and any library in an environment of its own)
are in :mod:`dpdist.audit.peers`.

The certificate, for an output event :math:`E` and inputs :math:`x, x'` with :math:`k` of :math:`n` fresh
outputs of :math:`x` in :math:`E` and :math:`k'` of :math:`n` of :math:`x'`:

.. math::

    \varepsilon \ge \ln \frac{B^{-1}(a;\, k,\, n-k+1) - \delta}{B^{-1}(1-a;\, k'+1,\, n-k')},
    \qquad a = \frac{\alpha}{2 L K},

the one-sided Clopper-Pearson bounds (Clopper & Pearson 1934) for :math:`L` stages of :math:`K` events; events
are chosen on outputs drawn before those they are certified on (:mod:`dpdist.audit._black_box`).
:func:`central` and :func:`column` certify the same bound on neighbouring datasets (:mod:`dpdist.audit._central`).

References
----------
C. J. Clopper, E. S. Pearson (1934). The use of confidence or fiducial limits illustrated in the case of the
binomial. Biometrika 26(4), 404-413.

H. H. Arcolezi, S. Gambs (2023). Revealing the True Cost of Local Privacy: An Auditing Perspective.
arXiv:2309.01597.
"""

from __future__ import annotations

from typing import Any

from .._rng import check_rng
from .._types import Seed
from ._central import audit_central as central, audit_column as column
from ._given import as_randomizer
from ._hash_family import HashFamily, conditioned_on_hash
from ._inputs import audit_inputs, input_pairs
from ._neighbours import Neighbouring, NeighbouringPair, add_remove, adversarial, replace_one
from ._protocols import protocol_randomizer
from ._randomizer import Randomizer
from ._result import AuditResult, Stage, table
from ._run import assemble, certify, check_settings, fit_channel
from ._statistics import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound

__all__ = [
    "audit",
    "central",
    "column",
    "Neighbouring",
    "NeighbouringPair",
    "add_remove",
    "replace_one",
    "adversarial",
    "AuditResult",
    "Randomizer",
    "HashFamily",
    "Stage",
    "protocol_randomizer",
    "table",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
]



def audit(
    randomizer: Any,
    epsilon: float | None = None,
    domain: Any = None,
    *,
    delta: float = 0.0,
    alpha: float = 1e-3,
    samples: int = 100_000,
    pilot: int | None = None,
    sequential: bool = True,
    keep: int = 4,
    bins: int = 16,
    max_cells: int = 4096,
    white_box: bool = True,
    float_bits: bool = True,
    rng: Seed = None,
) -> AuditResult:
    r"""Certify a lower bound on a local randomizer's epsilon and compare it with the claim.

    Parameters
    ----------
    randomizer : callable, Randomizer or dpdist LocalProtocol
        ``f(values) -> outputs`` (its own randomness), ``f(values, rng) -> outputs``, a
        :class:`Randomizer` (with its claim, domain, features or stated channel), or a
        dpdist protocol (claim, domain and channel taken from it).  Outputs are numbers,
        rows of numbers, booleans or a structured array; anything else needs a
        :class:`Randomizer` with ``features``.
    epsilon : float, optional
        The claimed epsilon (default: the randomizer's own).
    domain : int, (low, high) or array, optional
        ``d`` items ``0..d-1`` (every pair when ``d <= 16``, else a designed set of 16),
        real bounds (7 points), or the inputs to compare (numbers, or rows: a device's
        history).  Default: the randomizer's own.
    delta : float
        The delta of an (epsilon, delta) claim (default 0: pure epsilon); subtracted from
        each certified lower bound, :math:`\varepsilon \ge \ln((p_- - \delta) / q_+)`.
    alpha : float
        The audit's error rate: every certified bound holds at once with probability
        ``>= 1 - alpha``, so a randomizer that keeps its claim is called ``"violates"`` with
        probability at most ``alpha``, provided its outputs are independent given their inputs
        (randomness shared by the outputs of one call, such as one hash seed per call, is outside
        that promise: docs/explanation/auditing.md, "What is certified, and how").
    samples : int
        Outputs drawn per input at most (pilot and stages; at least 200).
    pilot : int, optional
        Outputs per input that choose the first events (default ``min(samples // 8, 2000)``, at least 100).
    sequential : bool
        Certify in stages doubling from ``pilot`` and stop at the first certified violation
        (each stage pays its share of ``alpha``); ``False``: one stage after the pilot.
    keep, bins, max_cells : int
        Events certified per stage (Bonferroni over them); levels per output column (reals cut at
        quantiles of earlier samples); the most distinct outputs treated one by one.
    white_box : bool
        Also compute the stated channel's exact epsilon and fit, where there is one.
    float_bits : bool
        Give float outputs two more columns, their binary exponent and lowest set bit, so that an output
        support that depends on the input (textbook floating-point noise: Mironov 2012) is certified
        (:mod:`dpdist.audit._floats`).
    rng : None, int or Generator
        ``None``: the CSPRNG (the default, an audit nobody can steer); a seed repeats the
        audit exactly when the randomizer draws from ``rng``.

    Returns
    -------
    AuditResult
        The certificate, its method and references: the module docstring.
    """
    owner = "dpdist.audit.audit"
    chosen = as_randomizer(randomizer, owner)
    settings = check_settings(owner, chosen.epsilon if epsilon is None else epsilon, delta=delta, alpha=alpha,
                              samples=samples,
                              pilot=pilot, sequential=sequential, keep=keep, bins=bins, max_cells=max_cells,
                              float_bits=float_bits)
    inputs, chosen_inputs = audit_inputs(chosen.domain if domain is None else domain, owner)
    generator = check_rng(rng, owner=owner)
    audited = conditioned_on_hash(chosen, inputs) if chosen.hash_family is not None else chosen
    found = certify(audited, inputs, input_pairs(len(inputs)), settings, generator, single=True)
    white = fit_channel(chosen, inputs, settings, generator) if white_box else None
    return assemble(audited, settings, found, white, chosen_inputs, len(inputs), rng,
                    neighbouring="local: any two inputs of one user")
