"""Several attributes per person: records of categorical and numerical attributes.

Every protocol here takes a public schema (``attributes``) and a record per
user, and randomizes each attribute through a registered protocol:

* ``spl`` -- every attribute at :math:`\\varepsilon/k` (split budget);
* ``smp`` -- one attribute per user, sampled uniformly, at :math:`\\varepsilon` (the index is reported);
* ``rsfd`` -- one sampled attribute at :math:`\\varepsilon`, fake data for the others (the index is hidden);
* ``rsrfd`` -- the same with fake data drawn from public priors;
* ``calm`` -- consistent k-way marginals of categorical attributes (CALM);
* ``hdg`` -- range queries over numerical attributes from consistent 1-D and 2-D grids (HDG/TDG);
* :mod:`.pripl` -- range queries from PL-fitted trees and data-adaptive 2-D grids over three rounds of users
  (PriPL-Tree; a multi-round plan, not a registered protocol).

``local.make("multi-auto", ...)`` recommends one of them by analytic variance
(:mod:`dpdist.local.multi.auto`).
"""

from .._autoload import import_submodules
from ._result import MultiAttributeEstimate
from ._schema import MAX_ATTRIBUTES, Attribute, Attributes

import_submodules(__name__, __path__)

__all__ = ["MultiAttributeEstimate", "Attribute", "Attributes", "MAX_ATTRIBUTES"]
