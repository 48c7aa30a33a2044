"""What :func:`dpdist.relay.create_app` accepts, checked before anything is opened: its parameter table.

The library checks what ``dpdist relay`` checks, so that a relay built in
Python cannot run with settings that defeat it: ``min_batch = 0`` formed empty
batches forever and never delivered the real reports, ``min_batch > max_batch``
delivered nothing, and an empty relay token was accepted.  Every refusal is an
:class:`~dpdist.errors.InvalidParameterError` naming the argument, the value
(a token's length only: a token is a secret) and what is allowed
(:func:`dpdist._validation.validate_params`).
"""

from __future__ import annotations

import math

from .._guard import Limits
from .._validation import HttpUrl, Below, Described, InstanceOf, Integer, Interval, Optional, Relation, SQLiteFile, Token
from .._wire._frames import MAX_SEALED_BYTES

__all__ = ["RULES", "RELATIONS", "MIN_TOKEN_CHARACTERS", "COLLECTOR", "QUEUE", "relay_token"]

#: the shortest relay or admin token accepted (as ``dpdist serve`` requires of its tokens)
MIN_TOKEN_CHARACTERS = 16

COLLECTOR = HttpUrl("an http:// or https:// URL with a host, such as https://collector.example",
                    no_userinfo=HttpUrl.TOKEN_SENT, base=True)
#: the relay's queue: a SQLite file (an in-memory one had no table for its forwarder, and kept nothing)
QUEUE = SQLiteFile("the path of the relay's SQLite queue file")


def relay_token(source: str = "") -> Token:
    """The rule of the relay's tokens (``source``: the environment variable that may hold it, for the command line)."""
    return Token(MIN_TOKEN_CHARACTERS, f"a token of at least {MIN_TOKEN_CHARACTERS} printable ASCII characters, without "
                 "surrounding spaces" + (f" (or {source})" if source else ""))


#: the rules of create_app's arguments
RULES = {
    "db_path": QUEUE,
    "collector": COLLECTOR,
    "relay_token": relay_token(),
    "admin_token": Optional(relay_token()),
    "min_batch": Described(Integer(low=1), "an int >= 1 (the smallest batch forwarded, K)"),
    "max_batch": Described(Integer(low=1), "an int >= 1 (the largest batch forwarded)"),
    "interval": Described(Interval(0.0, math.inf), "a number of seconds > 0"),
    "max_body_bytes": Described(Integer(1024, MAX_SEALED_BYTES),
                                f"an int from 1024 to {MAX_SEALED_BYTES} (the largest sealed report)"),
    "limits": Optional(InstanceOf(Limits, "a dpdist._guard.Limits (dpdist.serve's included)")),
}
#: the rules between them
RELATIONS: tuple[Relation, ...] = (
    Below("min_batch", "max_batch", strict=False, why="the smallest batch forwarded cannot be larger than the largest",
          counterexample={"collector": "https://collector.example", "relay_token": "x" * 16, "min_batch": 10,
                          "max_batch": 5}),
)
