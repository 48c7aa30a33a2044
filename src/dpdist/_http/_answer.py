"""A 2xx answer read as a dpdist service's (or issuer's) JSON object, or refused in one line.

Every answer a client reads (:mod:`dpdist.client`'s admin and device calls, ``issuer_of``, ``dpdist issuer
...``) goes through :func:`answer_document`.  A success that is not the object dpdist serves - a proxy's or captive
portal's page, another server, an older dpdist - is a :class:`ServiceRefusedError` (code ``unexpected_answer``) naming
the request, what is wrong with it, its status, host and size (:func:`refusal_shown`: never its text).  A refusal is
shown by :func:`refusal_shown` too: a dpdist refusal as its code and its detail (masked, escaped, cut), any other
answer as ``status N from HOST (not a dpdist answer, N bytes)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._codes import CODES
from .._json import loads_within
from .._shown import secrets_of, shown
from ..errors import ServiceRefusedError

__all__ = ["answer_document", "refusal_shown", "problem_of", "UNEXPECTED", "NULL", "Maybe", "Checked"]

#: the "type" of a JSON null (``{"estimate": (dict, NULL)}``)
NULL = type(None)
_NAMES = {dict: "a JSON object", list: "a JSON array", str: "a string", int: "an integer", float: "a number",
          bool: "true or false"}


class Maybe:
    """A key of a keys spec that may be absent (``{"notes": Maybe([str])}``); present, it holds ``wanted``."""

    def __init__(self, wanted: Any) -> None:
        self.wanted = wanted


class Checked:
    """What holds ``wanted`` and passes ``check(value, where)``, which says what is wrong (``"'items' has 3 entries,
    'frequencies' 8"``) or returns None: what a type cannot say, e.g. lists whose lengths must match."""

    def __init__(self, wanted: Any, check: Callable[[Any, str], str | None]) -> None:
        self.wanted, self.check = wanted, check


#: the ``code`` of the error of an answer that is not a dpdist service's
UNEXPECTED = "unexpected_answer"


def answer_document(method: str, url: str, response: Any, keys: tuple[str, ...] | dict[str, Any] = (),
                    what: str = "a dpdist service", why: str | None = None) -> dict:
    """The JSON object answered to ``method url``, which holds ``keys``.

    Parameters
    ----------
    method, url : str
        The request (shown masked).
    response : httpx.Response
        Its answer (a success: refusals and redirects are read before).
    keys : tuple of str, or dict
        The keys the caller reads; as a dict, each with what it must hold: a type (``dict``, ``list``, ``str``,
        ``int``, ``float``: any number a float holds, :data:`NULL`), a dict (an object holding those keys), a
        one-item list (``[str]``: a list of strings; ``[{"campaign": str}]``: of such objects), a tuple of these
        (any of them: ``(float, NULL, [float])``), :class:`Maybe` (a key that may be absent) or :class:`Checked` (a
        spec and a check of what it cannot say).
    what : str
        Who should have answered (``"a dpdist service"``, ``"a dpdist issuer"``).
    why : str or None
        What is wrong with an answer the caller refuses itself (``"not a PNG image"``); None: the answer is read.

    Returns
    -------
    dict
        The answer's object.

    Raises
    ------
    ServiceRefusedError
        ``"The answer to GET http://h/api/campaigns is not what a dpdist service answers (not JSON): status 200 from h
        (not a dpdist answer, 812 bytes). Is that URL ..."``, its ``code`` ``"unexpected_answer"``.
    """
    try:
        if why is not None:
            raise ValueError(why)
        document = response.json()
    except ValueError as error:  # not JSON (a page), cut short, nested too deeply or too many values (dpdist._json)
        said = str(error)
        why = why or (said if said.startswith("JSON nested too deeply") or said.startswith("JSON of more than")
                      else "not JSON")
    else:
        if isinstance(document, dict):
            why = _missing(document, keys)
            if why is None:
                return document
        else:
            why = "not a JSON object"
    raise ServiceRefusedError(
        f"The answer to {method} {shown(url, secrets_of(response))} is not what {what} answers ({why}): "
        f"{_foreign(response)}. Is that URL {what}, not a proxy, a captive portal or another server answering in its "
        "place?", status=response.status_code, code=UNEXPECTED)


def refusal_shown(response: Any, secrets: tuple[str, ...] = (), limit: int = 2000) -> tuple[str, str]:
    """``(code, said)``: a dpdist refusal's code and ``"code: detail"`` (the detail masked of ``secrets`` and of what
    the request carried, escaped, cut to ``limit``), or ``("", "status N from HOST (not a dpdist answer, N bytes)")``
    for an answer whose ``error`` is none of :data:`dpdist._http._codes.CODES`."""
    try:
        document = loads_within(response.content, 1 << 20)
    except (ValueError, UnicodeDecodeError):
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("error"), str) or document["error"] not in CODES:
        return "", _foreign(response)
    code, detail = document["error"], document.get("detail")
    said = shown(detail, (*secrets, *secrets_of(response)), limit) if isinstance(detail, str) else ""
    return code, f"{code}: {said}" if said.strip() else code


def _foreign(response: Any) -> str:
    """An answer that is not dpdist's, as it is said: its status, the host it came from and its size."""
    try:
        url = response.request.url
        host = shown(f"{url.host}:{url.port}" if url.port else url.host, limit=100)
    except RuntimeError:  # a response built without its request
        host = "the server"
    return f"status {response.status_code} from {host} (not a dpdist answer, {len(response.content)} bytes)"


def _missing(document: dict, keys: tuple[str, ...] | dict[str, Any]) -> str | None:
    """What ``document`` lacks of ``keys`` (``"no 'campaigns'"``, ``"'campaigns' is a string, not a JSON array"``),
    None if nothing."""
    if not isinstance(keys, dict):
        return next((f"no {key!r}" for key in keys if key not in document), None)
    return _problem(document, keys, "")


def problem_of(value: Any, wanted: Any, where: str = "") -> str | None:
    """Why ``value`` (at ``where``, as ``"['estimate']"``) does not hold what the keys spec ``wanted`` says (see
    :func:`answer_document`), None if it does: for a :class:`Checked` check that reads part of a value by a spec."""
    return _problem(value, wanted, where)


def _problem(value: Any, wanted: Any, where: str) -> str | None:
    """Why ``value`` (at ``where``: ``"['campaigns'][0]"``) is not ``wanted``: a dict of keys and what each holds, a
    one-item list (a list of such items), a type, a tuple of these (any of them), :class:`Checked`; None if it is."""
    if isinstance(wanted, Checked):
        return _problem(value, wanted.wanted, where) or wanted.check(value, where or "it")
    if isinstance(wanted, dict):
        if not isinstance(value, dict):
            return f"{where or 'it'} is {_name(value)}, not a JSON object"
        for key, inner in wanted.items():
            if key not in value:
                if isinstance(inner, Maybe):
                    continue
                return f"no {key!r}" + (f" in {where}" if where else "")
            problem = _problem(value[key], inner.wanted if isinstance(inner, Maybe) else inner, f"{where}[{key!r}]")
            if problem is not None:
                return problem
        return None
    if isinstance(wanted, list):
        if not isinstance(value, list):
            return f"{where} is {_name(value)}, not a JSON array"
        return next((problem for index, item in enumerate(value)
                     if (problem := _problem(item, wanted[0], f"{where}[{index}]")) is not None), None)
    alternatives = wanted if isinstance(wanted, tuple) else (wanted,)
    for alternative in alternatives:  # a JSON object or array: its own spec's problem, if the spec has one
        container = list if isinstance(alternative, list) else dict if isinstance(alternative, (dict, Checked)) else None
        if container is not None and isinstance(value, container):
            return _problem(value, alternative, where)
    types = tuple(kind for kind in alternatives if isinstance(kind, type))
    if object in types:  # anything
        return None
    types = (*types, int) if float in types else types
    if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
        return _beyond_float(value, where) if float in types and isinstance(value, int) else None
    return f"{where} is {_name(value)}, not {' or '.join(_wanted_name(alternative) for alternative in alternatives)}"


def _beyond_float(value: int, where: str) -> str | None:
    """Why an integer where a number is read is none (a float holds at most about 1.8e308), None if it is one."""
    try:
        float(value)
    except OverflowError:
        return f"{where} is an integer beyond 1.8e308, not a number a float holds"
    return None


def _wanted_name(wanted: Any) -> str:
    """What ``wanted`` (a spec) is, in words."""
    if isinstance(wanted, Checked):
        return _wanted_name(wanted.wanted)
    if isinstance(wanted, dict):
        return "a JSON object"
    if isinstance(wanted, list):
        return "a JSON array"
    return _NAMES.get(wanted, "null" if wanted is type(None) else getattr(wanted, "__name__", str(wanted)))


def _name(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    return next((name for kind, name in reversed(_NAMES.items()) if isinstance(value, kind)), type(value).__name__)
