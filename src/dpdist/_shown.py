"""Text a server sent, as dpdist shows it in a line: masked, escaped and cut.

A refusal's detail, a success's body, a content type or a ``Location`` come from whoever answered - dpdist, or a
proxy, a captive portal, an echo server that repeats the request it got.  :func:`shown` is the one way such text
enters a message: control characters (ESC, BEL, newlines, bidi overrides) are escaped as ``\\x1b`` so a line stays a
line and cannot clear or retitle a terminal; the credential the request carried (:func:`secrets_of`), any
``Bearer``/``Basic`` credential, any ``token=``/``*_token:`` value, any ``password:`` or ``Authorization:`` value
are replaced by ``***`` (:func:`masked`), as are URLs' passwords (:func:`dpdist._redact.redacted_text`); the text
is cut.  ``fold=True`` also folds its whitespace runs into one space (a refusal's detail, a body's start), once masked:
a tab or NBSP inside a credential is masked with it, which folding first made a space that ended it (attack120 F2).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from ._redact import MASK, redacted_text

__all__ = ["shown", "masked", "secrets_of", "credentials_in", "kind_of"]

#: whitespace, or its escaped form (a server's raw text may hold a ``\\t`` as two characters: attack117 F3,
#: ``Authorization:\\tBearer x``; :func:`shown` masks before it escapes): ``\\t``, ``\\n``, ``\\r``, ``\\x0b``... of Python's whitespace
_WS = r"(?:\s|\\[tnr]|\\x(?:0[bc]|1[c-f]|85|a0)|\\u(?:1680|200[0-9a]|202[89f]|205f|3000))"
#: what ends an unquoted value: an ASCII space, a line break (``\\n``, ``\\r``) or an escaped whitespace; not a tab,
#: NEL, U+2028, NBSP or any other whitespace inside it (attack119 F2: ``token=a\\tS`` showed ``\\tS``), which is
#: masked with it
_END_WS = r"(?:[ \n\r]|\\[tnr]|\\x(?:0[bc]|1[c-f]|85|a0)|\\u(?:1680|200[0-9a]|202[89f]|205f|3000))"
#: just after whitespace's escaped form (``\\tBearer``: the ``t`` before ``Bearer`` does not make it a word's end)
_AFTER_WS = r"(?<=\\[tnr])|(?<=\\x(?:0[bc]|1[c-f]|85|a0))|(?<=\\u(?:1680|200[0-9a]|202[89f]|205f|3000))"
#: a credential after its HTTP authentication scheme (``Authorization: Bearer <token>``, ``Basic <base64>``), quoted
#: or not (``Bearer "..."``, ``Bearer \\"...\\"`` in a JSON string: attack116 F3), up to a space, a line break (or
#: an escaped whitespace: :data:`_END_WS`; it starts at no whitespace), a quote (or ``\\"``) or the end, whatever its
#: characters (``Bearer a;SECRET``: attack117 F5), when at least 6 characters long; not a placeholder
#: (``Bearer <token>``)
_CREDENTIAL = re.compile(rf"(?P<head>(?:(?<![A-Za-z0-9])|{_AFTER_WS})(?:Bearer|Basic){_WS}+(?:\\*['\"])?)"
                         rf"(?P<value>(?!<)(?!\s)(?=(?:(?!{_END_WS})(?:[^ \n\r'\"\\]|\\(?!['\"]))){{6}})"
                         rf"(?:(?!{_END_WS})(?:[^ \n\r'\"\\]|\\(?!['\"])))+)", re.IGNORECASE)
#: what ends a named value: ``&``, an ASCII space, a line break (``\\n``, ``\\r``; not a tab, NEL or other whitespace:
#: attack119 F2), a quote, ``#``, ``,``, ``;``, ``<``, ``>``; not a ``\\`` (an escaped
#: character shown as ``\\x1b``) but one before a quote (``\\"`` ends a JSON string inside a JSON string)
_VALUE = r"(?!\s)[^& \n\r'\"#,;<>]*[^& \n\r'\"#,;<>\\]"
#: a named value, quoted or not: after ``\\"`` (a JSON string inside a JSON string) up to the next ``"``; after ``"``
#: up to its closing quote, an escaped ``\\"`` included (``"password": "a\\"b"``, ``token="a b"``: attack117 F4);
#: after ``'`` up to the next ``'``; else up to what ends a value (:data:`_VALUE`)
_QUOTED_VALUE = (r"(?<=\\\")[^\"]*[^\"\\]|(?<=\")(?:\\[\s\S]|[^\"\\])+|(?<=')[^']*[^'\\]"
                 rf"|(?<!['\"]){_VALUE}")
#: a named token's value led by ``<``, ``;`` or ``,`` (``token=<S>``, ``token=;S``: attack118 F4), read as a password
#: parameter's is: up to ``&``, a space, a line break, a quote or ``#`` (and not a last ``\\``)
_LED_VALUE = r"(?<!['\"])[<;,](?:[^& \n\r'\"#]*[^& \n\r'\"#\\])?"
#: a value named as a token: ``?token=...``, ``&admin_token=...``, ``token = ...``, ``token="..."`` (PrivateToken's), a
#: JSON key's ``"submit_token": "..."`` (or ``\\"submit_token\\": \\"...\\"`` in a JSON string), a header's
#: ``X-Submit-Token: ...`` (a ``_`` or ``-`` before ``token``: attack116 F3; a letter or digit, camelCase
#: ``submitToken: ...``: attack118 F4), or ``Token: ...`` after no letter, digit, space, ``_`` or ``-`` (a line's or
#: the text's start, an escaped ``\\n``, a quote: attack117 F5; ``(``, ESC, an RLO: attack118); not prose (``bad token: expired``).  The name is read from the start of its run (``_``
#: or ``-`` before it as well as a letter): a run of ``_`` is read once, not from each of its characters
_TOKEN_VALUE = re.compile(r"(?P<head>(?:(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*token"
                          r"(?:\s*=\s*|\\*['\"]\s*:\s*|(?<=[A-Za-z0-9_-]token)\s*:\s*)"
                          rf"|(?:(?<![A-Za-z0-9 _-])|{_AFTER_WS})token\s*:\s*)(?:\\*['\"])?)"
                          rf"(?P<value>{_QUOTED_VALUE}|{_LED_VALUE})", re.IGNORECASE)
#: a password named with a ``:`` (attack116 F3), its name with a prefix or not (``DB_PASSWORD: x``, ``"db_password":
#: "x"``: attack117 F5): ``password: ...``, ``"password": "..."`` (a quoted value whole, up to its closing quote)
_NAMED_SECRET = re.compile(r"(?P<head>(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*password(?:\\*['\"])?\s*:\s*(?:\\*['\"])?)"
                           rf"(?P<value>{_QUOTED_VALUE})", re.IGNORECASE)
#: an authentication scheme's word (a token68 name: ``NTLM``, ``Digest``, ``PrivateToken``) and the whitespace after it
_SCHEME_WORD = rf"(?:[A-Za-z0-9!#$%&*+.^_`|~-]+{_WS}+)"
#: what is not a credential after ``Authorization:``: a placeholder (``Bearer <token>``), or one word of prose alone
#: (``Authorization: required``)
_NOT_CREDENTIAL = (rf"(?!{_SCHEME_WORD}?<)(?!(?:required|missing|invalid|expired|denied|failed|none|null)"
                   r"(?:[.,;!?'\"\\]|(?![\s\S])))")
#: an ``Authorization`` or ``Proxy-Authorization`` value, any scheme (attack117 F3: ``NTLM``, Digest's ``username="a",
#: response="..."``): one scheme word kept, the whole credential after it masked, to the value's end: its closing
#: quote when quoted (after ``"``, an escaped ``\\"`` included; after ``\\"`` the next ``"``), else the line's end (a
#: newline, or its escaped ``\\n`` / ``\\r``).  Unquoted, a quoted segment ``"..."`` runs to its closing quote across
#: line breaks (an unclosed one to the end), and a line break followed by a space or tab (obsolete line folding)
#: continues the value (attack119 F3).  The kept part is the group of the alternative that matched.
_AUTHORIZATION = re.compile(
    rf"(?P<head>(?:(?<![A-Za-z0-9_-])|{_AFTER_WS})(?:proxy-)?authorization(?:\\*['\"])?{_WS}*[:=]{_WS}*)"
    rf"(?:(?P<double>\"{_WS}*{_NOT_CREDENTIAL}{_SCHEME_WORD}?)(?!{_WS})(?:\\[\s\S]|[^\"\\])+"
    rf"|(?P<escaped>\\+\"{_WS}*{_NOT_CREDENTIAL}{_SCHEME_WORD}?)(?!{_WS})[^\"]*[^\"\\]"
    rf"|(?P<single>'{_WS}*{_NOT_CREDENTIAL}{_SCHEME_WORD}?)(?!{_WS})[^']*[^'\\]"
    rf"|(?!\\*['\"])(?P<plain>{_NOT_CREDENTIAL}{_SCHEME_WORD}?)(?!{_WS})"
    r"(?:\"(?:\\[\s\S]|[^\"\\])*\"?|[^\\\n\r\"]|\\(?![nr])|(?:\r\n?|\n)(?=[ \t]))+)", re.IGNORECASE)
#: ``/\\user:password@host`` (or ``\\/``, ``\\\\``): WHATWG URL parsers (browsers) read a ``\\`` as a ``/``, so this is
#: userinfo too, which :func:`dpdist._redact.redacted_text` (``//`` only) leaves; without an ``@`` after the ``:``, the
#: rest of the word is matched and shown as it is (read once: no later ``//user:`` of the word has an ``@`` either)
_BACKSLASHED_USERINFO = re.compile(r"(?P<head>[/\\][/\\][^\s/\\:@]*):(?:(?P<value>[^\s@]*)@|[^\s@]*)")
#: the scheme of :data:`_CREDENTIAL`, read with its case-insensitive matching (only ``b`` and ``B`` fold to ``b``; the
#: rest as that pattern reads it: ``BAſIC``), for :func:`_may_hold`
_SCHEME_NAME = re.compile(r"[bB](?i:earer|asic)")
#: the shortest credential masked wherever it appears (a shorter one would mask common words)
_SHORTEST_SECRET = 6
#: a word of a text folded into one line (:func:`shown`'s ``fold``): a run of what is not whitespace to ``str.split``
_WORD = re.compile(r"\S+")
#: the characters read past a cut: a credential or URL password that starts before it is masked whole if it ends
#: within them (a longer one's start is masked by its pattern's head, or shown cut)
_ROOM = 4096
#: of a text :func:`shown` folds, the most characters read before masking: this many times what is shown and its room
#: (whitespace takes no room once folded, but is masked: a detail of 1 MiB of tabs took 0.3 s to mask whole)
_FOLDED_READ = 8


def secrets_of(response: Any) -> tuple[str, ...]:
    """The credential the request of ``response`` carried (its ``Authorization`` header's, without the scheme; a
    ``PrivateToken token="..."``'s token too), to be masked in whatever the answer repeats; () without one."""
    try:
        value = response.request.headers.get("Authorization", "")
    except RuntimeError:  # a response built without its request
        return ()
    return credentials_in(value)


def credentials_in(value: str) -> tuple[str, ...]:
    """The credential an ``Authorization`` header's ``value`` carries (:func:`secrets_of`), longest first: what a
    request sent, to be masked wherever a text repeats it."""
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if "token=" not in credential and scheme.lower() != "basic":  # the usual Bearer credential: itself alone (every
        return (credential,) if len(credential) >= _SHORTEST_SECRET else ()  # access line reads it: 2.6 -> 0.9 us)
    found = [credential, *re.findall(r"token=\"?([^\",\s]+)", credential)]
    if scheme.lower() == "basic":  # user:password in base64: the password may be echoed decoded too (attack67 F14)
        try:
            user_password = base64.b64decode(credential, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), or not UTF-8
            user_password = ""
        found += [user_password, user_password.partition(":")[2]] if ":" in user_password else []
    return tuple(sorted({part for part in found if len(part) >= _SHORTEST_SECRET}, key=len, reverse=True))


def shown(text: str, secrets: tuple[str, ...] = (), limit: int | None = 200, *, fold: bool = False) -> str:
    """``text`` as one line to show: ``secrets`` and any credential masked, then (``fold``) its whitespace folded, then
    control characters escaped, cut.

    Parameters
    ----------
    text : str
        What a server sent (a body's start, a header's value, a refusal's detail).
    secrets : tuple of str
        The caller's own credentials (:func:`secrets_of`), replaced by ``***`` wherever they appear.
    limit : int or None
        The most characters shown (``...`` marks a cut); None: all.
    fold : bool
        Whether each run of whitespace (tabs, line breaks, NBSP...) is shown as one space, none at either end, as
        ``" ".join(text.split())`` (a refusal's detail on one line); after masking, so that whitespace a credential
        holds is masked with it (``token=a\\tb`` reads ``token=***``; folded first it read ``token=*** b``, attack120
        F2); the cut counts the folded text's characters (of at most 8 x ``limit + 4096`` read).

    Returns
    -------
    str
        ``'x\\x1b[2J Bearer ***'`` for ``'x\\x1b[2J Bearer admin-token'``.
    """
    for secret in secrets:  # in the whole text (linear): a copy the cut below crossed would show its head (attack75 A)
        text = text.replace(secret, MASK)
    if limit is not None:  # only what can be shown is escaped (a body of 120 MB took 15 s whole), with room for a
        # credential that starts before the cut (its patterns mask a cut one from its head)
        text = _folded_start(text, limit + _ROOM) if fold else text[: limit + _ROOM]
    text = masked(text)  # the raw text, before escaping (attack118 F1, F2: an escaped ``\\t`` or ``\\x1b`` read as a
    # value or as a word's end); escaping after it leaves a ``***`` whole and a line one line
    if fold:  # once masked (attack120 F2); a credential holding whitespace, echoed with other whitespace, folded too
        text = _folded_secrets_masked(" ".join(text.split()), secrets)
    if not text.isprintable():  # (one pass in C over a text with nothing to escape, the usual one)
        text = "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def _folded_start(text: str, length: int) -> str:
    """The start of ``text`` that folds into ``length`` characters (its words joined by one space), all of it if it
    folds into fewer, within its first :data:`_FOLDED_READ` x ``length`` characters: what :func:`shown` masks of a text
    it folds (a run of whitespace takes no room, up to that bound)."""
    if len(text) <= length:
        return text
    joined = -1  # the length of the words read so far, joined
    for word in _WORD.finditer(text, 0, _FOLDED_READ * length):
        joined += 1 + word.end() - word.start()
        if joined >= length:
            return text[: word.end() - (joined - length)]
    return text[: _FOLDED_READ * length]


def _folded_secrets_masked(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` (folded) with each of ``secrets`` that holds whitespace masked in its folded form too (echoed with a tab
    for its space, it reads so once folded), when that is :data:`_SHORTEST_SECRET` characters long at least."""
    for secret in secrets:
        folded = " ".join(secret.split())
        if secret.split() != [secret] and len(folded) >= _SHORTEST_SECRET:  # it holds whitespace
            text = text.replace(folded, MASK)
    return text


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
    return _masked_all(text) if _may_hold(text) else text  # most texts hold none (an access line's path: 10 -> 2 us)


def _masked_all(text: str) -> str:
    """:func:`masked`, every pattern tried."""
    text = _CREDENTIAL.sub(lambda match: f"{match.group('head')}{MASK}", redacted_text(text))
    if "=" in text or ":" in text:  # every match of _TOKEN_VALUE holds one (as redacted_text's patterns)
        text = _TOKEN_VALUE.sub(lambda match: f"{match.group('head')}{MASK}", text)
    if ":" in text and ("/" in text or "\\" in text):  # and of _BACKSLASHED_USERINFO
        text = _BACKSLASHED_USERINFO.sub(lambda match: f"{match.group('head')}:{MASK}@" if match.group("value") is not None
                                         else match.group(0), text)
    if ":" in text:  # and of _NAMED_SECRET
        text = _NAMED_SECRET.sub(lambda match: f"{match.group('head')}{MASK}", text)
    if ":" in text or "=" in text:  # and of _AUTHORIZATION
        text = _AUTHORIZATION.sub(_masked_authorization, text)
    return text


def _may_hold(text: str) -> bool:
    """Whether ``text`` may hold what :func:`masked` masks: every match of its patterns (and of
    :func:`dpdist._redact.redacted_text`'s) holds ``=``, ``:``, ``%``, ``//``, a fullwidth slash or a ``Bearer``/``Basic``
    scheme."""
    return ("=" in text or ":" in text or "%" in text or "//" in text or "\uff0f" in text
            or _SCHEME_NAME.search(text) is not None)


def _masked_authorization(match: re.Match) -> str:
    """A match of :data:`_AUTHORIZATION`: its name, quote and scheme kept, its credential ``***``."""
    kept = next(part for part in match.group("double", "escaped", "single", "plain") if part is not None)
    return f"{match.group('head')}{kept}{MASK}"


def kind_of(response: Any) -> str:
    """The content type of ``response`` as shown (without parameters): ``text/html``, or ``no content type``."""
    kind = response.headers.get("Content-Type", "").split(";")[0].strip()
    return shown(kind, secrets_of(response), 60) or "no content type"
