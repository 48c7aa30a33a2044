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
    from dpdist._guard._refusals import InvalidRequest

    with pytest.raises(InvalidRequest, match=option):
        estimate_options({option: value})


@pytest.mark.parametrize("value", ["1e999", "-1e999", "NaN", "Infinity", "[1, 1e999]", '{"a": NaN}'])
def test_an_option_that_is_no_finite_number_is_refused(value):
    """``?x=1e999`` (or NaN) was parsed to a float an answer echoing the options cannot write as JSON: a
    500 and two tracebacks a request (the CLI retried it for 5 minutes). Expected: 400 invalid_option naming it."""
    from dpdist.serve._estimates import estimate_options
    from dpdist._guard._refusals import InvalidRequest

    with pytest.raises(InvalidRequest, match="'x' option must hold finite numbers"):
        estimate_options({"x": value})
    assert estimate_options({"x": "[1, 2.5]"})[0] == {"x": [1, 2.5]}


@pytest.mark.parametrize("depth", [300, 500])
def test_a_deeply_nested_option_is_read_without_recursion(depth):
    """An option nested 300-980 deep (within what the JSON reader takes) made the finiteness check recurse
    past Python's limit: a 500 and two tracebacks. Expected: read like any other option, a non-finite one refused."""
    from dpdist.serve._estimates import estimate_options
    from dpdist._guard._refusals import InvalidRequest

    try:
        options, _ = estimate_options({"x": "[" * depth + "1" + "]" * depth})
    except InvalidRequest:  # the JSON reader's own depth bound, if it has one below this: a 400 too
        pass
    else:
        assert "x" in options
    with pytest.raises(InvalidRequest):
        estimate_options({"x": "[" * depth + "1e999" + "]" * depth})


def test_replicates_of_thousands_of_digits_are_refused_not_converted():
    """``replicates=1`` followed by 4,300 zeros passed the digits check and int() raised ValueError
    (Python's 4,300-digit limit): a 500 and two tracebacks. Expected: 400 invalid_option naming it."""
    from dpdist.serve._estimates import view_parameters
    from dpdist._guard._refusals import InvalidRequest

    for text in ("1" + "0" * 4300, "2" * 5000, "10000"):
        with pytest.raises(InvalidRequest, match="'replicates' parameter"):
            view_parameters({"replicates": text})
    assert view_parameters({"replicates": "0" * 5000 + "20"}) == (None, 20)
