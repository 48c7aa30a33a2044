"""Parameter constraints as data, checked once in constructors (cf. scikit-learn).

A protocol declares ``_constraints = {"epsilon": Interval(0, inf, ...), ...}``;
:func:`check_params` validates a dict of parameters against it and raises a
:mod:`dpdist.errors` exception that names the parameter, the value and the rule.
The same table drives the conformance suite's bad-input tests
(:meth:`Constraint.invalid_examples`).  A function states the rules of its
arguments the same way, with :func:`validate_params` (scikit-learn's
``validate_params``): the table is checked before the function runs, and
``tests/package/test_parameter_tables.py`` generates every table's bad-input tests.

The rules live by kind: ``_rule`` (the base and one parameter's check), ``_scalars``,
``_domains``, ``_combinators``, ``_objects``, ``_arrays``, ``_relations`` (rules between
parameters), ``_shared`` (the ranges several modules check, the allocation cap), ``_tables``
(``validate_params``, ``check_params``) and ``_values`` (the values a protocol is given).
"""

from __future__ import annotations

from ._arrays import Channel, DType, NumericRows, Probabilities, RealArray, Vector, Weights
from ._combinators import AllOf, Described, Distinct, OneOf, Optional, ShownBy
from ._domains import BOUNDS_CELLS, Alphabet, Bounds, ItemIds, Labels, Span, label_list
from ._objects import (
    Admits,
    AttributeIn,
    Bytes,
    CallableRule,
    Dict,
    ExistingFile,
    HasMethod,
    HttpUrl,
    InstanceOf,
    Items,
    MappingOf,
    NamedInstanceOf,
    PathLike,
    Present,
    RandomSource,
    Registered,
    SQLiteFile,
    sqlite_name_problem,
    Text,
    Token,
    TupleOf,
)
from ._relations import (
    Below,
    Differs,
    Either,
    Given,
    Implies,
    NoneWhen,
    PowerOf,
    Relation,
    SameSize,
    Satisfies,
    check_relations,
)
from ._rule import Constraint, Wrapper, check_param, refuses
from ._scalars import Boolean, Even, Integer, Interval, Options, PowerOfTwo, Prime, is_prime
from ._shared import (
    CENTRAL_EPSILON,
    DELTA,
    DOMAIN_SIZE,
    EPSILON,
    LOCAL_EPSILON,
    MAX_ALLOCATION_BYTES,
    MAX_POPULATION,
    POPULATION,
    check_allocation,
    population,
)
from ._tables import (
    PARAMETER_TABLES,
    ParameterTable,
    check_options,
    check_params,
    did_you_mean,
    unknown_names_error,
    validate_params,
)
from ._values import (NOT_SHOWN, check_integer_values, check_real_values, check_values_given, clip_real_values,
                      refused_values, wrap_real_values)

__all__ = [
    "Constraint",
    "Wrapper",
    "refuses",
    "check_param",
    "Interval",
    "Integer",
    "PowerOfTwo",
    "is_prime",
    "Prime",
    "Options",
    "Boolean",
    "Even",
    "BOUNDS_CELLS",
    "Bounds",
    "Labels",
    "label_list",
    "ItemIds",
    "Alphabet",
    "Span",
    "Optional",
    "Described",
    "OneOf",
    "Distinct",
    "AllOf",
    "ShownBy",
    "InstanceOf",
    "Items",
    "TupleOf",
    "NamedInstanceOf",
    "Text",
    "Bytes",
    "Dict",
    "PathLike",
    "SQLiteFile",
    "sqlite_name_problem",
    "CallableRule",
    "ExistingFile",
    "RandomSource",
    "Present",
    "Admits",
    "Token",
    "MappingOf",
    "HasMethod",
    "HttpUrl",
    "AttributeIn",
    "Registered",
    "Vector",
    "Probabilities",
    "DType",
    "RealArray",
    "Weights",
    "Channel",
    "NumericRows",
    "Relation",
    "Below",
    "SameSize",
    "Either",
    "NoneWhen",
    "Implies",
    "check_relations",
    "Given",
    "PowerOf",
    "Differs",
    "Satisfies",
    "LOCAL_EPSILON",
    "CENTRAL_EPSILON",
    "EPSILON",
    "DELTA",
    "DOMAIN_SIZE",
    "POPULATION",
    "MAX_POPULATION",
    "population",
    "MAX_ALLOCATION_BYTES",
    "check_allocation",
    "did_you_mean",
    "unknown_names_error",
    "check_params",
    "check_options",
    "ParameterTable",
    "PARAMETER_TABLES",
    "validate_params",
    "check_integer_values",
    "check_values_given",
    "check_real_values",
    "wrap_real_values",
    "clip_real_values",
    "refused_values",
    "NOT_SHOWN",
]
