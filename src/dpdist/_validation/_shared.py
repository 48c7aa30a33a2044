"""The rules several modules check (local and central epsilon, delta, domain size) and the allocation cap."""

from __future__ import annotations

from ..errors import InvalidParameterError
from ._combinators import Described
from ._scalars import Integer, Interval

__all__ = ["LOCAL_EPSILON", "CENTRAL_EPSILON", "EPSILON", "DELTA", "DOMAIN_SIZE", "POPULATION", "MAX_POPULATION", "population", "MAX_ALLOCATION_BYTES", "check_allocation"]


#: The supported privacy budget of every local protocol.  Below 1e-6 the estimators divide by
#: differences of probabilities that round to zero; above 30 the protocols' integer parameters
#: (e^epsilon hash ranges, OLH's g) overflow, and no local release is meaningful there anyway.
LOCAL_EPSILON = Interval(1e-6, 30.0, closed="both", privacy=True)


#: The supported privacy budget of every central release, at both ends for every release
#: (tests/central/test_common.py): the exact noise samplers round each step's epsilon down to
#: a dyadic rational whose resolution follows the step (so a split budget never falls below it),
#: as an int64 numerator (so at most 1e12; larger budgets protect nothing).
CENTRAL_EPSILON = Interval(1e-6, 1e12, closed="both", privacy=True)


#: a local protocol's privacy budget (the name local modules and the demo use)
EPSILON = LOCAL_EPSILON


#: the delta of (epsilon, delta)-DP: in (0, 1)
DELTA = Interval(0.0, 1.0, closed="neither", privacy=True)


#: the number of items of a categorical domain
DOMAIN_SIZE = Integer(low=2, high=2**31 - 1)


#: The most users or records a population-size argument (``n`` of ``explain``, of an experiment's grid, ...) may
#: state: 2**53, the last integer float64 (in which every variance and estimate is computed) holds exactly; far
#: above any population (10**309 overflowed to a bare OverflowError in the variance).
MAX_POPULATION = 2**53


def population(low: int = 1) -> Described:
    """The rule of a population size: an int from ``low`` to :data:`MAX_POPULATION`."""
    return Described(Integer(low=low, high=MAX_POPULATION),
                     f"an int from {low} to 2**53 = {MAX_POPULATION} (users or records)")


#: the number of users or records of a prediction or an experiment's cell: an int from 1 to 2**53
POPULATION = population(1)


#: The largest single array (in bytes) that one report, the aggregate or the estimate of a local
#: protocol may need: 2 GiB.  A protocol whose parameters would need more (a ``domain_size`` of
#: 2^31 items is 16 GiB of int64 counts) is refused when it is built (:func:`check_allocation`),
#: not when the first batch of reports arrives.  The peak working memory is a few such arrays.
MAX_ALLOCATION_BYTES = 2**31


def _format_bytes(count: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def check_allocation(owner: str, name: str, value: int, bytes_per_unit: int, what: str) -> None:
    """Refuse ``value`` of parameter ``name`` when ``value * bytes_per_unit`` exceeds :data:`MAX_ALLOCATION_BYTES`.

    ``what`` says which array it is (e.g. "the aggregate (an int64 count per item)"); the
    message names the parameter, its value, the memory it would need and the largest
    value allowed.
    """
    need = int(value) * int(bytes_per_unit)
    if bytes_per_unit > 0 and need > MAX_ALLOCATION_BYTES:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} is {value:,}: {what} would need {_format_bytes(need)} in one "
            f"array ({bytes_per_unit} bytes per item), over dpdist's limit of {_format_bytes(MAX_ALLOCATION_BYTES)} "
            f"per allocation (dpdist.local.MAX_ALLOCATION_BYTES). The largest allowed {name} is "
            f"{MAX_ALLOCATION_BYTES // bytes_per_unit:,}."
        )
