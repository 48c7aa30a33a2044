"""Text a server sent, as dpdist shows it in a line: escaped, masked and cut.

A refusal's detail, a success's body, a content type or a ``Location`` come from whoever answered - dpdist, or a
proxy, a captive portal, an echo server that repeats the request it got.  :func:`shown` is the one way such text
enters a message: control characters (ESC, BEL, newlines, bidi overrides) are escaped as ``\\x1b`` so a line stays a
line and cannot clear or retitle a terminal; the credential the request carried (:func:`secrets_of`), any
``Bearer``/``Basic`` credential, any ``token=``/``*_token:`` value, any ``password:`` or ``Authorization:`` value
are replaced by ``***`` (:func:`masked`), as are URLs' passwords (:func:`dpdist._redact.redacted_text`); the text
is cut.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from ._redact import MASK, redacted_text

__all__ = ["shown", "masked", "secrets_of", "kind_of"]

#: a credential after its HTTP authentication scheme (``Authorization: Bearer <token>``, ``Basic <base64>``), quoted
#: or not (``Bearer "..."``, ``Bearer \\"...\\"`` in a JSON string: attack116 F3)
_CREDENTIAL = re.compile(r"(?P<head>(?<![A-Za-z0-9])(?:Bearer|Basic)\s+(?:\\*['\"])?)(?P<value>[A-Za-z0-9._~+/=-]{6,})",
                         re.IGNORECASE)
#: what ends a named value: ``&``, whitespace, a quote, ``#``, ``,``, ``;``, ``<``, ``>``; not a ``\\`` (an escaped
#: character shown as ``\\x1b``) but one before a quote (``\\"`` ends a JSON string inside a JSON string)
_VALUE = r"[^&\s'\"#,;<>]*[^&\s'\"#,;<>\\]"
#: a value named as a token: ``?token=...``, ``&admin_token=...``, ``token = ...``, ``token="..."`` (PrivateToken's), a
#: JSON key's ``"submit_token": "..."`` (or ``\\"submit_token\\": \\"...\\"`` in a JSON string), a header's
#: ``X-Submit-Token: ...`` (a ``_`` or ``-`` before ``token``: attack116 F3); not prose (``bad token: expired``).  The
#: name is read from the start of its run (``_`` or ``-`` before it as well as a letter): a run of ``_`` is read once,
#: not from each of its characters
_TOKEN_VALUE = re.compile(r"(?P<head>(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*token"
                          r"(?:\s*=\s*|\\*['\"]\s*:\s*|(?<=[_-]token)\s*:\s*)(?:\\*['\"])?)"
                          rf"(?P<value>{_VALUE})", re.IGNORECASE)
#: the HTTP authentication schemes an ``Authorization`` value may name before its credential
_SCHEMES = r"(?:bearer|basic|digest|negotiate|token|dpop)"
#: a password or an ``Authorization`` header named with a ``:`` (attack116 F3): ``password: ...``, ``"password":
#: "..."`` (a quoted value whole, up to its closing quote), ``Authorization: ...`` (its credential after a scheme named
#: in :data:`_SCHEMES`; none masked before a ``PrivateToken`` scheme, whose ``token="..."`` :data:`_TOKEN_VALUE` masks,
#: or before a placeholder: ``Authorization: Bearer <token>``)
_NAMED_SECRET = re.compile(r"(?P<head>(?:(?<![A-Za-z0-9_])(?:ssl)?password(?:\\*['\"])?\s*:"
                           r"|(?<![A-Za-z0-9_-])(?:proxy-)?authorization(?:\\*['\"])?\s*[:=])\s*(?:\\*['\"])?"
                           rf"(?:{_SCHEMES}\s+)?(?!(?:{_SCHEMES}|privatetoken)\s))"
                           rf"(?P<value>(?<=\")[^\"]*[^\"\\]|(?<=')[^']*[^'\\]|(?<!['\"]){_VALUE})", re.IGNORECASE)
#: ``/\\user:password@host`` (or ``\\/``, ``\\\\``): WHATWG URL parsers (browsers) read a ``\\`` as a ``/``, so this is
#: userinfo too, which :func:`dpdist._redact.redacted_text` (``//`` only) leaves; without an ``@`` after the ``:``, the
#: rest of the word is matched and shown as it is (read once: no later ``//user:`` of the word has an ``@`` either)
_BACKSLASHED_USERINFO = re.compile(r"(?P<head>[/\\][/\\][^\s/\\:@]*):(?:(?P<value>[^\s@]*)@|[^\s@]*)")
#: the shortest credential masked wherever it appears (a shorter one would mask common words)
_SHORTEST_SECRET = 6
#: the characters read past a cut: a credential or URL password that starts before it is masked whole if it ends
#: within them (a longer one's start is masked by its pattern's head, or shown cut)
_ROOM = 4096


def secrets_of(response: Any) -> tuple[str, ...]:
    """The credential the request of ``response`` carried (its ``Authorization`` header's, without the scheme; a
    ``PrivateToken token="..."``'s token too), to be masked in whatever the answer repeats; () without one."""
    try:
        value = response.request.headers.get("Authorization", "")
    except RuntimeError:  # a response built without its request
        return ()
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    found = [credential, *re.findall(r"token=\"?([^\",\s]+)", credential)]
    if scheme.lower() == "basic":  # user:password in base64: the password may be echoed decoded too (attack67 F14)
        try:
            user_password = base64.b64decode(credential, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), or not UTF-8
            user_password = ""
        found += [user_password, user_password.partition(":")[2]] if ":" in user_password else []
    return tuple(sorted({part for part in found if len(part) >= _SHORTEST_SECRET}, key=len, reverse=True))


def shown(text: str, secrets: tuple[str, ...] = (), limit: int | None = 200) -> str:
    """``text`` as one line to show: ``secrets`` and any credential masked, control characters escaped, cut.

    Parameters
    ----------
    text : str
        What a server sent (a body's start, a header's value, a refusal's detail).
    secrets : tuple of str
        The caller's own credentials (:func:`secrets_of`), replaced by ``***`` wherever they appear.
    limit : int or None
        The most characters shown (``...`` marks a cut); None: all.

    Returns
    -------
    str
        ``'x\\x1b[2J Bearer ***'`` for ``'x\\x1b[2J Bearer admin-token'``.
    """
    for secret in secrets:  # in the whole text (linear): a copy the cut below crossed would show its head (attack75 A)
        text = text.replace(secret, MASK)
    if limit is not None:  # only what can be shown is escaped (a body of 120 MB took 15 s whole), with room for a
        text = text[: limit + _ROOM]  # credential that starts before the cut (its patterns mask a cut one from its head)
    if not text.isprintable():  # (one pass in C over a text with nothing to escape, the usual one)
        text = "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)
    text = masked(text)
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def masked(text: str) -> str:
    """``text`` with every credential :func:`shown` masks read ``***`` (URLs' passwords, ``Bearer``/``Basic``
    credentials, named tokens, passwords and ``Authorization`` values), nothing escaped or cut: what a line dpdist logs
    of a requester's own text (a path) goes through before it is escaped its own way.

    Parameters
    ----------
    text : str
        The text to mask.

    Returns
    -------
    str
        ``text``, its credentials masked.
    """
    text = _CREDENTIAL.sub(lambda match: f"{match.group('head')}{MASK}", redacted_text(text))
    if "=" in text or ":" in text:  # every match of _TOKEN_VALUE holds one (as redacted_text's patterns)
        text = _TOKEN_VALUE.sub(lambda match: f"{match.group('head')}{MASK}", text)
    if ":" in text and ("/" in text or "\\" in text):  # and of _BACKSLASHED_USERINFO
        text = _BACKSLASHED_USERINFO.sub(lambda match: f"{match.group('head')}:{MASK}@" if match.group("value") is not None
                                         else match.group(0), text)
    if ":" in text or "=" in text:  # and of _NAMED_SECRET
        text = _NAMED_SECRET.sub(lambda match: f"{match.group('head')}{MASK}", text)
    return text


def kind_of(response: Any) -> str:
    """The content type of ``response`` as shown (without parameters): ``text/html``, or ``no content type``."""
    kind = response.headers.get("Content-Type", "").split(";")[0].strip()
    return shown(kind, secrets_of(response), 60) or "no content type"
