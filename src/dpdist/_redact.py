"""URLs as dpdist shows them: without the password a URL may carry (``scheme://user:password@host``).

Every URL dpdist prints, logs or puts in an error message goes through :func:`redacted_url` (one URL) or
:func:`redacted_text` (a line that may hold several): the database URL of ``dpdist serve``, the collector of
``dpdist relay``, the server, relay and issuer URLs of :class:`dpdist.client.Client` and ``dpdist submit``.  The
password is replaced by ``***``; the user name, host, port and path stay, so the line still says where.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redacted_url", "redacted_text", "MASK"]

#: what stands for a password that is not shown
MASK = "***"

#: ``scheme://user:password@``: the password is everything between the first ``:`` after ``//`` and the last ``@``
#: before the host (a password may hold ``@`` or ``:``; a host, path or query none before its first ``/``)
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*):(?P<password>[^\s/]*)@")


def redacted_url(url: str) -> str:
    """``url`` without its password (``***`` in its place); ``url`` itself when it holds none.

    Parameters
    ----------
    url : str
        A URL, or any text (kept as it is when it is not ``scheme://...``).

    Returns
    -------
    str
        The URL to show: ``postgresql://user:***@host:5432/db`` for ``postgresql://user:secret@host:5432/db``.
    """
    if "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # an unreadable port or bracket: mask by the pattern instead
        return redacted_text(url)
    if password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{MASK}@{host}"))


def redacted_text(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` in it replaced by ``***``.

    Parameters
    ----------
    text : str
        A line to print, log or raise (an error message naming URLs).

    Returns
    -------
    str
        The same line, its URLs' passwords masked.
    """
    return _USERINFO.sub(lambda match: f"{match.group('head')}:{MASK}@", text)
