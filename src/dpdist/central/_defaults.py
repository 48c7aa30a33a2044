r"""Hyperparameters of the central releases chosen from n and epsilon (docs/explanation/central-release.md, "Defaults").

Every rule is a function of :math:`\varepsilon n`, the quantity that sets the
balance between noise (which falls like :math:`1/(\varepsilon n)` per query) and
resolution.  The rules were fitted on a grid (``docs/explanation/central-release.md``, "Defaults"):
normal, Beta(2, 5) and lognormal data, n = 10^3..10^5, epsilon = 0.1..2, 4 runs
per cell, KS against the data; "regret" is the rule's KS over the best grid
value's.

``n`` must be public for a rule to use it.  Under replacement neighbours (the
default of the seed paper's methods) it is.  Under add/remove neighbours it is
not: :func:`size_for_rules` then spends :data:`SIZE_BUDGET_SHARE` of the budget
on a Laplace count, and the rule reads that.
"""

from __future__ import annotations

import math

import numpy as np

from .._guarantee import PrivacyGuarantee, split
from .noise import laplace_mechanism

__all__ = [
    "SIZE_BUDGET_SHARE",
    "size_for_rules",
    "histogram_bins",
    "polynomial_degree",
    "quantile_iterations",
    "pursuit_sparsity",
]

#: Share of the budget spent on a noisy record count when ``n`` is private and a rule needs it.
SIZE_BUDGET_SHARE = 0.05


def size_for_rules(data, neighbouring: str) -> tuple[float, list[PrivacyGuarantee], dict | None]:
    """``(n for the rules, the release's steps, the size release)``.

    Under ``"replace"`` the true ``n`` is public: nothing is spent and the steps are
    the whole budget.  Under ``"add-remove"`` a Laplace count (sensitivity 1) of
    :data:`SIZE_BUDGET_SHARE` of the budget is released first (rounded to an
    integer, at least 1); the second step is what is left for the release itself.
    """
    total = data.guarantee(neighbouring)
    if neighbouring == "replace":
        return float(data.x.size), [total], None
    steps = split(total, [SIZE_BUDGET_SHARE, 1.0 - SIZE_BUDGET_SHARE])
    noisy = laplace_mechanism(np.array([float(data.x.size)]), 1.0, steps[0].epsilon, data.rng, integer_valued=True)
    public_n = max(float(np.round(noisy[0])), 1.0)
    return public_n, steps, {"noisy_n": int(public_n), "epsilon": steps[0].epsilon}


def histogram_bins(n: float, epsilon: float) -> int:
    r""":math:`B = \varepsilon\sqrt{1.6\,n}` equal bins, at least 16 and at most :math:`2^{20}`.

    The balance of the in-bin fluctuation of the empirical CDF against the
    Laplace noise of B counts (``docs/explanation/central-release.md``).  Median regret 1.23 on the
    grid; it is tuned for smooth data: on lognormal data with a wide range the
    best B is 2-8x larger (regret up to 9 at n = 10^5, epsilon = 0.1), which is
    why :func:`dpdist.central.cdf` uses the tree.
    """
    return int(min(max(round(epsilon * math.sqrt(1.6 * n)), 16), 2**20))


def polynomial_degree(n: float, epsilon: float, moments: str) -> int:
    r"""Degree m of the polynomial projection.

    ``"legendre"`` moments: :math:`m = 1.2(\varepsilon n)^{0.3}` in [4, 32] (median
    regret 1.17, 90% quantile 1.61); ``"monomial"`` moments (the paper's
    Alg. 1, whose noise grows like :math:`2^m`): :math:`m = 0.9(\varepsilon n)^{0.2}`
    in [2, 8] (median regret 1.00, 90% quantile 2.06; the paper's fixed m = 6:
    1.39 and 3.29).
    """
    size = max(epsilon * n, 1.0)
    if moments == "legendre":
        return int(min(max(round(1.2 * size**0.3), 4), 32))
    return int(min(max(round(0.9 * size**0.2), 2), 8))


def quantile_iterations(n: float, epsilon: float) -> int:
    r"""Rounds of adaptive quantiles: :math:`\sqrt{\varepsilon n}/4` in [10, 1000].

    Each round costs :math:`\varepsilon/T` of the budget, so more rounds mean
    finer knots but noisier counts.  Median regret 1.00, largest 1.58 on the grid
    (the paper's fixed 80 rounds: median 2.92, largest 7.95).
    """
    return int(min(max(round(math.sqrt(max(epsilon * n, 0.0)) / 4), 10), 1000))


def pursuit_sparsity(n: float, epsilon: float) -> int:
    r"""Atoms selected by matching pursuit: :math:`(\varepsilon n)^{0.3}/2` in [2, 16].

    Each atom costs a noisy selection and a noisy coefficient, so the budget per
    atom falls like :math:`1/s`.  With the 40 Legendre atoms of the paper: median
    regret 1.03, 90% quantile 1.56 (the paper's fixed s = 6: 1.21 and 3.57).
    """
    return int(min(max(round(max(epsilon * n, 1.0) ** 0.3 / 2), 2), 16))
