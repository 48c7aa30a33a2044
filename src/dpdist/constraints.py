"""Parameter and value rules for protocol authors.

A :class:`~dpdist.local.LocalProtocol` subclass declares its parameters in a
``_constraints`` table of these rules; the constructor validates against it and
the conformance kit (:mod:`dpdist.testing`) generates its bad-parameter checks
from each rule's ``invalid_examples``.  A function declares the rules of its
arguments with :func:`validate_params`, over the same rules.  ``check_integer_values`` and
``check_real_values`` turn users' values into arrays or raise the errors the kit
expects (:class:`~dpdist.errors.InvalidValueTypeError`,
:class:`~dpdist.errors.OutOfDomainError`).
"""

from ._validation import (
    Boolean,
    Bounds,
    Bytes,
    CallableRule,
    Constraint,
    Described,
    InstanceOf,
    Integer,
    Interval,
    Items,
    NamedInstanceOf,
    Optional,
    Options,
    PathLike,
    Text,
    TupleOf,
    check_integer_values,
    check_real_values,
    validate_params,
)

__all__ = [
    "Constraint",
    "Interval",
    "Integer",
    "Options",
    "Boolean",
    "Bounds",
    "Optional",
    "Described",
    "InstanceOf",
    "NamedInstanceOf",
    "Items",
    "TupleOf",
    "Text",
    "Bytes",
    "PathLike",
    "CallableRule",
    "validate_params",
    "check_integer_values",
    "check_real_values",
]
