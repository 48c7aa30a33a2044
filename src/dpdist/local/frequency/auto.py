r"""Choice of a categorical frequency oracle by variance: ``local.make("auto", ...)``.

Wang et al. (USENIX Security 2017, sec. 4.4) compare the variances at
:math:`f_v = 0`:

.. math::

    \operatorname{Var}_{GRR} = \frac{e^\varepsilon + d - 2}{n (e^\varepsilon - 1)^2},
    \qquad
    \operatorname{Var}_{OUE} = \operatorname{Var}_{OLH} = \frac{4 e^\varepsilon}{n (e^\varepsilon - 1)^2},

so GRR is the better choice exactly when :math:`d - 2 < 3 e^\varepsilon`.
OUE and OLH have the same variance; OUE sends :math:`d` bits per user and
aggregates in :math:`O(nd/64)` word operations, OLH sends a 64-bit seed plus
:math:`\lceil\log_2 g\rceil` bits but costs :math:`O(nd)` hash evaluations to
aggregate.  ``auto`` picks OUE; pick ``olh`` explicitly when the upload size
matters more than the collector's time.
"""

from __future__ import annotations

import math

from ..._validation import DOMAIN_SIZE, EPSILON, check_param

__all__ = ["choose_protocol", "lower_variance_oracle", "SUMMARY"]

#: The line ``dpdist list`` prints for ``auto`` (a choice made in ``local.make``, not a registered class).
SUMMARY = "the lower-variance oracle for epsilon and d: grr if d < 3e^eps + 2, else oue"


def lower_variance_oracle(epsilon: float, domain_size: int) -> str:
    """``"grr"`` when :math:`d < 3 e^\\varepsilon + 2` (its variance is then the lower), else ``"oue"``.

    The one place this rule lives: ``local.make("auto")`` and the ``oracle="auto"``
    of the binning and hierarchy protocols both ask it.  Arguments are trusted
    (already validated by the caller).
    """
    return "grr" if domain_size < 3.0 * math.exp(epsilon) + 2.0 else "oue"


def choose_protocol(**params) -> str:
    """Registry name of the lower-variance oracle for ``epsilon`` and ``domain_size``.

    ``domain_size`` defaults to the number of ``labels``.  Returns ``"grr"`` when :math:`d < 3 e^\\varepsilon + 2`, else ``"oue"``.
    """
    epsilon = check_param("local.make('auto')", "epsilon", params.get("epsilon"), EPSILON)
    labels = params.get("labels")
    default_size = len(labels) if isinstance(labels, (list, tuple)) else None
    domain_size = check_param("local.make('auto')", "domain_size", params.get("domain_size", default_size), DOMAIN_SIZE)
    return lower_variance_oracle(epsilon, domain_size)
