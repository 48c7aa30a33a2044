"""Reading a result back from its JSON: the one reader behind every result's ``from_dict``.

A result's JSON (``to_dict``) is a statement: what was released, how private, how precise.  A document
read back says exactly that again, or it is refused, by the name of the field at fault, with
:class:`~dpdist.errors.MalformedDocumentError`.  Reading takes three steps:

1. :func:`check_document`: the document against its schema (JSON Schema's vocabulary, the part results
   use: ``type``, ``const``, ``enum``, ``required``, ``properties``, ``additionalProperties``, ``items``,
   ``minItems``/``maxItems``, ``minimum``/``maximum`` and their exclusive forms, ``$ref: "#"``, ``allOf`` of
   ``if``/``then``; and one keyword of dpdist's, ``equalLengths``: lists of an object that hold one entry each
   per item).  A
   ``"number"`` is finite: JSON has no NaN or infinity, and dpdist writes ``null`` for them, so a NaN in a
   document is a corruption, not a value.  A boolean is not a number, nor an integer.
2. The result is built from the fields it is made of (its constructor's own checks apply; what they
   refuse is refused as the document's fault).
3. :func:`same_document`: the result is written again and every field it writes is compared with the
   document's.  A field that was dropped, or a number the other fields contradict (a summary, an
   interval, a CDF edited by hand or by a bit flip), is named; fields the reader does not know are left
   alone (a newer dpdist may add fields within one ``schema`` version).

Classes that are dataclasses and write their fields under their own names read through
:func:`read_dataclass`, whose schema is their annotations: a field added to such a class is read (and
checked) with no further code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import types
import typing
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ._number_lists import follow_number_schema, plain_list, plain_numbers, same_numbers
from .errors import DPDistError, MalformedDocumentError

__all__ = ["check_document", "same_document", "read_dataclass", "omitted_at_default", "read_value", "read_numbers",
           "read_part",
           "constructing", "refused", "describe_value", "ABSENT"]

#: What a ``nested`` reader of :func:`read_dataclass` returns for a field it leaves to the annotation
ABSENT: Any = object()

#: How close a number read back must be to the document's (the result's own arithmetic, e.g. a CDF summed again
#: from its probabilities, may differ in the last bits; an edit does not hide in 1e-9)
RELATIVE, ABSOLUTE = 1e-9, 1e-12


def describe_value(value: Any) -> str:
    """A value as an error quotes it: its repr, cut at 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def refused(owner: str, path: str, what: str) -> MalformedDocumentError:
    """The error of a document refused at ``path``: ``"<owner>: the document's 'path' <what>."``."""
    where = f"the document's {path!r}" if path else "the document"
    return MalformedDocumentError(f"{owner}: {where} {what}.")


# ---------------------------------------------------------------------- 1. the schema
_TYPES: dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, (bool, np.bool_)),
    "integer": lambda value: isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)),
    "number": lambda value: isinstance(value, (int, float, np.integer, np.floating))
    and not isinstance(value, (bool, np.bool_)),
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, (list, tuple)),
    "object": lambda value: isinstance(value, Mapping),
}


def check_document(document: Any, schema: Mapping[str, Any], owner: str, path: str = "",
                   root: Mapping[str, Any] | None = None) -> None:
    """Refuse ``document`` where it does not follow ``schema`` (the subset of the module docstring), naming the
    path of the first field at fault (``"guarantee.epsilon"``, ``"intervals[0].low[3]"``)."""
    root = schema if root is None else root
    if schema.get("$ref") == "#":
        check_document(document, root, owner, path, root)
        return
    allowed = schema.get("type")
    if allowed is not None:
        names = [allowed] if isinstance(allowed, str) else list(allowed)
        if not any(_TYPES[name](document) for name in names):
            raise refused(owner, path, f"must be {_type_words(names)}. Got {describe_value(document)}")
        if _TYPES["number"](document) and not math.isfinite(float(document)):
            raise refused(owner, path, "must be a finite number (JSON has no NaN or infinity: dpdist writes null "
                                       f"for a missing or non-finite value). Got {describe_value(document)}")
    if "const" in schema and document != schema["const"]:
        raise refused(owner, path, f"must be {schema['const']!r}. Got {describe_value(document)}")
    if "enum" in schema and document not in schema["enum"]:
        raise refused(owner, path, f"must be one of {list(schema['enum'])}. Got {describe_value(document)}")
    if _TYPES["number"](document):
        _check_limits(float(document), schema, owner, path)
    if isinstance(document, Mapping):
        _check_object(document, schema, owner, path, root)
        _check_lengths(document, schema.get("equalLengths", ()), owner, path)
    if isinstance(document, (list, tuple)):
        for key, fails, words in (("minItems", lambda n, b: n < b, "at least"), ("maxItems", lambda n, b: n > b, "at most")):
            if key in schema and fails(len(document), schema[key]):
                raise refused(owner, path, f"must hold {words} {schema[key]} entries. Got {len(document)}")
    if isinstance(document, (list, tuple)) and "items" in schema and not follow_number_schema(document, schema["items"]):
        for index, item in enumerate(document):
            check_document(item, schema["items"], owner, f"{path}[{index}]", root)
    for part in schema.get("allOf", ()):
        if "if" in part:
            if _follows(document, part["if"], root):
                check_document(document, part.get("then", {}), owner, path, root)
        else:
            check_document(document, part, owner, path, root)


def _type_words(names: list[str]) -> str:
    words = {"null": "null", "boolean": "true or false", "integer": "an integer", "number": "a number",
             "string": "a string", "array": "a list", "object": "an object"}
    return " or ".join(words[name] for name in names)


def _check_limits(value: float, schema: Mapping[str, Any], owner: str, path: str) -> None:
    for key, fails, words in (("minimum", lambda v, b: v < b, ">="), ("maximum", lambda v, b: v > b, "<="),
                              ("exclusiveMinimum", lambda v, b: v <= b, ">"),
                              ("exclusiveMaximum", lambda v, b: v >= b, "<")):
        if key in schema and fails(value, schema[key]):
            raise refused(owner, path, f"must be {words} {schema[key]!r}. Got {describe_value(value)}")


def _check_object(document: Mapping, schema: Mapping[str, Any], owner: str, path: str, root: Mapping) -> None:
    for key in document:
        if not isinstance(key, str):
            raise refused(owner, path, f"must have string keys (a JSON object). Got the key {describe_value(key)}")
    for name in schema.get("required", ()):
        if name not in document:
            raise refused(owner, _join(path, name), "is missing")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    for name, value in document.items():
        if name in properties:
            check_document(value, properties[name], owner, _join(path, name), root)
        elif extra is False:
            raise refused(owner, _join(path, name), "is not a field of this document")
        elif isinstance(extra, Mapping):
            check_document(value, extra, owner, _join(path, name), root)


def _check_lengths(document: Mapping, names: Any, owner: str, path: str) -> None:
    """``equalLengths`` (a keyword of dpdist's, ignored by other validators): the lists ``names`` of an object, where
    present and not null, have one length (a frequency per item, a standard error per frequency)."""
    present = [name for name in names if isinstance(document.get(name), (list, tuple))]
    for name in present[1:]:
        if len(document[name]) != len(document[present[0]]):
            raise refused(owner, _join(path, name), f"has {len(document[name])} entries where "
                                                    f"{_join(path, present[0])!r} has {len(document[present[0]])}: "
                                                    "one per item")


def _follows(document: Any, schema: Mapping[str, Any], root: Mapping) -> bool:
    try:
        check_document(document, schema, "", "", root)
    except MalformedDocumentError:
        return False
    return True


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# ---------------------------------------------------------------------- 3. the same statement
def same_document(written: Any, document: Any, owner: str, path: str = "") -> None:
    """Refuse ``document`` where it differs from ``written`` (what the result read from it writes again).

    Every field of ``written`` must be in ``document`` with the same value (numbers within
    :data:`RELATIVE` / :data:`ABSOLUTE`, ``null`` as ``null``); fields of ``document`` that ``written`` lacks
    are not compared (fields a newer dpdist adds, or a service's additions around an estimate).
    """
    if isinstance(written, Mapping):
        if not isinstance(document, Mapping):
            raise refused(owner, path, f"must be an object. Got {describe_value(document)}")
        for name, value in written.items():
            if name not in document:
                raise refused(owner, _join(path, name), "is missing")
            same_document(value, document[name], owner, _join(path, name))
        return
    if isinstance(written, (list, tuple, np.ndarray)):
        if not isinstance(document, (list, tuple)):
            raise refused(owner, path, f"must be a list. Got {describe_value(document)}")
        if len(document) != len(written):
            raise refused(owner, path, f"has {len(document)} entries where the result its other fields make has "
                                       f"{len(written)}: a document altered after it was written")
        if same_numbers(written, document, RELATIVE, ABSOLUTE):  # a list of numbers at once (else: entry by entry)
            return
        for index, (value, given) in enumerate(zip(written, document)):
            same_document(value, given, owner, f"{path}[{index}]")
        return
    if not _same_value(written, document):
        raise refused(owner, path, f"is {describe_value(document)} where the result its other fields make states "
                                   f"{describe_value(written)}: a document altered after it was written")


def _same_value(written: Any, given: Any) -> bool:
    boolean, number = _TYPES["boolean"], _TYPES["number"]
    if boolean(written) or boolean(given):
        return boolean(written) and boolean(given) and bool(written) == bool(given)
    if number(written) and number(given):
        a, b = float(written), float(given)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=RELATIVE, abs_tol=ABSOLUTE)
    return type(written) is type(given) and written == given


# ---------------------------------------------------------------------- dataclasses
#: fields a class's ``to_dict`` leaves out at their default (besides those whose default is ``None``): a document may
#: lack them (a guarantee per record has no ``unit``, as every guarantee written before units)
_OMITTED_AT_DEFAULT: dict[type, tuple[str, ...]] = {}


def omitted_at_default(cls: type, *names: str) -> type:
    """Declare that ``cls.to_dict`` leaves the fields ``names`` out at their default (:func:`read_dataclass`)."""
    _OMITTED_AT_DEFAULT[cls] = names
    return cls


def _omitted(cls: type, name: str) -> bool:
    return any(name in _OMITTED_AT_DEFAULT.get(klass, ()) for klass in cls.__mro__)


def read_dataclass(cls: type, document: Any, *, renamed: Mapping[str, str] | None = None,
                   types_of: Mapping[str, Any] | None = None, nested: Callable[[str, Any], Any] | None = None,
                   null: float = math.nan, owner: str | None = None) -> Any:
    """The dataclass ``cls`` read from ``document`` (its ``to_dict``), or :class:`MalformedDocumentError`.

    Every field of the constructor but those whose names start with ``_`` (internals no document holds) is
    read from the document's key of the same name (``renamed``: field -> key), as its annotation says
    (``types_of`` overrides an annotation that says too little, e.g. a bare ``tuple``): a number
    (``null`` for a ``float`` is NaN, dpdist's JSON for a non-finite one), an integer, a string, a
    boolean, a list (as a tuple or an array), an object, a :class:`dpdist.privacy.PrivacyGuarantee` or
    another result (through its own ``from_dict``).  ``null`` is what a ``null`` means for a ``float``
    field (NaN; ``inf`` for a class whose JSON writes only infinities as ``null``).  A field whose default
    is ``None`` may be absent (the JSON leaves such fields out), as may a field declared with
    :func:`omitted_at_default`.  ``nested(name, document)`` reads what a
    field's annotation cannot say (a value under a key of its own; :data:`ABSENT` for the others).  The
    result is then written again (``to_dict``) and compared with the document (:func:`same_document`).
    """
    owner = owner or f"{cls.__name__}.from_dict"
    if not isinstance(document, Mapping):
        raise refused(owner, "", f"must be a JSON object (a dict). Got {type(document).__name__}")
    renamed, types_of = dict(renamed or {}), dict(types_of or {})
    hints = _hints(cls)
    values = {}
    for item in dataclasses.fields(cls):
        if not item.init or item.name.startswith("_"):
            continue
        key = renamed.get(item.name, item.name)
        if nested is not None and (value := nested(item.name, document)) is not ABSENT:
            values[item.name] = value
            continue
        if key not in document:
            if item.default is None or (item.default is not dataclasses.MISSING and _omitted(cls, key)):
                continue
            raise refused(owner, key, "is missing")
        values[item.name] = read_value(types_of.get(item.name, hints.get(item.name, Any)), document[key], owner, key,
                                       null)
    with constructing(owner):
        result = cls(**values)
        again = result.to_dict() if callable(getattr(result, "to_dict", None)) else None
    if again is not None:  # (a part without a JSON of its own, e.g. an audit's stage, is compared with its whole)
        same_document(again, document, owner)
    return result


@contextlib.contextmanager
def constructing(owner: str) -> Iterator[None]:
    """Around building a result from a document's fields: what its constructor refuses (a dpdist error, or a
    ``TypeError``/``ValueError`` of NumPy on a value of another shape) is the document's fault, refused with
    :class:`MalformedDocumentError` (the constructor's message kept); a refusal of the reader itself passes."""
    try:
        yield
    except MalformedDocumentError:
        raise
    except DPDistError as error:
        raise MalformedDocumentError(f"{owner}: the document's fields do not make a result: {error}") from None
    except (TypeError, ValueError, KeyError, IndexError, ArithmeticError) as error:
        raise MalformedDocumentError(
            f"{owner}: the document's fields do not make a result ({type(error).__name__}: {error})") from None


def _hints(cls: type) -> dict[str, Any]:
    """The annotations of ``cls``'s fields as types, each resolved in the module its class was written in (a public
    class may name a package as its ``__module__``, e.g. ``dpdist.estimates``, whose names are not the file's)."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        namespace = _namespace(klass)
        for name, text in vars(klass).get("__annotations__", {}).items():
            hints[name] = eval(text, namespace) if isinstance(text, str) else text  # noqa: S307 (our own source)
    return hints


def _namespace(klass: type) -> dict[str, Any]:
    """The globals of the file ``klass`` was written in: those of a function of its body."""
    for value in vars(klass).values():
        function = getattr(value, "__func__", value)
        while hasattr(function, "__wrapped__"):  # a checked method (validate_params): the function written here
            function = function.__wrapped__
        if isinstance(function, types.FunctionType) and function.__qualname__.startswith(klass.__qualname__ + "."):
            return function.__globals__
    return vars(sys.modules[klass.__module__])


def read_value(kind: Any, value: Any, owner: str, path: str, null: float = math.nan) -> Any:
    """``value`` of the document read as the type ``kind`` (an annotation), or refused naming ``path`` (``null``:
    what a ``null`` is for a ``float``, :func:`read_dataclass`)."""
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, getattr(types, "UnionType", typing.Union)):
        options = [option for option in arguments if option is not type(None)]
        if value is None and len(options) < len(arguments):
            return None
        if len(options) == 1:
            return read_value(options[0], value, owner, path, null)
        for option in options:
            try:
                return read_value(option, value, owner, path, null)
            except MalformedDocumentError:
                continue
        raise refused(owner, path, f"must be one of {kind}. Got {describe_value(value)}")
    if kind is Any or kind is object:
        _check_json(value, owner, path)
        return value
    if kind is float:
        if value is None:
            return null  # dpdist writes null for a non-finite number
        check_document(value, {"type": "number"}, owner, path)
        return float(value)
    if kind is int:
        check_document(value, {"type": "integer"}, owner, path)
        return int(value)
    if kind is str:
        check_document(value, {"type": "string"}, owner, path)
        return value
    if kind is bool:
        check_document(value, {"type": "boolean"}, owner, path)
        return bool(value)
    if kind is np.ndarray:
        return read_numbers(value, owner, path)
    if origin in (tuple, list) or kind in (tuple, list):
        check_document(value, {"type": "array"}, owner, path)
        items = arguments[0] if arguments and (len(arguments) == 1 or arguments[1] is Ellipsis) else Any
        plain = _read_plain(items, value, null)
        if plain is not None:
            return tuple(plain) if (origin or kind) is tuple else plain
        read = [read_value(items, item, owner, f"{path}[{index}]", null) for index, item in enumerate(value)]
        return tuple(read) if (origin or kind) is tuple else read
    if origin is dict or kind is dict:
        check_document(value, {"type": "object"}, owner, path)
        items = arguments[1] if len(arguments) == 2 else Any
        return {name: read_value(items, item, owner, _join(path, name), null) for name, item in value.items()}
    reader = getattr(kind, "from_dict", None)
    if isinstance(kind, type) and callable(reader):
        return read_part(reader, value, owner, path)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return read_part(lambda document: read_dataclass(kind, document, null=null), value, owner, path)
    raise refused(owner, path, f"has a type this reader does not know ({kind!r}; a bug)")


def _read_plain(items: Any, value: Any, null: float) -> list | None:
    """A list of ``float``, ``float | None``, ``int`` or ``str`` read at once (:func:`~._number_lists.plain_list`),
    or ``None``: the list is read entry by entry."""
    if items in (float, int, str):
        return plain_list(items, value, null)
    if typing.get_origin(items) in (typing.Union, getattr(types, "UnionType", typing.Union)) \
            and set(typing.get_args(items)) == {float, type(None)}:
        return plain_list(float, value, None)
    return None


def read_part(reader: Callable[[Any], Any], value: Any, owner: str, path: str) -> Any:
    """A part of a document read by its own reader (a nested result's ``from_dict``), a refusal named under
    ``path`` of the whole."""
    try:
        return reader(value)
    except MalformedDocumentError as error:
        message = str(error).split(": ", 1)[-1]
        raise MalformedDocumentError(f"{owner}: in {path!r}, {message}") from None


def read_numbers(value: Any, owner: str, path: str) -> np.ndarray:
    """A list of numbers (``null``: a non-finite one, NaN) as a float array, or refused naming ``path``."""
    check_document(value, {"type": "array"}, owner, path)
    plain = plain_numbers(value)
    if plain is not None:
        return plain
    out = np.empty(len(value), dtype=np.float64)
    for index, item in enumerate(value):
        if item is None:
            out[index] = math.nan
            continue
        check_document(item, {"type": "number"}, owner, f"{path}[{index}]")
        out[index] = float(item)
    return out


def _check_json(value: Any, owner: str, path: str) -> None:
    """A free JSON value (an ``Any`` field: a witness, a config): no NaN or infinity anywhere in it."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            _check_json(item, owner, _join(path, str(name)))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json(item, owner, f"{path}[{index}]")
    elif _TYPES["number"](value) and not math.isfinite(float(value)):
        raise refused(owner, path, "must be a finite number (JSON has no NaN or infinity: dpdist writes null for "
                                   f"a missing or non-finite value). Got {describe_value(value)}")
    elif not (value is None or isinstance(value, (str, bool, np.bool_)) or _TYPES["number"](value)):
        raise refused(owner, path, f"must be a JSON value. Got {type(value).__name__}")
