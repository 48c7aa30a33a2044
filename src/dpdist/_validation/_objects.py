"""Rules of objects: instances, items and tuples of them, text, tokens, bytes, dicts and mappings, paths,
callables, files, random sources, names of a registry, objects with a method or an attribute, anything given."""

from __future__ import annotations

import importlib
import os
import pathlib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar
from urllib.parse import urlsplit

import numpy as np

from .._redact import redacted_repr, redacted_url
from ._rule import Constraint, refuses

__all__ = ["InstanceOf", "Items", "TupleOf", "NamedInstanceOf", "Text", "Bytes", "Dict", "PathLike", "SQLiteFile", "CallableRule", "ExistingFile", "RandomSource", "Present", "Admits", "Token", "MappingOf", "HasMethod", "AttributeIn", "Registered", "HttpUrl", "sqlite_name_problem"]


@dataclass(frozen=True)
class RandomSource(Constraint):
    """Where randomness comes from: None (the CSPRNG), an int seed >= 0, a SeedSequence or a Generator."""

    def check(self, value: Any) -> Any:
        if value is None or isinstance(value, (np.random.SeedSequence, np.random.Generator)):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError
        return int(value)

    def describe(self) -> str:
        return "None, an int seed >= 0, a numpy SeedSequence or a numpy Generator"

    def invalid_examples(self) -> list:
        return [-1, 1.5, "seed"]


class _Absent:
    """A value of no type a rule names (an invalid example of :class:`InstanceOf`)."""

    def __repr__(self) -> str:
        return "<an object>"


@dataclass(frozen=True)
class InstanceOf(Constraint):
    """An instance of one of ``types`` (a class, or a tuple of classes), described as ``what``; a refusal shows the
    value's type only, or a string's text too when ``shows_text`` (a name given where an object was meant)."""

    types: Any
    what: str
    shows_text: bool = False

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in _as_tuple(self.types)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), *(["text"] if not isinstance("text", self.types) else [])]

    def shown(self, value: Any) -> str:
        """The type only: the repr of an object can be its whole (private) content."""
        if self.shows_text and isinstance(value, str):
            return f"the str {value!r:.200}"
        return type(value).__name__


def _as_tuple(types: Any) -> tuple:
    return types if isinstance(types, tuple) else (types,)


@dataclass(frozen=True)
class Items(Constraint):
    """At least ``min_length`` items, each satisfying ``item`` (any item when None), described as ``what``: a list, a
    tuple, a 1-D array or another iterable (not a str, bytes or mapping; a generator is read once); returned as a tuple
    of the items as ``item`` returns them.  ``increasing``: each item above the one before (real items: a grid, a
    curve's abscissae)."""

    item: Constraint | None
    what: str
    min_length: int = 0
    increasing: bool = False

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(value, Iterable):
            raise ValueError
        items = tuple(value) if self.item is None else tuple(self.item.check(one) for one in value)  # an item the
        # rule refuses raises ValueError or TypeError
        if len(items) < self.min_length:
            raise ValueError
        if self.increasing and any(not before < after for before, after in zip(items, items[1:])):
            raise ValueError
        return items

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", 3, {"a": 1}]
        bad = [] if self.item is None else [one for one in self.item.invalid_examples() if one is not None][:1]
        out.extend([bad] if bad else [])
        if self.min_length:
            out.append([])
        if self.increasing:
            out.append([2.0, 1.0] * max(1, self.min_length))
        return [example for example in out if refuses(self, example)]

    def shown(self, value: Any) -> str:
        """The first item refused, as ``item`` shows it (a list of a thousand is not shown whole), else the value."""
        if isinstance(value, (list, tuple, np.ndarray)) and self.item is not None:
            for index, one in enumerate(value):
                try:
                    self.item.check(one)
                except (ValueError, TypeError):
                    return f"a {type(value).__name__} whose item {index} is {self.item.shown(one)}"
        return super().shown(value)


@dataclass(frozen=True)
class TupleOf(Constraint):
    """A pair, a triple, ...: exactly one item per rule of ``rules``, each satisfying its rule, described as ``what``;
    returned as a tuple of the items as their rules return them."""

    rules: tuple[Constraint, ...]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != len(self.rules):
            raise ValueError
        return tuple(rule.check(one) for rule, one in zip(self.rules, value))

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["text", 3, ()]
        for index, rule in enumerate(self.rules):  # one bad item at each place (None stands for the others)
            bad = [example for example in rule.invalid_examples() if example is not None][:1]
            out.extend([tuple(bad[0] if place == index else None for place in range(len(self.rules)))] if bad else [])
        return out


@dataclass(frozen=True)
class NamedInstanceOf(Constraint):
    """An instance of one of the classes ``names`` of the module ``module`` (an optional package's, say a
    ``cryptography`` key), of ``ndim`` dimensions when given (an array's), described as ``what``.  The module is not
    imported to state the rule: while its package is not imported no object of its classes exists, and every value is
    refused."""

    module: str
    names: tuple[str, ...]
    what: str
    ndim: int | None = None

    def check(self, value: Any) -> Any:
        if self.module.partition(".")[0] not in sys.modules:
            raise ValueError
        found = importlib.import_module(self.module)
        if not isinstance(value, tuple(getattr(found, name) for name in self.names)):
            raise ValueError
        if self.ndim is not None and getattr(value, "ndim", None) != self.ndim:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]

    def shown(self, value: Any) -> str:
        """The type only, as :class:`InstanceOf` (a key's repr may hold its numbers)."""
        return type(value).__name__


@dataclass(frozen=True)
class Text(Constraint):
    """A string; ``non_empty``, ``ascii`` (printable ASCII), ``min_length``, ``max_length`` and ``pattern`` (a
    regular expression the whole string matches; say what it means with :class:`Described`) narrow it."""

    non_empty: bool = True
    ascii: bool = False
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or (self.non_empty and not value) or len(value) < self.min_length:
            raise ValueError
        if self.ascii and not (value.isascii() and value.isprintable()):
            raise ValueError
        if self.max_length is not None and len(value) > self.max_length:
            raise ValueError
        if self.pattern is not None and re.fullmatch(self.pattern, value) is None:
            raise ValueError
        return value

    def describe(self) -> str:
        what = "a non-empty " if self.non_empty and not self.min_length else "a "
        what += "printable ASCII string" if self.ascii else "str"
        if self.min_length:
            what += f" of at least {self.min_length} characters"
        if self.max_length is not None:
            what += f" of at most {self.max_length} characters"
        return what + (f" matching {self.pattern!r}" if self.pattern is not None else "")

    def invalid_examples(self) -> list:
        out: list = [3, b"bytes"]
        if self.non_empty or self.min_length:
            out.append("")
        if self.ascii:
            out.append("\u00e9t\u00e9" * max(1, self.min_length))
        if self.min_length > 1:
            out.append("x" * (self.min_length - 1))
        if self.max_length is not None:
            out.append("x" * (self.max_length + 1))
        if self.pattern is not None:
            out.append(" \n")
        return out


@dataclass(frozen=True)
class Bytes(Constraint):
    """Bytes (``bytes``, ``bytearray`` or ``memoryview``), of exactly ``length`` when given; returned as ``bytes``."""

    length: int | None = None

    def check(self, value: Any) -> Any:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise ValueError
        value = bytes(value)
        if self.length is not None and len(value) != self.length:
            raise ValueError
        return value

    def describe(self) -> str:
        return "bytes" if self.length is None else f"{self.length} bytes"

    def shown(self, value: Any) -> str:
        """The length or the type only: bytes may be a key."""
        return f"{len(value)} bytes" if isinstance(value, (bytes, bytearray, memoryview)) else type(value).__name__

    def invalid_examples(self) -> list:
        out: list = ["text", 3]
        if self.length is not None:
            out.append(bytes(self.length + 1))
        return out


@dataclass(frozen=True)
class Dict(Constraint):
    """A dict (a JSON object), described as ``what``: with at least ``min_size`` entries, every key of ``required``,
    only keys of ``allowed`` (when given), and the value of each key named in ``values`` (``(key, rule)`` pairs)
    satisfying its rule.  A refusal shows the keys given, not the values."""

    what: str = "a dict"
    required: tuple[str, ...] = ()
    allowed: tuple[str, ...] | None = None
    min_size: int = 0
    values: tuple[tuple[str, Constraint], ...] = ()

    def check(self, value: Any) -> Any:
        if not isinstance(value, dict) or len(value) < self.min_size or not set(self.required) <= set(value):
            raise ValueError
        if self.allowed is not None and not set(value) <= set(self.allowed):
            raise ValueError
        for key, rule in self.values:
            if key in value:
                rule.check(value[key])
        return value

    def describe(self) -> str:
        parts = [f"the keys {list(self.required)}"] if self.required else []
        if self.allowed is not None:
            parts.append(f"no key but {list(self.allowed)}")
        if self.min_size:
            parts.append(f"at least {self.min_size} entr{'y' if self.min_size == 1 else 'ies'}")
        parts += [f"the {key!r} key {rule.describe()}" for key, rule in self.values]
        return self.what + (" with " + ", ".join(parts) if parts else "")

    def shown(self, value: Any) -> str:
        """The keys (those missing and those not allowed named), and the value of a key that breaks its rule of
        ``values`` (as that rule shows it); not the other values, which may be data."""
        if not isinstance(value, dict):
            return type(value).__name__
        shown = f"a dict with the keys {sorted(map(str, value))!r:.200}"
        missing = [key for key in self.required if key not in value]
        unknown = [] if self.allowed is None else sorted(str(key) for key in value if key not in self.allowed)
        if missing or unknown:
            return shown + " (" + "; ".join([*([f"missing {missing}"] if missing else []),
                                              *([f"unknown {unknown!r:.200}"] if unknown else [])]) + ")"
        for key, rule in self.values:
            try:
                if key in value:
                    rule.check(value[key])
            except (ValueError, TypeError):
                return f"{shown} whose {key!r} is {rule.shown(value[key])}"
        return shown

    def invalid_examples(self) -> list:
        out: list = ["text", [("key", 1)]]
        if self.required or self.min_size:
            out.append({})
        if self.allowed is not None:
            out.append({**dict.fromkeys(self.required, 0), "not_a_key": 1})
        out += [{**dict.fromkeys(self.required, 0), key: bad} for key, rule in self.values
                for bad in rule.invalid_examples()]
        return out


@dataclass(frozen=True)
class PathLike(Constraint):
    """The path of a file: a str or an ``os.PathLike`` (kept as given); with ``in_folder``, of no folder, in a folder
    that exists (a file to create or to open)."""

    in_folder: bool = field(default=False, kw_only=True)  # (a subclass's first field stays its first argument)

    def check(self, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)):
            raise ValueError
        text = os.fspath(value)  # an os.PathLike of bytes (or of nothing) names no file here either
        if not isinstance(text, str) or not text:
            raise ValueError
        if self.in_folder and _folder_problem(text) is not None:
            raise ValueError
        return value

    def describe(self) -> str:
        return "a path (a non-empty str or os.PathLike)" + (" in an existing folder, not a folder" if self.in_folder else "")

    def invalid_examples(self) -> list:
        here = os.path.dirname(os.path.abspath(__file__))
        return [3, "", b"bytes", *([here, os.path.join(here, "no-such-folder", "x.json")] if self.in_folder else [])]

    def shown(self, value: Any) -> str:
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
        problem = _folder_problem(text) if self.in_folder and isinstance(text, str) and text else None
        return super().shown(value) + (f" ({problem})" if problem is not None else "")


def _folder_problem(path: str) -> str | None:
    """Why no file can be created or opened at ``path`` (a folder, or in no folder); None: one can."""
    if os.path.isdir(path):
        return "a folder"
    folder = os.path.dirname(os.path.abspath(path))
    return None if os.path.isdir(folder) else f"{folder!r} is no folder"


#: ``scheme:`` at the start of a value: two characters at least (``C:\\x.sqlite`` names a Windows drive)
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):")
#: the start of libpq's ``key=value`` connection string (``host=db.example port=5432 user=alice password=...``)
_CONNINFO = re.compile(r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|sslpassword|connect_timeout|"
                       r"options|application_name|target_session_attrs)\s*=", re.IGNORECASE)


def sqlite_name_problem(text: str, schemes: tuple[str, ...] = ()) -> str | None:
    """Why ``text`` names no SQLite file to open as given (None when it does): empty or ``:memory:`` (an in-memory
    database), a SQLite URI filename (``file:...``: ``?mode=memory`` or ``file::memory:`` opens one), libpq's
    ``key=value`` string, or a URL of a scheme other than ``schemes`` (``postgresql:host`` without ``//``,
    ``sqlite://``): each of them SQLite would otherwise open, or create, as a file of that odd name."""
    stripped = text.strip()
    if stripped in ("", ":memory:") or stripped.startswith(":memory:?"):  # ?cache=shared: a file of that name
        return "an in-memory database, which would lose everything at exit"
    if stripped.lower().startswith("file:"):
        return "a SQLite URI filename (file:...), which may name an in-memory database: give the file's path"
    if _CONNINFO.match(text):
        return "libpq's key=value string: give a postgresql://user@host/database URL"
    scheme = _SCHEME.match(stripped)
    if scheme is not None and not stripped.lower().startswith(schemes):
        return f"a URL of scheme {scheme.group('scheme')!r}, not a file's path"
    return None


@dataclass(frozen=True)
class SQLiteFile(PathLike):
    """The path of a SQLite file that keeps what is written: not ``""`` nor ``":memory:"`` (SQLite opens either as a
    database of its own connection, empty to every other and gone at exit: a relay's queue or an issuer's store there
    fails at its first use and keeps nothing), described as ``what``."""

    what: str = "the path of a SQLite file"

    def check(self, value: Any) -> Any:
        super().check(value)
        text = os.fspath(value)
        if sqlite_name_problem(text) is not None:
            raise ValueError
        if os.path.isdir(text) or not os.path.isdir(os.path.dirname(os.path.abspath(text))):  # SQLite cannot open it
            raise ValueError
        return value

    def describe(self) -> str:
        return (f"{self.what} in an existing folder (not a folder, and not '' or ':memory:', an in-memory database that "
                "would lose everything at exit, nor a SQLite URI filename file:..., a URL or libpq's key=value string)")

    def invalid_examples(self) -> list:
        here = os.path.dirname(os.path.abspath(__file__))
        return [3, "", " ", ":memory:", ":memory:?cache=shared", b"bytes", here, os.path.join(here, "no-such-folder", "queue.sqlite"),
                "file:q.sqlite?mode=memory", "file::memory:?cache=shared", "FILE:q.sqlite", "sqlite:///q.sqlite",
                "postgresql:alice:pw@h", "host=h password=pw"]

    def shown(self, value: Any) -> str:
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
        if not isinstance(text, str):
            return super().shown(value)
        problem = sqlite_name_problem(text) if text.strip() else None  # '' says itself
        return redacted_repr(value) + (f" ({problem})" if problem is not None else "")


@dataclass(frozen=True)
class CallableRule(Constraint):
    """A callable, described as ``what``."""

    what: str = "a callable"

    def check(self, value: Any) -> Any:
        if not callable(value):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [3, "name"]


@dataclass(frozen=True)
class ExistingFile(Constraint):
    """The path of an existing file (a str or an ``os.PathLike``, kept as given), described as ``what``; with
    ``endings`` or ``containing``, of a kind its name says: its suffixes (``".csv.gz"`` of ``data.csv.gz``, in lower
    case) end with one of ``endings`` or hold one of ``containing``."""

    what: str = "the path of an existing file"
    endings: tuple[str, ...] = ()
    containing: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
            raise ValueError
        if not os.path.isfile(value):
            raise ValueError
        suffixes = "".join(pathlib.PurePath(os.fspath(value)).suffixes).lower()
        if (self.endings or self.containing) and not (
                suffixes.endswith(self.endings) or any(part in suffixes for part in self.containing)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        here = os.path.abspath(__file__)
        out: list = [3, "", os.path.join(os.path.dirname(here), "no-such-file.csv")]
        if self.endings or self.containing:
            out.append(here)  # a file that exists, of another kind (.py)
        return out

    def shown(self, value: Any) -> str:
        return f"{os.fspath(value)!r:.200}" if isinstance(value, (str, os.PathLike)) else type(value).__name__


@dataclass(frozen=True)
class Present(Constraint):
    """Any value but None, described as ``what`` (the data of a call, whose own checks read it next); a refusal shows
    the type only."""

    what: str

    def check(self, value: Any) -> Any:
        if value is None:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [None]

    def shown(self, value: Any) -> str:
        return type(value).__name__ if value is not None else "None"


@dataclass(frozen=True)
class Admits(Constraint):
    """An instance of ``types`` that ``reason`` admits, described as ``what``: ``reason(value)`` is None, or the reason
    the value is refused (a test stated for some protocols only, ``why_no_feasibility_test``).  A refusal shows the
    value's type, and the reason when it is of ``types``."""

    types: Any
    reason: Callable[[Any], "str | None"]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or self.reason(value) is not None:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]

    def shown(self, value: Any) -> str:
        if not isinstance(value, self.types):
            return type(value).__name__
        return f"{getattr(value, 'display_name', type(value).__name__)} ({self.reason(value)})"


@dataclass(frozen=True)
class Token(Constraint):
    """A secret sent in an HTTP header (``Authorization: Bearer ...``): a string of at least ``min_length`` printable
    ASCII characters (as header values must be) without surrounding spaces, described as ``what`` when given; a
    refusal shows its length only."""

    min_length: int = 1
    what: str = ""
    spaces: bool = False  # surrounding spaces allowed (an issuer's admin token always took them)

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or len(value) < self.min_length or (value != value.strip() and not self.spaces):
            raise ValueError
        if not (value.isascii() and value.isprintable()):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what or (f"a token of at least {self.min_length} printable ASCII characters, without surrounding "
                             "spaces")

    def shown(self, value: Any) -> str:
        return f"a str of {len(value)} characters" if isinstance(value, str) else f"a {type(value).__name__}"

    def invalid_examples(self) -> list:
        out: list = [3, None, "\u00e9" * max(1, self.min_length)]
        out += [""] if self.min_length else []
        out += ["x" * (self.min_length - 1)] if self.min_length > 1 else []
        return out + ([] if self.spaces else [" " + "x" * max(1, self.min_length)])


@dataclass(frozen=True)
class MappingOf(Constraint):
    """A mapping whose every key satisfies ``key`` and every value ``value`` (the value of a key named in ``named``,
    ``(key, rule)`` pairs, that key's rule instead), described as ``what``; returned as a new dict of the checked keys
    and values, or as given with ``as_given`` (values whose type is part of a result: an experiment's grid).  A
    refusal shows the keys, not the values (which may be secrets), and the key whose value is refused."""

    key: Constraint
    value: Constraint
    what: str
    named: tuple[tuple[str, Constraint], ...] = ()
    as_given: bool = False

    def _rule(self, key: Any) -> Constraint:
        return next((rule for name, rule in self.named if name == key), self.value)

    def check(self, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError
        checked = {self.key.check(key): self._rule(key).check(item) for key, item in value.items()}
        return value if self.as_given else checked

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        if not isinstance(value, Mapping):
            return type(value).__name__
        shown = f"a dict with the keys {sorted(map(str, value))!r:.200}"
        for key, item in value.items():
            if refuses(self.key, key):
                return f"{shown} whose key {key!r:.100} is refused"
            if refuses(self._rule(key), item):
                return f"{shown} whose {key!r:.100} is {self._rule(key).shown(item)}"
        return shown

    def invalid_examples(self) -> list:
        out: list = ["text", [("key", "value")]]
        good_value = next((example for example in ("value", 1, 1.0) if not refuses(self.value, example)), None)
        good_key = next((example for example in ("key", 1) if not refuses(self.key, example)), None)
        out += [{bad: good_value} for bad in self.key.invalid_examples()[:1] if _hashable(bad)]
        out += [{good_key: bad} for bad in self.value.invalid_examples()[:1]]
        out += [{name: bad} for name, rule in self.named for bad in rule.invalid_examples()[:1]]
        return [example for example in out if refuses(self, example)]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@dataclass(frozen=True)
class HasMethod(Constraint):
    """An object with a callable attribute ``name`` (a result with ``table()``), described as ``what``; a refusal
    shows the value's type only (its repr may be its whole content)."""

    name: str
    what: str

    def check(self, value: Any) -> Any:
        if not callable(getattr(value, self.name, None)):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def shown(self, value: Any) -> str:
        return type(value).__name__

    def invalid_examples(self) -> list:
        return [_Absent(), 3]


@dataclass(frozen=True)
class AttributeIn(Constraint):
    """An instance of ``types`` whose attribute ``attribute`` is one of ``values`` (a protocol of some names),
    described as ``what``."""

    types: Any
    attribute: str
    values: tuple
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.types) or getattr(value, self.attribute, None) not in self.values:
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [_Absent(), "text"]


@dataclass(frozen=True)
class Registered(Constraint):
    """A name of a registry that may grow while the program runs (registered datasets, methods): one of ``names()``,
    described as ``what`` followed by the names registered when a value is refused."""

    names: Callable[[], Iterable[str]]
    what: str

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in set(self.names()):
            raise ValueError
        return value

    def describe(self) -> str:
        return f"{self.what}: one of {sorted(self.names())}"

    def invalid_examples(self) -> list:
        return ["not-a-registered-name", 3]


#: a control character in a URL, raw or percent-encoded
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f]|%(?:[01][0-9A-Fa-f]|7[Ff])")
#: a ``;name=value`` parameter of a URL's path
_PATH_PARAMETER = re.compile(r";[^/]*=")
#: a host as RFC 3986 spells one (a name, an IPv4 address, an IPv6 one without its brackets), or an internationalized
#: name: no space, quote or bracket a connection could not be made to (``http://exa mple.com`` was retried in silence)
_HOST = re.compile(r"(?:[A-Za-z0-9._~%!$&'()*+,;=:-]|[^\x00-\x7f])+")
#: a query's or path parameter's ``name=`` and its value
_URL_PARAMETER = re.compile(r"(?P<name>[?&;][^=&#;?/]*=)[^&#;]*")
#: a URL's fragment
_URL_FRAGMENT = re.compile(r"#.*", re.DOTALL)


@dataclass(frozen=True)
class HttpUrl(Constraint):
    """An ``http://`` or ``https://`` URL naming a host, and a port in [1, 65535] when it has one (as
    :func:`urllib.parse.urlsplit` reads it: a password typed with a ``/`` makes its start the port), described as
    ``what``; shown without its password.  With ``no_userinfo`` (why, said in the refusal), a URL carrying
    ``user@`` or ``user:password@`` is refused: one published to devices, or one dpdist sends its own token to (httpx
    turns userinfo into a Basic ``Authorization`` header that replaces the token).  With ``base``, a URL the API's paths
    are joined to (``--server``, ``--collector``, ``--issuer``), a query or a fragment is refused: httpx drops the
    path it is joined to, and every request went to ``/`` (a wrong document taken for the answer)."""

    what: str = "an http:// or https:// URL with a host"
    no_userinfo: str = ""
    base: bool = False

    #: why a URL dpdist sends its own token to takes no userinfo
    TOKEN_SENT: ClassVar[str] = ("dpdist authenticates with its token, and httpx would send the user:password as Basic "
                                 "auth in its place: every request would be refused")
    #: why a URL a relayed campaign gives its devices takes no userinfo
    PUBLISHED: ClassVar[str] = ("a relayed campaign gives it to every device: its config and identity are served to anyone, "
                                "with no token")

    def check(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError
        parts = urlsplit(value)  # ValueError: an unreadable bracket ("http://[::1")
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not _HOST.fullmatch(parts.hostname):
            raise ValueError
        if parts.port == 0:  # ValueError: a port that is no number in [0, 65535]
            raise ValueError
        if self.no_userinfo and "@" in parts.netloc:
            raise ValueError
        if self.base and ("?" in value or "#" in value):
            raise ValueError
        if _URL_CONTROL.search(value) or not value.isprintable():  # a NUL, newline, ESC or bidi control, raw or
            raise ValueError  # %-encoded: httpx's InvalidURL ("internal error"), or a line cut, forged or reversed
        if self._published() and _PATH_PARAMETER.search(parts.path):  # ";password=...": a credential served to anyone
            raise ValueError
        return value

    def describe(self) -> str:
        userinfo = "user:password@ or ;name=value in its path" if self._published() else "user:password@"
        what = (f"{self.what}, without {userinfo} ({self.no_userinfo})" if self.no_userinfo else self.what
                ) + ", without control characters (raw, bidi, or %00-%1F, %7F)"
        return what + (", and without a query or fragment (?...#...: the API's paths are joined to it)" if self.base
                       else "")

    def invalid_examples(self) -> list:
        out = [3, "", "ftp://host", "http://", "http://u:pw/x@host:1", "http://host:abc", "http://[::1", "http://h:70000",
               "http://h:0", "http://h:99999"]
        out += ["http://h:1?x=1", "http://h:1/base/#frag"] if self.base else []
        out += ["http://h/a%00b", "http://h/a%0Ab", "http://h/a\x7fb", "http://h/\x1b]0;PWN\x07", "http://h/a\u202eb"]
        out += ["http://h/p;password=pw"] if self._published() else []
        return [*out, "http://u:pw@host", "https://u@host:1/x"] if self.no_userinfo else out

    def _published(self) -> bool:
        """Whether the URL is given to every device (its config served with no token)."""
        return self.no_userinfo == self.PUBLISHED

    def shown(self, value: Any) -> str:
        if not isinstance(value, str):
            return type(value).__name__
        # a refused URL's query values, path parameters and fragment may be credentials (?token=, #access_token=)
        masked = _URL_FRAGMENT.sub("#***", _URL_PARAMETER.sub(r"\g<name>***", redacted_url(value)))
        return repr(masked)[:200]
