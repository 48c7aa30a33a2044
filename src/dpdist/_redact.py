"""URLs dpdist holds, as it shows them: without the passwords a URL may carry.

A URL dpdist prints, logs or puts in an error message of its own (``--db``, ``--collector``, the clients' server,
relay and issuer URLs) is its own input, read as a URL, never searched for in text: :func:`redacted_url` shows its
userinfo's password (from the user name's ``:`` to the last ``@`` before the query) and its ``password`` and
``sslpassword`` parameters (libpq's, of a query or a ``key=value`` string, their names percent-decoded as libpq does)
as ``***``; :func:`url_secrets` gives those passwords, for :mod:`dpdist._shown` to mask wherever a line repeats them.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

__all__ = ["redacted_url", "redacted_repr", "url_secrets", "MASK", "RedactingFilter"]

#: what stands for a secret that is not shown
MASK = "***"
_AT, _USER_END, _SCHEME = "@\uff20\ufe6b", re.compile(r"[:\uff1a]|%3[aA]"), re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: a parameter of a URL's query (its value up to ``&`` or ``#``) or of a ``key=value`` string (up to a space)
_PARAMETER = {True: re.compile(r"(?:^|(?<=[?&;]))([^?&#=]*?(?:=|%3[dD]))('[^']*'|[^&#]*)"),
              False: re.compile(r"(?:^|(?<=\s))([^\s=]*?\s*=\s*)('[^']*'|\S*)")}


def _parts(url: str) -> tuple[str, str | None, str]:
    """``url`` as what comes before its userinfo's password, the password (None without one), what comes after."""
    head, slashes, rest = url.partition("//")
    scheme = _SCHEME.match(url) if not slashes else None
    if scheme is not None:  # a URL without its slashes: its userinfo after the scheme
        head, rest = scheme.group(0), url[scheme.end():]
    start = len(head) + len(slashes) + len(rest) - len(rest.lstrip("/"))  # (an empty host: http:///user:pw@host)
    rest = rest.lstrip("/")
    query = min((found for found in (rest.find("?"), rest.find("#")) if found >= 0), default=len(rest))
    at = max(rest.rfind(character, 0, query) for character in _AT)
    end = _USER_END.search(rest, 0, max(at, 0)) if slashes or scheme else None
    if end is None or "/" in rest[:end.start()]:  # no userinfo, a user name without a password, an @ in the path
        return url, None, ""
    return url[:start + end.end()], url[start + end.end(): start + at], url[start + at:]


def _is_password(match: re.Match) -> bool:
    return unquote(match.group(1)).strip().rstrip("=").strip().lower() in ("password", "sslpassword")


def redacted_url(url: str) -> str:
    """``url`` with its passwords shown ``***``: ``postgresql://user:***@host/db?sslpassword=***``."""
    head, password, tail = _parts(url)
    shown = url if password is None else f"{head}{MASK}{tail}"
    return _PARAMETER["//" in url].sub(lambda match: match.group(1) + (f"'{MASK}'" if match.group(2)[:1] == "'" else MASK)
                                       if _is_password(match) else match.group(0), shown)


def url_secrets(url: str) -> tuple[str, ...]:
    """The passwords ``url`` holds, as typed and percent-decoded, and their pieces between spaces, quotes and ``@``
    (a driver reads a host after an ``@`` a password holds)."""
    password = _parts(url)[1]
    found = [] if password is None else [password]
    found += [match.group(2).strip("'\"") for match in _PARAMETER["//" in url].finditer(url) if _is_password(match)]
    found = [form for value in found for form in (value, unquote(value))]
    return tuple(dict.fromkeys(form for value in found for form in (value, *re.split(r"[\s'\"@]+", value)) if form))


def redacted_repr(value: object, limit: int = 200) -> str:
    """``repr(value)`` as an error message shows a refused URL or path: its passwords masked, cut to ``limit``."""
    return repr(redacted_url(value) if isinstance(value, str) else value)[:limit]


class RedactingFilter(logging.Filter):
    """Mask the passwords of every URL among a log record's arguments (httpx's, on its logger: its request's URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redacted_url(str(arg)) if "//" in str(arg) else arg for arg in record.args)
        return True


logging.getLogger("httpx").addFilter(RedactingFilter())
