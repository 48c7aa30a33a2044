"""The checks of the claims library: generic claim checks every reproduction builds its claims from.

=====================  ===============================================================================
:class:`BetterThan`     one method below another in every setting (:func:`better_than`)
:class:`GroupBeats`     every method of one group below every method of another
:class:`AllOf`          a composite: every part holds (:func:`lowest_of`: one method beats several)
:class:`BeatsRivals`    one row below (or above) ``factor`` times every rival's, per setting: "the best",
                        "the worst", "within 25 % of the best", "the best number of bins"
:class:`RatioWithin`    a ratio of two mean errors in a band ("2-10x"; :meth:`RatioWithin.along`: a
                        method against itself at another value of a column: "constant in n", "stuck")
:class:`ScalesAs`       an error scaling as a power of n
:class:`Threshold`      a mean above (or below) a computed constant
:class:`RatioContrast`  a ratio of errors larger on one group of settings than on another
:class:`GapShrinks`     a gap to a reference shrinks along x
:class:`Decreasing`     an error falls as x grows, on every curve
:class:`MinimumWithin`  the lowest error of a curve lies in a range of x (or near another metric's best)
:class:`MoreVariable`   one method's error varies more over repeats than another's
:class:`MatchesKnown`   means equal a known value within a margin of known standard errors
=====================  ===============================================================================

Every check but :class:`MatchesKnown` decides with the one rule, :func:`~dpdist.experiments.decide`
(docs/explanation/verdicts.md, "Verdicts"), and reports its direction count and power
(:func:`~dpdist.experiments.conclude`); ``tests/experiments/checks/test_checks.py`` simulates each on tied
methods.
"""

from .bands import RatioWithin, ScalesAs, Threshold
from .composite import AllOf, lowest_of
from .contrasts import GapShrinks, RatioContrast
from .curves import Decreasing, MinimumWithin
from .pairs import BetterThan, GroupBeats, better_than
from .rivals import BeatsRivals
from .spread import MatchesKnown, MoreVariable

__all__ = [
    "BetterThan", "better_than", "GroupBeats", "AllOf", "lowest_of", "BeatsRivals", "RatioWithin", "ScalesAs",
    "Threshold", "RatioContrast", "GapShrinks", "Decreasing", "MinimumWithin", "MoreVariable", "MatchesKnown",
]
