"""Central DP on a DataFrame column (dpdist.frame._central): ``release`` takes a central release only, and names
the argument a release lacks or does not take."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import central
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize("function", [np.histogram, len, np.mean, "cdf"])
def test_frame_release_refuses_what_is_not_a_central_release(pandas_table, function):
    from dpdist import frame

    with pytest.raises(InvalidParameterError, match=r"The 'release' argument of frame\.release must be a dpdist\.central "
                                                    r"release: one of \[.*'central\.cdf'"):
        frame.release(pandas_table, "age", function, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"The 'release' argument of frame\.group_release"):
        frame.group_release(pandas_table, "age", "group", function, epsilon=1.0, groups=[0, 1])


def test_frame_release_names_the_argument_a_release_lacks_or_does_not_take(pandas_table):
    from dpdist import frame
    from dpdist.budget import BudgetSession

    with pytest.raises(InvalidParameterError, match=r"central\.cdf's after its data \['epsilon', 'bounds'.*'bounds'"):
        frame.release(pandas_table, "age", central.cdf, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"unexpected keyword argument 'bins'"):
        frame.release(pandas_table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), bins=10)
    with pytest.raises(InvalidParameterError, match=r"'bounds'"):
        frame.group_release(pandas_table, "age", "group", central.cdf, epsilon=1.0, groups=[0, 1])
    session = BudgetSession(epsilon=5.0, neighbouring="add-remove")
    with pytest.raises(InvalidParameterError, match=r"'bounds'"):
        frame.release(pandas_table, "age", central.cdf, epsilon=1.0, session=session)
    assert session.charges == ()  # refused before anything was charged
    with pytest.raises(InvalidParameterError, match=r"BudgetSession\.release calls 'histogram'.*do not fit"):
        session.release(np.histogram, np.zeros(3), epsilon=1.0)
    released = frame.release(pandas_table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), rng=0)
    assert released.guarantee.epsilon == 1.0
