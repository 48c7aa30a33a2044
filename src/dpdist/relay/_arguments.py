"""What :func:`dpdist.relay.create_app` accepts, checked before anything is opened.

The library checks what ``dpdist relay`` checks, so that a relay built in
Python cannot run with settings that defeat it: ``min_batch = 0`` formed empty
batches forever and never delivered the real reports, ``min_batch > max_batch``
delivered nothing, and an empty relay token was accepted.  Every refusal is an
:class:`~dpdist.errors.InvalidParameterError` naming the argument, the value
(a token's length only: a token is a secret) and what is allowed.
"""

from __future__ import annotations

import math
from urllib.parse import urlsplit

from ..errors import InvalidParameterError

__all__ = ["check_arguments", "MIN_TOKEN_CHARACTERS"]

#: the shortest relay or admin token accepted (as ``dpdist serve`` requires of its tokens)
MIN_TOKEN_CHARACTERS = 16
_WHERE = "of dpdist.relay.create_app"


def _refuse(name: str, allowed: str, got: str):
    raise InvalidParameterError(f"The '{name}' argument {_WHERE} must be {allowed}. Got {got}.")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _token(name: str, value, *, optional: bool) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str):
        _refuse(name, f"a str of at least {MIN_TOKEN_CHARACTERS} characters", f"a {type(value).__name__}")
    if len(value) < MIN_TOKEN_CHARACTERS or value != value.strip():
        _refuse(name, f"a str of at least {MIN_TOKEN_CHARACTERS} characters, without surrounding spaces",
                f"a str of {len(value)} characters")  # never the token itself


def check_arguments(*, collector, relay_token, min_batch, max_batch, admin_token, interval, max_body_bytes,
                    largest_body: int) -> None:
    """Refuse arguments of :func:`dpdist.relay.create_app` outside what the relay can run with (module docstring)."""
    if not isinstance(collector, str) or urlsplit(collector).scheme not in ("http", "https") or not urlsplit(collector).hostname:
        _refuse("collector", "an http:// or https:// URL with a host, such as https://collector.example", repr(collector))
    _token("relay_token", relay_token, optional=False)
    _token("admin_token", admin_token, optional=True)
    if not _is_int(min_batch) or min_batch < 1:
        _refuse("min_batch", "an int >= 1 (the smallest batch forwarded, K)", repr(min_batch))
    if not _is_int(max_batch) or max_batch < min_batch:
        _refuse("max_batch", f"an int >= min_batch ({min_batch})", repr(max_batch))
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or not math.isfinite(interval) or interval <= 0:
        _refuse("interval", "a number of seconds > 0", repr(interval))
    if not _is_int(max_body_bytes) or not 1024 <= max_body_bytes <= largest_body:
        _refuse("max_body_bytes", f"an int from 1024 to {largest_body} (the largest sealed report)", repr(max_body_bytes))
