"""The ``PrivateToken`` HTTP authentication scheme (RFC 9577, sections 2.1 and 2.2): the two header fields.

An origin that wants a token answers 401 with::

    WWW-Authenticate: PrivateToken challenge="<base64url TokenChallenge>", token-key="<base64url token key>"[, max-age=N]

and the client sends the token in::

    Authorization: PrivateToken token="<base64url Token>"

Values are base64url with padding (RFC 4648 section 5; RFC 9577 requires the padding, the reader
here also takes values without it), as an ``auth-param`` that is a token or a quoted-string (RFC
9110, section 11.2).  A ``WWW-Authenticate`` field may hold several challenges of several schemes
(RFC 9110 section 11.6.1; RFC 9577 section 2.1.2): the reader returns the ``PrivateToken`` ones and
skips the others and every parameter it does not know, as RFC 9577 requires.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError, InvalidTokenError
from .._validation import Bytes, Described, Integer, Optional, Text, validate_params

__all__ = [
    "PrivateTokenChallenge",
    "b64url_decode",
    "b64url_encode",
    "format_authorization",
    "format_www_authenticate",
    "parse_authorization",
    "parse_www_authenticate",
]

SCHEME = "PrivateToken"
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 section 5.6.2: tchar
_TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")  # RFC 9110 section 11.2
_WORD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z/-]+")  # tchar and the token68 characters
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_B64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}")


@validate_params({"data": Bytes()})
def b64url_encode(data: bytes) -> str:
    """base64url with padding (RFC 4648, section 5) of ``data`` (bytes)."""
    return base64.urlsafe_b64encode(data).decode("ascii")


def b64url_decode(text: Any, name: str) -> bytes:
    """The bytes of base64url ``text`` (padding optional); InvalidParameterError naming ``name`` otherwise."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text):
        raise InvalidParameterError(f"The '{name}' must be base64url (RFC 4648, section 5). Got {str(text)[:80]!r}.")
    try:
        return base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        raise InvalidParameterError(f"The '{name}' must be base64url (RFC 4648, section 5). Got {text[:80]!r}.") from None


@dataclass(frozen=True)
class PrivateTokenChallenge:
    """One ``PrivateToken`` challenge of a ``WWW-Authenticate`` field: the TokenChallenge's bytes, the token key's
    bytes (None when the origin left it out) and ``max-age`` in seconds (None without one)."""

    challenge: bytes
    token_key: bytes | None
    max_age: int | None


@validate_params({"challenge": Bytes(), "token_key": Bytes(),
                  "max_age": Optional(Described(Integer(low=0), "an int >= 0 (seconds)"))})
def format_www_authenticate(challenge: bytes, token_key: bytes, max_age: int | None = None) -> str:
    """The value of ``WWW-Authenticate`` for one challenge (RFC 9577, section 2.1)."""
    value = f'{SCHEME} challenge="{b64url_encode(challenge)}", token-key="{b64url_encode(token_key)}"'
    if max_age is not None:
        value += f", max-age={max_age}"
    return value


@validate_params({"token": Bytes()})
def format_authorization(token: bytes) -> str:
    """The value of ``Authorization`` that presents ``token`` (RFC 9577, section 2.2.1)."""
    return f'{SCHEME} token="{b64url_encode(token)}"'


def _lex(header: str) -> list[tuple[str, str]]:
    """``header`` as words (``w``: token and token68 characters), quoted strings (``q``, unescaped), ``=`` and ``,``."""
    out, at = [], 0
    while at < len(header):
        char = header[at]
        if char in " \t":
            at += 1
        elif char in "=,":
            out.append((char, char))
            at += 1
        elif char == '"':
            quoted = _QUOTED.match(header, at)
            if quoted is None:
                raise ValueError(f"unterminated quoted string at character {at}")
            out.append(("q", re.sub(r"\\(.)", r"\1", quoted.group(1))))
            at = quoted.end()
        else:
            word = _WORD.match(header, at)
            if word is None:
                raise ValueError(f"unexpected {char!r} at character {at}")
            out.append(("w", word.group()))
            at = word.end()
    return out


def _challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """Every ``(scheme, {lower-case name: value})`` of a challenge list or a credentials value (RFC 9110, section 11).

    ``scheme [ token68 / name=value *( "," name=value ) ]``, items separated by commas; a word that
    is not followed by ``=`` starts the next challenge.  A token68 is skipped.
    """
    items, out, at = _lex(header), [], 0
    kind = lambda index: items[index][0] if index < len(items) else ""  # noqa: E731
    while at < len(items):
        if kind(at) == ",":
            at += 1
            continue
        if kind(at) != "w" or not _TOKEN.fullmatch(items[at][1]):
            raise ValueError(f"expected an authentication scheme, got {items[at][1]!r}")
        params: dict[str, str] = {}
        out.append((items[at][1], params))
        at += 1
        run = _end(items, at + 1)  # a word, then no '=' or only '=' up to a separator: a token68 (skipped)
        if kind(at) == "w" and (run == at + 1 or kind(run) in ("", ",")):
            if not _TOKEN68.fullmatch(items[at][1] + "=" * (run - at - 1)):
                raise ValueError(f"bad token68 {items[at][1]!r}")
            at = run
            continue
        while kind(at) == "w" and kind(at + 1) == "=":
            if kind(at + 2) not in ("w", "q") or kind(at + 2) == "w" and not _TOKEN.fullmatch(items[at + 2][1]):
                raise ValueError(f"expected a value for {items[at][1]!r}")
            if not _TOKEN.fullmatch(items[at][1]):
                raise ValueError(f"bad parameter name {items[at][1]!r}")
            params[items[at][1].lower()] = items[at + 2][1]
            at += 3
            if at < len(items) and kind(at) != ",":
                raise ValueError(f"expected ',' before {items[at][1]!r}")
            while kind(at) == ",":
                at += 1
    return out


def _end(items: list[tuple[str, str]], at: int) -> int:
    """The index after the run of ``=`` that starts at ``at``."""
    while at < len(items) and items[at][0] == "=":
        at += 1
    return at


@validate_params({"header": Text(non_empty=False)})
def parse_www_authenticate(header: Any) -> list[PrivateTokenChallenge]:
    """The ``PrivateToken`` challenges of a ``WWW-Authenticate`` value, in order (others skipped, RFC 9577 section 2.1).

    A PrivateToken challenge without a ``challenge`` parameter, or with a value that is not base64url,
    raises InvalidParameterError; ``max-age`` that is not a non-negative integer too.
    """
    try:
        challenges = _challenges(header)
    except ValueError as error:
        raise InvalidParameterError(f"The 'header' argument is not a WWW-Authenticate value (RFC 9110, section 11.6.1): {error}.") from None
    out = []
    for scheme, params in challenges:
        if scheme.lower() != SCHEME.lower():
            continue
        if "challenge" not in params:
            raise InvalidParameterError("A PrivateToken challenge of the 'header' argument has no 'challenge' parameter.")
        max_age = params.get("max-age")
        if max_age is not None and not (max_age.isascii() and max_age.isdigit()):
            raise InvalidParameterError(f"The 'max-age' of a PrivateToken challenge must be an integer >= 0. Got {max_age!r}.")
        out.append(PrivateTokenChallenge(
            b64url_decode(params["challenge"], "challenge"),
            b64url_decode(params["token-key"], "token-key") if "token-key" in params else None,
            int(max_age) if max_age is not None else None,
        ))
    return out


def parse_authorization(header: Any) -> bytes:
    """The token of an ``Authorization: PrivateToken token="..."`` value (RFC 9577, section 2.2.1), as bytes.

    Raises InvalidTokenError (``reason="malformed"``) for any other scheme, several credentials, or a
    token that is missing or not base64url; the token's own checks are :func:`~dpdist.privacypass.verify_token`'s.
    """
    if not isinstance(header, str):
        raise InvalidTokenError(f"The 'header' argument must be a str. Got {type(header).__name__}.", reason="malformed")
    try:
        credentials = _challenges(header)
    except ValueError as error:
        raise InvalidTokenError(f"The Authorization header is not 'PrivateToken token=\"...\"': {error}.", reason="malformed") from None
    if len(credentials) != 1 or credentials[0][0].lower() != SCHEME.lower() or "token" not in credentials[0][1]:
        raise InvalidTokenError("The Authorization header must be 'PrivateToken token=\"<base64url Token>\"' (RFC 9577, section 2.2.1).",
                                reason="malformed")
    try:
        return b64url_decode(credentials[0][1]["token"], "token")
    except InvalidParameterError as error:
        raise InvalidTokenError(str(error), reason="malformed") from None
