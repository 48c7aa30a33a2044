"""URLs as dpdist shows them: without the password a URL may carry (``scheme://user:password@host``).

Every URL dpdist prints, logs or puts in an error message goes through :func:`redacted_url` (one URL) or
:func:`redacted_text` (a line that may hold several): the database URL of ``dpdist serve``, the collector of
``dpdist relay``, the server, relay and issuer URLs of :class:`dpdist.client.Client` and ``dpdist submit``.  The
password is replaced by ``***``; the user name, host, port and path stay, so the line still says where.

The URLs httpx logs itself (``HTTP Request: POST http://user:password@host/...`` at INFO, shown when an application
turns INFO on for its loggers) go through the same redaction: importing this module puts :class:`RedactingFilter` on
the ``httpx`` logger (a filter only masks; it never drops a record).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["redacted_url", "redacted_repr", "redacted_text", "without_password", "without_userinfo", "MASK",
           "RedactingFilter"]

#: what stands for a password that is not shown
MASK = "***"

#: a URL's scheme (``http:``), read from the start of its run of scheme characters (a digit or ``+.-`` before its first
#: letter stays in the head, shown as it is): a scheme cannot start inside a run, so a long run is read once, not from
#: each of its characters (``"A" * 160_000`` took 17 s)
_SCHEME = r"(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:"
#: ``scheme://user:password@``: the password is everything from the first ``:`` after the user name to the last ``@``
#: of the URL (a password may hold ``@``, ``:`` or ``/`` as typed, not encoded; an ``@`` later in the URL's path masks
#: more, never less).  The scheme may be absent: ``//user:password@host/x`` is a scheme-relative reference (a redirect's
#: ``Location`` may be one), and ``http:///user:password@host`` (an empty host) is read from its second ``//``.
#: Linear in the text: the user name is read once (the lookahead and back-reference commit to the last ``:`` before a
#: ``/``; a fullwidth ``\uff1a`` before an ``@`` in the user name is the second choice), and a ``//user:`` followed by no
#: ``@`` matches the rest of its word, shown as it is (no later ``//`` of the word could be masked; each would read it)
_USERINFO = re.compile(rf"(?P<head>(?:{_SCHEME})?//(?:(?=(?P<user>[^\s/:]*)[:\uff1a])(?P=user)(?=[:\uff1a]\S*[@\uff20\ufe6b])"
                       r"|[^\s/:]*(?=\uff1a[^\s/:\uff1a]*[@\uff20\ufe6b])))[:\uff1a](?P<password>\S*)[@\uff20\ufe6b]"
                       rf"|(?:{_SCHEME})?//[^\s/:]*[:\uff1a]\S*")
#: ``scheme://user%3Apassword@``: the ``:`` percent-encoded (a URL parser decodes userinfo: the password is what follows;
#: without an ``@`` after it, the rest is matched and shown as it is)
_ENCODED_USERINFO = re.compile(rf"(?P<head>(?:{_SCHEME})?//[^\s/:@\uff20]*?%3[Aa])"
                               r"(?:(?P<password>[^\s@\uff20]*)[@\uff20\ufe6b]|[^\s@\uff20]*)")
#: (the ``@`` may be typed as a fullwidth ``\uff20`` or small ``\ufe6b``, the ``:`` as a fullwidth ``\uff1a``: both read as
#: ASCII once NFKC-normalized, as some URL parsers do)
#: a password typed with a space (``http://u:pass word@host``): a space before any ``/``, then up to the last ``@`` of
#: the word holding the first ``@`` after it, with no ``//`` before it (a ``/`` may follow the space:
#: ``dp:pa ss/w@rd@host``, attack116 F2; or up to the first ``@`` of the next line, after a password's first line up to
#: its newline).  Linear: what one ``scheme://user:`` reads ends at the next ``//``, the next one's
_SPACED_USERINFO = re.compile(rf"(?P<head>{_SCHEME}//[^\s/:@]*):"
                              r"(?P<password>[^@/\n\s]*\s[^@\n/]*(?:/(?!/)[^@\n/]*)*(?:@\S*)?|[^@/\n]*\n[^@/\n]*)@")
#: ``'user:password@host'`` quoted without its scheme (how some libraries quote an address they refuse; not a
#: quoted ``'scheme://``, which :data:`_USERINFO` reads)
_QUOTED_USERINFO = re.compile(r"(?P<head>['\"][^\s'\"/:@]+):(?!//)(?P<password>[^'\"\n]*)@")
#: a password given as a parameter: ``?password=...`` / ``&sslpassword=...`` in a URL's query (libpq reads both), or
#: ``password=...`` / ``password='...'`` in libpq's ``key=value`` connection string (or ``password="..."``, attack116
#: F2: ``password="a b"`` showed ``b"``); its name with a prefix too (``PGPASSWORD=``, ``db_password=``: attack117 F5),
#: read from the start of its run; an unquoted value ends at ``&``, an ASCII space, a line break, a quote or ``#`` (a tab
#: or other whitespace inside it is masked with it: attack119 F2)
_PARAMETER = re.compile(r"(?P<head>(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*password\s*=\s*)"
                        r"(?P<password>'(?:\\.|[^'\\])*'?|\"(?:\\.|[^\"\\])*\"?|(?!\s)[^& \n\r'\"#]+)", re.IGNORECASE)
#: a parameter whose name is percent-encoded (``?pass%77ord=...``, ``&%73slpassword=...``): libpq decodes the names of a
#: URL's query too, so such a value is a password when its decoded name is (see :func:`_encoded_password`); the name is
#: the whole run, holding a ``%xx`` (a lookahead finds it: the run is read a few times, not once for each of its ``%xx``)
_ENCODED_PARAMETER = re.compile(r"(?P<head>(?<![A-Za-z0-9_%])(?=[A-Za-z0-9_%]*?%[0-9A-Fa-f]{2})(?P<key>[A-Za-z0-9_%]+)\s*=\s*"
                                r"['\"]?)(?P<password>(?:\\\S|[^&\s'\"#\\])+)")
#: a password parameter whose ``=`` is percent-encoded (``?password%3Dsecret``: a typo libpq refuses, quoting it).
#: In these two, a quote before the value is the head's (what :data:`_QUOTED_VALUE_LEFT` reads after the mask), and a
#: ``\\`` takes the character after it (``"a\\"b c"``: attack117 F4)
_ENCODED_SEPARATOR = re.compile(r"(?P<head>(?<![A-Za-z0-9_])(?:ssl)?password%3D['\"]?)(?P<password>(?:\\\S|[^&\s'\"#\\])+)",
                                re.IGNORECASE)
#: what a password parameter's mask left of its value (a quote: ``?password=it's-secret`` read
#: ``password=***'s-secret``, attack115 L1; a ``#``: ``password=ab#secret``, attack116 F2): a value ends at ``&``, a
#: space or a line break (attack119 F2), not at a quote or a ``#``; the quotes just before its end stay (``"?password%3Dsecret"`` quoted by a driver)
_QUERY_VALUE_LEFT = re.compile(r"(?P<head>(?:=|%3[Dd])\s*)\*\*\*(?:[^& \n\r]*[^& \n\r'\"])?(?=['\"]*(?![^& \n\r]))")
#: what the mask of an encoded name's or separator's quoted value left (its quote is kept before the mask, the head's):
#: up to its closing quote, an escaped one included (``pass%77ord="q r"`` showed `` r"``: attack117 F4)
_QUOTED_VALUE_LEFT = re.compile(r"(?P<head>(?:=|%3[Dd])\s*)(?:\"\*\*\*(?:\\.|[^\"\\])*\"?|'\*\*\*(?:\\.|[^'\\])*'?)")
#: in one URL (:func:`redacted_url`), what a mask left of a query parameter's value up to the next ``&`` or the URL's
#: end: a space too (``?password=a b``, attack116 F2: ``b`` was shown); the name is a run after its ``?`` or ``&``
_URL_QUERY_VALUE_LEFT = re.compile(r"(?P<head>[?&][A-Za-z0-9_%]*(?:=|%3[Dd])\s*)\*\*\*(?:[^&]*[^&'\"])?(?=['\"]*(?![^&]))")
#: ``／／user:password@``: the slashes typed fullwidth (U+FF0F, ``/`` once NFKC-normalized; attack116 F3), one or both;
#: the user name holds no slash, ``:`` or whitespace (read once: a long run of ``／`` is not read from each of its
#: characters); the password is up to the last ``@`` of its word (without one, the rest of the word is matched and
#: shown as it is)
_FULLWIDTH_USERINFO = re.compile(rf"(?P<head>(?:{_SCHEME})?(?:\uff0f[/\uff0f]|/\uff0f)[^\s/\uff0f:\uff1a]*)[:\uff1a]"
                                 r"(?:(?P<password>\S*)[@\uff20\ufe6b]|\S*)")
#: the shortest piece of a password after an ``@`` masked wherever it appears (a shorter one would mask common text)
_SHORTEST_PIECE = 3
#: the names :data:`_PARAMETER` reads, once decoded
_PASSWORD_KEYS = ("password", "sslpassword")


def redacted_url(url: str) -> str:
    """``url`` without its password (``***`` in its place); ``url`` itself when it holds none.

    Parameters
    ----------
    url : str
        A URL, or any text (masked as :func:`redacted_text` masks a line).

    Returns
    -------
    str
        The URL to show: ``postgresql://user:***@host:5432/db`` for ``postgresql://user:secret@host:5432/db``.

    Notes
    -----
    One URL is read as :func:`redacted_text` reads a line, but for a query parameter's value masked: in one URL it ends
    at the next ``&`` or the URL's end, a space included (``?password=a b``, attack116 F2); in a line, a space ends it.
    """
    return _URL_QUERY_VALUE_LEFT.sub(lambda match: f"{match.group('head')}{MASK}", redacted_text(url))


def redacted_repr(value: object, limit: int = 200) -> str:
    """``repr(value)`` as an error message shows a refused URL or path: masked as :func:`redacted_url` masks it, then
    cut to ``limit`` characters (masked first: a password ending past the cut was shown, attack115 L2; the whole
    ``repr`` is read, in a time linear in it, as ``repr`` itself is: a cut before masking shows a long password's
    start).

    Parameters
    ----------
    value : object
        The refused value.
    limit : int
        The most characters shown.

    Returns
    -------
    str
        The masked and cut ``repr``.
    """
    return redacted_url(repr(value))[:limit]


def redacted_text(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` (or quoted ``'user:password@``), and the value of
    every ``password=`` or ``sslpassword=`` (a URL's query parameter, libpq's ``key=value`` form; the name may be
    percent-encoded, ``pass%77ord=``, as libpq decodes it), replaced by ``***``.

    Parameters
    ----------
    text : str
        A line to print, log or raise (an error message naming URLs).

    Returns
    -------
    str
        The same line, its URLs' passwords masked.

    Notes
    -----
    A password parameter holding an ``@`` after a port (``postgresql://dp@host:5432/db?password=p@ssword``):
    :data:`_USERINFO` reads the user name up to the port's ``:`` and the password to the last ``@``, the parameter's;
    the name of a password parameter of the query is then kept after the mask, and its own pattern masks the rest of
    its value (``postgresql://dp@host:***@password=***``; attack114 F1 in one URL, attack116 F1 in a line: ``ssword``
    was shown).  A password parameter's value ends at ``&`` or a space, not at a quote or a ``#``
    (``?password=it's-secret``; attack115 L1, attack116 F2).  The JavaScript and Java clients' copies of it
    (:func:`dpdist._shown.shown`) show a server's text byte for byte as it does.
    """
    text = _redacted(text)
    if '"***' in text or "'***" in text:  # every match of _QUOTED_VALUE_LEFT holds one
        text = _QUOTED_VALUE_LEFT.sub(lambda match: f"{match.group('head')}{MASK}", text)
    return _QUERY_VALUE_LEFT.sub(lambda match: f"{match.group('head')}{MASK}", text)


def _redacted(text: str) -> str:
    """:func:`redacted_text` but for what a password parameter's mask left of its value."""
    # each pattern reads the text only when the text holds the ASCII punctuation every match of it holds (IGNORECASE
    # leaves punctuation as it is; the text as the patterns before left it): most lines hold no URL, and each pattern
    # read a long one whole (16 texts of 200,000 characters: 1.05 CPU-s, 0.31 so)
    if "//" in text:  # both branches of _USERINFO
        text = _USERINFO.sub(_masked_userinfo, text)
    if "\uff0f" in text:  # a fullwidth slash of _FULLWIDTH_USERINFO's two
        text = _FULLWIDTH_USERINFO.sub(_masked_userinfo, text)
    if "://" in text and "@" in text:  # a scheme's ":" and "//", an ASCII "@"
        text = _SPACED_USERINFO.sub(_masked_password, text)
    if "//" in text and "%3" in text:
        text = _ENCODED_USERINFO.sub(lambda match: f"{match.group('head')}{MASK}@" if _has_password(match)
                                     else match.group(0), text)
    if "@" in text and ":" in text and ("'" in text or '"' in text):
        text = _QUOTED_USERINFO.sub(lambda match: f"{match.group('head')}:{MASK}@", text)
    if "=" in text:
        text = _PARAMETER.sub(lambda match: f"{match.group('head')}{MASK}", text)
    if "%3" in text:
        text = _ENCODED_SEPARATOR.sub(lambda match: f"{match.group('head')}{MASK}", text)
    if "%" in text and "=" in text:
        text = _ENCODED_PARAMETER.sub(lambda match: f"{match.group('head')}{MASK}" if _encoded_password(match)
                                      else match.group(0), text)
    return text


def _masked_password(match: re.Match) -> str:
    """A match of :data:`_USERINFO` with its password masked (one with no password as it is)."""
    return f"{match.group('head')}:{MASK}@" if _has_password(match) else match.group(0)


def _masked_userinfo(match: re.Match) -> str:
    """:func:`_masked_password`, but where what the pattern took for the password holds a password parameter: the
    parameter's name is kept after the mask, for its own pattern to mask the rest of its value (see
    :func:`redacted_text`)."""
    if not _has_password(match):
        return match.group(0)
    password = match.group("password")
    query = password.find("?")  # a parameter of the query only: a password of userinfo may hold "password=" too
    parameter = None if query < 0 else _parameter_head(password[query:])
    return f"{match.group('head')}:{MASK}@" + ("" if parameter is None else parameter)


def _parameter_head(text: str) -> str | None:
    """The name and ``=`` of the first password parameter in ``text`` (as :data:`_PARAMETER`,
    :data:`_ENCODED_SEPARATOR` or :data:`_ENCODED_PARAMETER` read one), or None."""
    if "=" not in text and "%3" not in text:
        return None
    found = [match for match in (_PARAMETER.search(text), _ENCODED_SEPARATOR.search(text)) if match is not None]
    found += [match for match in _ENCODED_PARAMETER.finditer(text) if _encoded_password(match)][:1]
    return min(found, key=lambda match: match.start()).group("head") if found else None


def _has_password(match: re.Match) -> bool:
    """Whether ``match`` (of a userinfo pattern) holds a password: not a ``//user:`` with no ``@`` after it, which the
    pattern matches whole only to read it once."""
    return match.group("password") is not None


def _encoded_password(match: re.Match) -> bool:
    """Whether the percent-encoded name of ``match`` (of :data:`_ENCODED_PARAMETER`) decodes to a password's."""
    return unquote(match.group("key")).strip().lower() in _PASSWORD_KEYS


def without_password(text: str, url: str) -> str:
    """``text`` (a driver's error about ``url``) with ``url``'s passwords masked wherever they appear, as typed or
    percent-decoded (a driver may quote the password it could not read: ``invalid percent-encoded token: "p%zz"``).

    Parameters
    ----------
    text : str
        The message to show.
    url : str
        The URL the message is about.

    Returns
    -------
    str
        ``text`` masked as :func:`redacted_text` masks it, and without ``url``'s passwords anywhere in it.

    Notes
    -----
    Each password is read whole, as :func:`redacted_url` reads it (attack117 F1: libpq repeats a value it refuses,
    ``unexpected spaces found in "hunter2 SECRETTAIL"``): a query parameter's value up to the next ``&`` or the URL's
    end, a quoted one up to its closing quote.  It is masked whole, percent-decoded, and in its pieces split at spaces,
    quotes and ``@``; none shorter than :data:`_SHORTEST_PIECE` (attack117 F2: a password ``e`` masked every ``e`` of
    the message), which the URL's own patterns still mask in the URL.
    """
    found = set()
    for password in _passwords_of(url):
        for whole in (password, unquote(password)):
            found |= {whole, *re.split(r"[\s'\"@]+", whole)}
    for shown in sorted((piece for piece in found if len(piece) >= _SHORTEST_PIECE), key=len, reverse=True):
        text = text.replace(shown, MASK)
    return redacted_text(text)


def _passwords_of(url: str) -> list[str]:
    """Each password ``url`` holds, whole: its userinfo's, and each password parameter's value (up to the next ``&`` or
    the URL's end; a quoted one up to its closing quote), without its quotes."""
    userinfo = (next(filter(_has_password, pattern.finditer(url)), None)
                for pattern in (_USERINFO, _FULLWIDTH_USERINFO, _SPACED_USERINFO, _ENCODED_USERINFO))
    first = next(filter(None, userinfo), None)
    passwords = [] if first is None else [first.group("password")]
    parameters = [*_PARAMETER.finditer(url), *_ENCODED_SEPARATOR.finditer(url),
                  *filter(_encoded_password, _ENCODED_PARAMETER.finditer(url))]
    for match in parameters:
        start = match.start("password")
        end = url.find("&", start)
        value = url[start: len(url) if end < 0 else end]
        quote = match.group("head")[-1:] if match.group("head")[-1:] in ("'", '"') else value[:1]
        if quote in ("'", '"'):  # a quoted value: to its closing quote (an escaped one skipped)
            closing = re.match(rf"{quote}?(?:\\.|[^{quote}\\])*", value)
            value = closing.group(0) if closing else value
        passwords.append(value.strip("'\""))
    return passwords


def without_userinfo(url: str) -> str:
    """``url`` without its ``user:password@`` (or ``user@``): what may be given to anyone of a URL stored with one.

    Parameters
    ----------
    url : str
        An http(s) URL.

    Returns
    -------
    str
        ``https://relay.example/base`` for ``https://alice:secret@relay.example/base``; ``url`` itself when it has no
        userinfo.
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class RedactingFilter(logging.Filter):
    """Mask the password of every URL among a log record's arguments (httpx passes the request's URL as one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redacted_text(str(arg)) if "://" in str(arg) else arg for arg in record.args)
        return True


#: on httpx's logger once per process (a module is imported once)
logging.getLogger("httpx").addFilter(RedactingFilter())
