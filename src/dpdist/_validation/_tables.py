"""Parameter tables: a dict of parameters or a function's arguments checked against their rules."""

from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar, cast

from ..errors import InvalidParameterError
from ._relations import Relation, check_relations
from ._rule import Constraint, check_param

__all__ = ["did_you_mean", "unknown_names_error", "check_params", "check_options", "ParameterTable", "PARAMETER_TABLES", "validate_params"]


#: Names other libraries use for dpdist's parameters (diffprivlib, pure-ldp, OpenDP): suggested when given.
_ALIASES = {"eps": "epsilon", "e": "epsilon", "d": "domain_size", "domain": "domain_size", "n_bins": "bins",
            "nbins": "bins", "num_bins": "bins", "range": "bounds", "data_range": "bounds", "seed": "rng",
            "random_state": "rng"}


def did_you_mean(name: str, allowed) -> str | None:
    """The allowed name ``name`` was probably meant to be (an alias or a close spelling), or None."""

    allowed = list(allowed)
    alias = _ALIASES.get(str(name).lower())
    if alias in allowed:
        return alias
    close = difflib.get_close_matches(str(name).lower(), allowed, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_names_error(owner: str, unknown, allowed, *, what: str = "parameter", note: str = "") -> InvalidParameterError:
    """The error for names not in ``allowed``, suggesting the name meant (``eps`` -> ``epsilon``)."""
    unknown = sorted(unknown)
    hints = [f"{guess!r} for {name!r}" for name in unknown if (guess := did_you_mean(name, allowed)) is not None]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    return InvalidParameterError(f"{owner} got unknown {what}(s) {unknown}{hint}; allowed: {sorted(allowed)}{note}.")


def check_params(owner: str, params: dict, constraints: dict[str, Constraint]) -> dict:
    """Validate ``params`` against ``constraints``; unknown names are rejected."""
    unknown = sorted(set(params) - set(constraints))
    if unknown:
        raise unknown_names_error(owner, unknown, constraints)
    return {name: check_param(owner, name, value, constraints[name]) for name, value in params.items()}


def check_options(owner: str, options: dict, table: dict[str, Constraint], delegate: str | None = None) -> dict:
    """Validate keyword options against their declared ``table``; return them with coerced values.

    An option not in the table raises :class:`~dpdist.errors.InvalidParameterError`
    listing the allowed ones, unless ``delegate`` names an option that is given
    (not None): the options outside the table then go to it, which checks them
    itself (the frequency oracles' ``deconvolve``).  ``None`` means "the default"
    for every option and is passed through unchecked.
    """
    unknown = sorted(set(options) - set(table))
    if unknown and (delegate is None or options.get(delegate) is None):
        if not table:
            raise InvalidParameterError(f"{owner} got unknown option(s) {unknown}; allowed: none.")
        raise unknown_names_error(owner, unknown, table, what="option")
    return {
        name: check_param(owner, name, value, table[name]) if name in table and value is not None else value
        for name, value in options.items()
    }


Function = TypeVar("Function", bound=Callable[..., Any])


@dataclass(frozen=True)
class ParameterTable:
    """The rules a function states for its arguments (:func:`validate_params`): what the generated tests read.

    ``function`` is the checked function (as callers call it); ``method`` says its first parameter is ``self`` or
    ``cls``; ``defaults`` holds the defaults of the parameters the table names (a default must pass its rule);
    ``module`` the module that states the table (a re-exported class's ``__module__`` may name its package);
    ``relations`` the rules between its parameters.
    """

    function: Callable[..., Any]
    owner: str
    rules: dict[str, Constraint]
    method: bool
    defaults: dict[str, Any] = field(default_factory=dict)
    module: str = ""
    relations: tuple[Relation, ...] = ()


#: Every table stated with :func:`validate_params`, in the order the modules were imported.
PARAMETER_TABLES: list[ParameterTable] = []


def _arguments_binder(signature: inspect.Signature) -> Callable[[tuple, dict], dict]:
    """``(args, kwargs) -> every argument by name, defaults filled in``: ``bind_partial`` + ``apply_defaults``'s
    ``arguments``, without their cost on the common call (the relations of a table are checked on every call, and
    some tables are called per estimate): positional arguments within the named ones and keywords that name
    parameters take a dict copy; anything else (``*args``, ``**kwargs``, a positional-only name given by keyword,
    too many arguments) goes through ``bind_partial``, which also raises its ``TypeError``."""
    parameters = list(signature.parameters.values())
    kinds = {parameter.kind for parameter in parameters}
    positional = [parameter.name for parameter in parameters
                  if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    keywords = frozenset(parameter.name for parameter in parameters
                         if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))
    defaults = {parameter.name: parameter.default for parameter in parameters
                if parameter.default is not inspect.Parameter.empty}
    simple = not kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}

    def bind(args: tuple, kwargs: dict) -> dict:
        if simple and len(args) <= len(positional) and keywords.issuperset(kwargs) \
                and not any(name in kwargs for name in positional[:len(args)]):
            bound = dict(defaults)
            bound.update(zip(positional, args))
            bound.update(kwargs)
            return bound
        slow = signature.bind_partial(*args, **kwargs)
        slow.apply_defaults()
        return slow.arguments

    return bind


def validate_params(rules: dict[str, Constraint], *, owner: str | None = None, relations: Sequence[Relation] = (),
                    owner_argument: str | None = None) -> Callable[[Function], Function]:
    """Check the arguments named in ``rules`` against their constraints before the function runs.

    An argument that breaks its rule raises the rule's error (:class:`~dpdist.errors.InvalidParameterError`, or
    :class:`~dpdist.errors.InvalidPrivacyParameterError` for a privacy parameter) naming the parameter, the value and
    what is allowed, as :func:`check_param` words it; an argument that passes reaches the function as the rule
    returns it (``Interval``: a float, ``Integer``: an int, ``Bytes``: bytes).  An argument left to its default is not
    checked (the generated tests check that every default passes its rule).  ``owner`` names the function in
    messages (default: its qualified name, a class for ``__init__``); on a class (a dataclass, say) the table is its
    ``__init__``'s, and the class is returned.  The table is recorded in
    :data:`PARAMETER_TABLES`, from which ``tests/package/test_parameter_tables.py`` generates the bad-input tests, as
    the conformance suite does from protocols' ``_constraints``.  ``relations`` (:class:`Relation`) are checked next,
    over the arguments given and the defaults of the others; ``tests/package/test_parameter_relations.py`` calls the
    function with each relation's counterexample.  A helper that checks its caller's arguments (``check_rng``) names
    the caller: ``owner_argument`` is the keyword argument that holds the caller's name (its default otherwise).
    """

    def decorate(function: Function) -> Function:
        if isinstance(function, type):  # a class (a dataclass, say): its __init__, under the class's name
            cls: Any = function
            cls.__init__ = validate_params(rules, owner=owner or cls.__name__, relations=relations)(cls.__init__)
            table = PARAMETER_TABLES[-1]
            PARAMETER_TABLES[-1] = ParameterTable(cls, table.owner, table.rules, False, table.defaults, cls.__module__,
                                                  table.relations)
            return cast(Function, cls)
        parameters = inspect.signature(function).parameters
        names = list(parameters)
        unknown = sorted(set(rules) - set(names))
        if unknown:
            raise TypeError(f"validate_params of {function.__qualname__} names no parameter of it: {unknown}")
        shown = owner or function.__qualname__.removesuffix(".__init__")
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        named_at = None
        if owner_argument is not None:  # the caller's name: that argument, else its default
            if parameters[owner_argument].default is not inspect.Parameter.empty:
                shown = parameters[owner_argument].default
            named_at = names.index(owner_argument) if parameters[owner_argument].kind in positional else None
        checks = tuple(
            (name, names.index(name) if parameters[name].kind in positional else None, rule)
            for name, rule in rules.items()
        )

        arguments = _arguments_binder(inspect.signature(function))

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            named = shown
            if named_at is not None and named_at < len(args):
                named = args[named_at]
            elif owner_argument is not None:
                named = kwargs.get(owner_argument, shown)
            for name, position, rule in checks:
                if name in kwargs:
                    kwargs[name] = check_param(named, name, kwargs[name], rule)
                elif position is not None and position < len(args):
                    args = (*args[:position], check_param(named, name, args[position], rule), *args[position + 1 :])
            if relations:
                check_relations(named, arguments(args, kwargs), relations)
            return function(*args, **kwargs)

        defaults = {name: parameters[name].default for name in rules
                    if parameters[name].default is not inspect.Parameter.empty}
        PARAMETER_TABLES.append(ParameterTable(checked, shown, dict(rules), names[:1] in (["self"], ["cls"]), defaults,
                                               function.__module__, tuple(relations)))
        return checked  # type: ignore[return-value]  # functools.wraps keeps the signature; mypy sees a new callable

    return decorate
