"""JSON from outside (report files, request bodies, query options, configs, memos, answers): one parser.

Python's ``json.loads`` raises ``RecursionError``, not ``ValueError``, on a document nested
more deeply than the interpreter's recursion limit (about 1,000 levels: ``[[[[...]]]]`` of
2 kB does it), so a reader that catches ``ValueError`` for "not valid JSON" let such input
through as an internal error (HTTP 500 from ``dpdist serve``, "internal error" from the CLI).
:func:`loads` turns it into the ``ValueError`` every caller already handles.

A bound on bytes is no bound on what parsing them holds: each JSON value becomes a Python object, and an empty
container costs ~110 bytes for its 3 (``[{},{},...]``: 48 MiB of answer held 1.8 GB while parsed).
``most_values`` bounds the values (containers, keys and scalars) and ``most_containers`` the containers before
anything is parsed, from a count of the bytes that open a value (``[``, ``{``, ``,``, ``:``): an upper bound, since
those bytes inside strings count too.  Parsing then holds at most ~110 bytes per container, ~60 per other value and
the text decoded (at most 4 bytes per byte).
"""

from __future__ import annotations

import json
import re

__all__ = ["loads", "loads_within", "values_upper_bound", "most_values_within"]


def loads(text, *, most_values: int | None = None, most_containers: int | None = None,
          most_text_bytes: int | None = None):
    """``json.loads(text)``, raising ``ValueError`` (never ``RecursionError``) for too deeply nested input, and for a
    document that may hold more than ``most_values`` values or ``most_containers`` arrays and objects, or (bytes
    holding a character past U+FFFF, which Python keeps in 4 bytes, and the whole text with it) more than
    ``most_text_bytes`` once decoded (None: any)."""
    if most_text_bytes is not None and 4 * len(text) > most_text_bytes and _astral(text):
        raise ValueError(f"JSON of more than {most_text_bytes >> 20} MiB once decoded (4 bytes a character)")
    if (most_values is not None or most_containers is not None) and _opens_a_container(text):
        containers, values = values_upper_bound(text)
        if most_containers is not None and containers > most_containers:
            raise ValueError(f"JSON of more than {most_containers:,} arrays and objects")
        if most_values is not None and values > most_values:
            raise ValueError(f"JSON of more than {most_values:,} values")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def loads_within(text, limit: int):
    """:func:`loads` of ``text`` read within ``limit`` bytes: at most the values, and arrays and objects, those bytes
    should hold (:func:`most_values_within`), and within ``limit`` once decoded."""
    most_values, most_containers = most_values_within(limit)
    return loads(text, most_values=most_values, most_containers=most_containers, most_text_bytes=limit)


#: JSON's whitespace, then an array or an object: the only documents that can hold more than one value
_CONTAINER_FIRST = re.compile(rb"[ \t\n\r]*[\[{]")


def _opens_a_container(text: bytes | bytearray | str) -> bool:
    """Whether ``text`` starts (after whitespace) an array or an object; any other text is one value, or not JSON
    (refused as such at its first bytes, not as "JSON of more than ... values": an HTML page)."""
    start = text[:64].encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text[:64])
    return _CONTAINER_FIRST.match(start) is not None or not start.strip(b" \t\n\r")


#: an escaped high surrogate (``\\ud83d``: with a low one, a character past U+FFFF)
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB]")


def _astral(text: bytes | bytearray | str) -> bool:
    """Whether ``text`` may hold a character Python keeps in 4 bytes (each character of its string then takes 4): a
    UTF-8 lead byte of four bytes, or an escaped high surrogate (searched only where ``\\ud`` occurs: 108 MB of
    ASCII took 1.5 s to a regular expression, a few ms to these)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if not data.isascii() and any(bytes((lead,)) in data for lead in range(0xF0, 0xF5)):
        return True
    return (b"\\ud" in data or b"\\uD" in data) and _HIGH_SURROGATE.search(data) is not None


def values_upper_bound(text: bytes | bytearray | str) -> tuple[int, int]:
    """At least the arrays and objects, and the values (containers, keys, scalars), a JSON ``text`` holds: the bytes
    that open a container, and those plus the separators before every other value (``,`` and ``:``), plus one."""
    marks = (b"[", b"{", b",", b":") if isinstance(text, (bytes, bytearray)) else ("[", "{", ",", ":")
    opening, braces, commas, colons = (text.count(mark) for mark in marks)  # type: ignore[arg-type]
    return opening + braces, opening + braces + commas + colons + 1


def most_values_within(limit: int) -> tuple[int, int]:
    """The most JSON values, and the most arrays and objects, an answer of at most ``limit`` bytes may hold before
    it is parsed (:func:`loads`): one value per 8 bytes, at least 65,536 (an estimate of 10^5 items is
    ~900,000 values in 10.6 MB), and at most 2^20 containers (an estimate holds ~20, a campaign in a list ~10).

    Parsing then holds at most ~72 bytes a value and ~110 a container, and the decoded text (a body holding a
    character past U+FFFF is held 4 bytes a character: :func:`loads` takes it only within a quarter of its bound).
    Measured within :data:`dpdist._http._deadline.MAX_ANSWER_BYTES` (read by the admin's calls only): 16.7 million
    two-letter strings held 1.2 GB, numbers 0.68 GB, ``"😀a"`` strings 0.48 GB, the most containers 0.12 GB (48 MiB
    of ``[{},{},...]`` held 1.8 GB before; it is now refused unparsed); within ``CONFIG_ANSWER_BYTES``
    ~40 MB; within ``ACK_ANSWER_BYTES`` ~10 MB."""
    values = max(1 << 16, limit // 8)
    return values, min(values, 1 << 20)
