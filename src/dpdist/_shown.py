"""Text from outside as dpdist shows it in a line: the process's own secrets masked, control characters escaped, cut.

dpdist does not search a server's text for what looks like a credential: it masks the secrets it holds (the tokens
it sent, its URLs' passwords: :func:`secrets_of`, :func:`dpdist._redact.url_secrets`) wherever the text repeats them,
as sent, each character as itself or percent-encoded (either case), JSON- or Python-escaped, an HTML character
reference or a space as ``+``, and their base64 (standard or URL-safe, at any offset) spelt those ways too.  Control
characters (ESC, newlines, bidi overrides) are then escaped as ``\\x1b``, so a line stays a line, and the text is cut.
The JavaScript and Java clients' ``shown`` do the same (``clients/js/test/fixtures/shown.json``).
"""

from __future__ import annotations

import base64
import functools
import re
from typing import Any

from ._redact import MASK, url_secrets

__all__ = ["shown", "masked", "secret_forms", "secrets_of", "credentials_in", "kind_of", "SHORTEST_SECRET", "MASK"]

#: the shortest secret masked wherever it appears (a shorter one would mask common words)
SHORTEST_SECRET = 4
_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _hex(number: int, width: int) -> str:  # a pattern of ``number`` in hexadecimal, either case
    return "".join(f"[{digit}{digit.upper()}]" if digit.isalpha() else digit for digit in f"{number:0{width}x}")


def _spelling(character: str) -> str:
    """A pattern of ``character`` as itself or in each form a text may escape it in."""
    code = ord(character)
    forms = [re.escape(character), "".join("%" + _hex(byte, 2) for byte in character.encode()),
             rf"&#0{{0,3}}{code};", rf"&#[xX]0{{0,3}}{_hex(code, 1)};", re.escape(_NAMED.get(character, character))]
    high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + (code & 0x3FF)  # JSON's surrogate pair (and Python's \U)
    forms += [r"\\u" + _hex(code, 4)] if code < 0x10000 else [rf"\\u{_hex(high, 4)}\\u{_hex(low, 4)}", r"\\U" + _hex(code, 8)]
    forms += [r"\\x" + _hex(code, 2)] if code < 0x100 else []
    forms += [re.escape("\\" + character)] if character in "\"'\\/" else []
    forms += [r"\+"] if character == " " else []
    return "(?:" + "|".join(dict.fromkeys(forms)) + ")"


@functools.lru_cache(maxsize=1024)
def secret_forms(secret: str) -> tuple[str, ...]:
    """``secret`` and its base64 at each offset in a longer text, standard and URL-safe (what its bytes alone decide,
    and with the last character a text ending with it has): those of :data:`SHORTEST_SECRET` characters or more."""
    data, forms = secret.encode(), [secret]
    for offset in range(3 if len(secret) >= SHORTEST_SECRET else 0):
        encoded = base64.b64encode(bytes(offset) + data).decode().rstrip("=")
        start = -(-8 * offset // 6)
        for form in (encoded[start: 8 * (offset + len(data)) // 6], encoded[start:]):
            forms += [form, form.replace("+", "-").replace("/", "_")]
    return tuple(form for form in dict.fromkeys(forms) if len(form) >= SHORTEST_SECRET)


@functools.lru_cache(maxsize=256)
def _pattern(secrets: tuple[str, ...]) -> tuple[re.Pattern | None, int]:
    """One pattern of every form of ``secrets``, the longest first (then in code order), and the longest form's length."""
    forms = sorted({form for secret in secrets for form in secret_forms(secret)}, key=lambda form: (-len(form), form))
    first = re.escape("".join({form[0] for form in forms}) + "%&\\+")  # what a form starts with, spelt any way
    spelt = "|".join("".join(map(_spelling, form)) for form in forms)
    return (re.compile(f"(?=[{first}])(?:{spelt})"), len(forms[0])) if forms else (None, 0)


def masked(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every form of ``secrets`` read ``***`` (nothing escaped or cut)."""
    pattern = _pattern(tuple(secrets))[0]
    return text if pattern is None else pattern.sub(MASK, text)


def shown(text: str, secrets: tuple[str, ...] = (), limit: int | None = 200) -> str:
    """``text`` (a server's) as one line: ``secrets`` (the process's own: :func:`secrets_of`) masked in every form,
    control characters escaped, cut to ``limit`` characters (``...`` marks a cut; None: all).  ``'x\\x1b[2J token=***'``
    for ``'x\\x1b[2J token=admin-token'`` with that token among ``secrets``."""
    pattern, longest = _pattern(tuple(secrets))
    read = len(text) if limit is None else 16 * (limit + 13 * longest) + 4096  # (a form is 13 characters a character)
    if pattern is not None:  # a form cut at the end of what is read is left out, not shown in part
        text = pattern.sub(MASK, text[:read])[: None if len(text) <= read else -13 * longest or None]
    if not text.isprintable():  # (one pass in C over a text with nothing to escape, the usual one)
        text = "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)
        text = text if pattern is None else pattern.sub(MASK, text)  # a secret that its escaping spells
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def credentials_in(value: str) -> tuple[str, ...]:
    """The credential an ``Authorization`` header's ``value`` carries (after its scheme; a ``PrivateToken``'s token)."""
    credential = value.strip().partition(" ")[2].strip()
    return tuple(part for part in (credential, *re.findall(r"token=\"?([^\",\s]+)", credential)) if len(part) >= SHORTEST_SECRET)


def secrets_of(response: Any) -> tuple[str, ...]:
    """The secrets the request of ``response`` carried (its credential, its URL's passwords); () without its request."""
    try:
        request = response.request
    except RuntimeError:
        return ()
    return credentials_in(request.headers.get("Authorization", "")) + url_secrets(str(request.url))


def kind_of(response: Any) -> str:
    """The content type of ``response`` as shown (without parameters): ``text/html``, or ``no content type``."""
    return shown(response.headers.get("Content-Type", "").split(";")[0].strip(), secrets_of(response), 60) or "no content type"
