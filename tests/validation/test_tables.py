"""Parameter tables (``dpdist._validation._tables``): a dict of parameters or a function's arguments checked against
their rules.  Every table of the package generates its bad-input tests in tests/package/test_parameter_tables.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dpdist._validation import (
    PARAMETER_TABLES,
    Below,
    Constraint,
    Integer,
    Interval,
    check_options,
    check_params,
    did_you_mean,
    unknown_names_error,
    validate_params,
)
from dpdist.errors import InvalidParameterError


@pytest.fixture
def tables():
    """Tables stated by a test are taken out of PARAMETER_TABLES after it (the generated tests read the package's)."""
    before = len(PARAMETER_TABLES)
    yield PARAMETER_TABLES
    del PARAMETER_TABLES[before:]


def test_check_params_refuses_unknown_names_with_a_suggestion():
    rules = {"epsilon": Interval(0, 10), "domain_size": Integer(low=2)}
    assert check_params("make", {"epsilon": 1, "domain_size": 4.0}, rules) == {"epsilon": 1.0, "domain_size": 4}
    with pytest.raises(InvalidParameterError, match=r"unknown parameter\(s\) \['eps'\] \(did you mean 'epsilon' for 'eps'\?\)"):
        check_params("make", {"eps": 1}, rules)
    assert did_you_mean("domian_size", rules) == "domain_size" and did_you_mean("zzz", rules) is None
    assert "allowed: none" not in str(unknown_names_error("f", ["x"], ["y"]))


def test_check_options_delegates_unknown_options_and_passes_none_through():
    table: dict[str, Constraint] = {"iterations": Integer(low=1)}
    assert check_options("estimate", {"iterations": 3.0}, table) == {"iterations": 3}
    assert check_options("estimate", {"iterations": None}, table) == {"iterations": None}
    assert check_options("estimate", {"other": 1, "deconvolve": "ibu"}, table, delegate="deconvolve")["other"] == 1
    with pytest.raises(InvalidParameterError, match="unknown option"):
        check_options("estimate", {"other": 1}, table, delegate="deconvolve")
    with pytest.raises(InvalidParameterError, match="allowed: none"):
        check_options("estimate", {"other": 1}, {})


def test_validate_params_checks_positional_and_keyword_arguments_and_records_the_table(tables):
    @validate_params({"jobs": Integer(low=1), "rate": Interval(0, 1)}, relations=[Below("jobs", "limit")])
    def run(jobs, rate=0.5, *, limit=10):
        return jobs, rate

    assert run(2.0, rate=1 / 4) == (2, 0.25)
    with pytest.raises(InvalidParameterError, match=r"'jobs' parameter of .*run must be an int >= 1\. Got 0"):
        run(0)
    with pytest.raises(InvalidParameterError, match="'jobs' parameter .* must be below 'limit' = 10"):
        run(12)
    assert tables[-1].function is run and set(tables[-1].rules) == {"jobs", "rate"} and tables[-1].defaults == {"rate": 0.5}
    with pytest.raises(TypeError, match="names no parameter"):
        validate_params({"missing": Integer()})(lambda x: x)


def test_validate_params_on_a_dataclass_checks_its_init_under_the_class_name(tables):
    @validate_params({"size": Integer(low=1)})
    @dataclass
    class Sketch:
        size: int

    assert Sketch(size=3.0).size == 3  # pyright: ignore[reportArgumentType] - a whole float is coerced by the table
    with pytest.raises(InvalidParameterError, match="'size' parameter of Sketch"):
        Sketch(0)
    assert tables[-1].function is Sketch and tables[-1].owner == "Sketch"


def test_a_helper_names_its_caller(tables):
    @validate_params({"rng": Integer(low=0)}, owner_argument="owner")
    def check_seed(rng, owner="a helper"):
        return rng

    with pytest.raises(InvalidParameterError, match="'rng' parameter of GRR.privatize"):
        check_seed(-1, owner="GRR.privatize")
    with pytest.raises(InvalidParameterError, match="'rng' parameter of a helper"):
        check_seed(-1)
