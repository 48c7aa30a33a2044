"""How the command line reports a failure: one line naming what the user typed, never a traceback.

Library errors name parameters the way Python callers pass them ("The 'column'
argument of ...", "The 'bounds' parameter of SW ...").  On the command line the
user typed an option instead, so :func:`user_message` names the option (``--column``)
when the user gave it.  Anything that is not a dpdist error is a bug of dpdist:
it is reported in one line too, with how to see the traceback.  The command's secrets are masked in every line it
writes (:mod:`._secrets`), these included.
"""

from __future__ import annotations

import os
import re
import traceback


__all__ = ["user_message", "internal_error_message", "memory_message", "proxy_message", "TRACEBACK_VARIABLE"]

#: the variables httpx reads a proxy from
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

#: Set this environment variable to see the traceback of an unexpected error.
TRACEBACK_VARIABLE = "DPDIST_TRACEBACK"

_NAMED = re.compile(r"^The '(?P<name>[A-Za-z_][A-Za-z0-9_]*)' (?:argument|parameter)(?: of [^ ]+(?: [^ ]+)??)? must ")


def typed_options(argv) -> set[str]:
    """The long options on a command line, e.g. ``{"--column", "--epsilon"}``."""
    return {word.split("=", 1)[0] for word in argv if word.startswith("--")}


#: The positional argument (its metavar in ``--help``) that holds a data file, by command: a library
#: error about its ``'path' argument`` names it so.
_FILE_ARGUMENTS = {"estimate": "FILE", "release": "FILE", "privatize": "DATA", "submit": "DATA", "aggregate": "FILE"}

#: Library parameters the command line sets from options of other names (a column: several, with --columns).
_OPTION_OF = {"domain_size": ("--bins",), "column": ("--columns",)}


def user_message(error: Exception, argv) -> str:
    """``error``'s message, opening with the option the user typed when it names one.

    ``"The 'column' argument must be one of ..."`` becomes ``"--column must be one of ..."``
    when ``--column`` is on the command line; ``"The 'path' argument ..."`` names the
    command's file argument (``FILE``, ``DATA``); ``domain_size`` is ``--bins`` when the user
    gave ``--bins``, ``column`` is ``--columns`` when the user gave ``--columns``.  Other messages are kept as they are,
    on one line.
    """
    text = " ".join(str(error).split())
    match = _NAMED.match(text)
    if match:
        name = match.group("name")
        typed = typed_options(argv)
        option = next((option for option in _OPTION_OF.get(name, ()) if option in typed), "--" + name.replace("_", "-"))
        if option in typed:
            return f"{option} must {text[match.end():]}"
        command = next((word for word in argv if not word.startswith("-")), None)
        if name == "path" and command in _FILE_ARGUMENTS:
            return f"{_FILE_ARGUMENTS[command]} must {text[match.end():]}"
    return text


def internal_error_message(error: BaseException) -> str:
    """One line for an error dpdist did not expect (a bug): what it was and how to see more."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return (
        f"internal error {type(error).__name__}{': ' + first if first else ''} "
        f"(a bug of dpdist: please report it; set {TRACEBACK_VARIABLE}=1 to see the traceback)"
    )


def memory_message(error: MemoryError, command: str | None) -> str:
    """One line for memory running out (``MemoryError``), naming what ran out and in which command: not a bug of dpdist
    but of the machine's limits, or of the work asked for at once."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else "no size given"
    where = f" running 'dpdist {command}'" if command else ""
    return (f"memory ran out{where} ({first}); give it more memory, or less work at once (e.g. a smaller "
            "--batch-size or input).")


def proxy_message(error: BaseException, environ=None) -> str | None:
    """One line for httpx refusing the proxy an environment variable names (``HTTP_PROXY=ftp://...``: ValueError,
    ``ALL_PROXY=socks5://...`` without socksio: ImportError), naming the variable; None for any other error."""
    environ = os.environ if environ is None else environ
    given = [(name, environ[name]) for name in PROXY_VARIABLES if environ.get(name)]
    if not given or not isinstance(error, (ValueError, ImportError)):
        return None
    if not any("/httpx/" in frame.filename.replace("\\", "/") for frame in traceback.extract_tb(error.__traceback__)):
        return None
    named = ", ".join(f"{name}={value!r}" for name, value in given)
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (f"The proxy environment variable(s) {named} cannot be used: {first} (httpx takes an http://, "
            "https:// or socks5:// proxy; socks5 needs 'pip install httpx[socks]'). Correct or unset it.")
