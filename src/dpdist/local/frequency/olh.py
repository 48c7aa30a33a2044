r"""Optimized local hashing, ``olh`` (Wang et al., USENIX Security 2017, sec. 4.4).

A user with item :math:`v` draws a hash function :math:`h` uniformly from a
universal family mapping items to :math:`[g]`, with
:math:`g = \operatorname{round}(e^\varepsilon + 1)` (the variance-optimal
choice), and reports :math:`(h, y)` where :math:`y` is :math:`h(v)` perturbed
by :math:`g`-ary randomized response: :math:`\Pr[y = h(v)] = p =
e^\varepsilon/(e^\varepsilon + g - 1)`, every other value
:math:`1/(e^\varepsilon + g - 1)`.  A report supports item :math:`v'` when
:math:`h(v') = y`.  (Papers 001 sec. II-B and 003 sec. 2.1 use OLH as a
frequency oracle.)

Hash family: :math:`h_{a,b}(x) = ((a x + b) \bmod P) \bmod g` with the prime
``hash_prime`` :math:`P` (default the Mersenne prime :math:`2^{31}-1`), see
:mod:`dpdist.local.frequency._hashing`.  Its exact collision probability
:math:`c` gives exact support probabilities (derived in the docstring of
``support_probabilities``):

.. math::

    p^* = p, \qquad q^* = p\,c + (1 - p)\,\frac{1 - c}{g - 1},

so the estimator of :class:`FrequencyOracle` is exactly unbiased with the
exact variance (with :math:`c = 1/g` this is the paper's :math:`q^* = 1/g`).

Channel.  The output :math:`(s, y)` has probability
:math:`\frac{1}{(P-1)P}\,\mathrm{GRR}_g(y \mid h_s(v))`, so the likelihood
ratio of any output is at most :math:`e^\varepsilon`.  ``channel()``
enumerates it for a small ``hash_prime`` (the conformance examples use
:math:`P = 5` or :math:`7`).

The support counts of OLH are dependent across items (one report supports
about :math:`d/g` items at once), so there is no exact aggregate sampler:
``simulate`` privatizes and aggregates in chunks (``exact_simulate=False``).
"""

from __future__ import annotations

import math

import numpy as np

from .._docs import shared_parameters
from ..._validation import Integer, Optional, Prime
from .._protocol import ProtocolTags, register
from . import _hashing
from ._local_hashing import LocalHashingOracle
from ._oracle import FrequencyOracle
from ..._types import ArrayLike

__all__ = ["OLH"]

_MERSENNE_31 = 2**31 - 1
#: largest number of channel columns (seeds x g) that ``channel()`` will enumerate
_MAX_CHANNEL_OUTPUTS = 1 << 20


@register
@shared_parameters
class OLH(LocalHashingOracle):
    """Optimized local hashing.

    Parameters
    ----------
    {epsilon}
    {hashed_domain_size}
    hash_range : int, optional
        Range :math:`g` of the hash functions; default
        :math:`\\operatorname{round}(e^\\varepsilon + 1)` (OLH).  ``2`` gives
        binary local hashing (BLH).
    hash_prime : int
        The prime :math:`P` of the family; default :math:`2^{31}-1`.

    Notes
    -----
    Reports are ``uint64`` arrays of shape ``(n, 2)``: column 0 the hash seed
    in :math:`[0, (P-1)P)`, column 1 the perturbed hash value in :math:`[0, g)`.
    """

    name = "olh"
    summary = "optimized local hashing: report (seed, GRR of h_seed(v)) with g = round(e^eps + 1)"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, bernoulli_support=True)
    _constraints = {
        **FrequencyOracle._constraints,
        "hash_range": Optional(Integer(low=2, high=2**20)),
        "hash_prime": Prime(low=3, high=_MERSENNE_31),
    }
    _defaults = {"hash_range": None, "hash_prime": _MERSENNE_31}

    def _setup(self):
        self._prime = self._checked_prime()
        self._g = self._params["hash_range"] or max(2, int(round(math.exp(self.epsilon) + 1.0)))
        self._n_seeds = _hashing.seed_count(self._prime)
        self._setup_hashed_grr()

    @property
    def hash_range(self) -> int:
        """The range :math:`g` actually used."""
        return self._g

    def support_probabilities(self) -> tuple[float, float]:
        r"""``(p*, q*)``.

        :math:`p^* = \Pr[y = h(v)] = p`.  For :math:`v' \ne v`: if
        :math:`h(v') = h(v)` (probability :math:`c`) the report supports
        :math:`v'` iff :math:`y = h(v)`; otherwise iff :math:`y` equals the other
        value :math:`h(v')`, which a perturbed :math:`y` (probability
        :math:`1-p`, uniform over the :math:`g-1` values other than
        :math:`h(v)`) hits with probability :math:`1/(g-1)`.
        """
        return self._p, self._q

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        seeds = rng.integers(0, self._n_seeds, size=values.size, dtype=np.int64)
        perturbed = self._perturb(_hashing.hash_items(seeds, values, self._prime, self._g), rng)
        return np.column_stack([seeds, perturbed]).astype(np.uint64)

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"g": self._g, "keep": self._keep}

    def _report_format(self):
        return _hashing.seed_value_format(self._n_seeds, self._g)

    def _accumulate(self, reports):
        return _hashing.support_counts(
            reports[:, 0].astype(np.int64), reports[:, 1].astype(np.int64), self.domain_size, self._prime, self._g
        )

    # ------------------------------------------------------------------ exact channel
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over ``(seed, value)`` pairs, column ``seed * g + value``; small ``hash_prime`` only."""
        outputs = self._n_seeds * self._g
        if outputs > _MAX_CHANNEL_OUTPUTS:
            raise NotImplementedError(
                f"OLH.channel enumerates (P-1)P x g = {outputs} outputs; only for at most "
                f"{_MAX_CHANNEL_OUTPUTS} (use a small 'hash_prime')."
            )
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        seeds = np.arange(self._n_seeds, dtype=np.int64)
        hashed = _hashing.hash_items(seeds[None, :], items[:, None], self._prime, self._g)  # (items, seeds)
        return self._grr_law(hashed, self._n_seeds).reshape(items.size, outputs)
