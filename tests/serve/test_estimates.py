"""The options of a served estimate (dpdist.serve._estimates): those that would grow the estimator's memory are
refused naming the option."""

from __future__ import annotations


import pytest

pytest.importorskip("starlette")




@pytest.mark.parametrize("option, value", [("keep_path", "true"), ("bootstrap", "100000")])
def test_options_that_grow_the_estimators_memory_are_refused(option, value):
    """The estimator process has a time limit but no memory bound. ``keep_path=true`` keeps every iterate
    (iterations x d floats: 100,000 x 1,024 -> 2.5 GB peak RSS of the estimator in 22 s, measured; d = 16,384 would
    pass 9 GB before the 120 s limit) and is never served; ``bootstrap=100000`` keeps every replicate (40,000 x 1,024
    -> 1.3 GB in 13 s, measured). Expected: 400 invalid_option naming the option, like *iterations."""
    from dpdist.serve._estimates import estimate_options
    from dpdist.serve._refusals import InvalidRequest

    with pytest.raises(InvalidRequest, match=option):
        estimate_options({option: value})
