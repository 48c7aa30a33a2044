"""The origins whose pages may call the service (``--cors-origin``, ``Operations.cors_origins``): the rules the library
and the command line state (no Starlette at import: the command line's table is built before the service is)."""

from __future__ import annotations

from .._validation import Described, Items, Text

__all__ = ["ORIGIN", "ORIGINS", "ORIGINS_TEXT"]

#: scheme://host[:port] with no path or trailing slash, or "*"
_ORIGIN = r"\*|https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?"
_WHAT = "an origin: scheme://host[:port] with no path or trailing slash (e.g. https://example.org), or '*'"
#: one origin
ORIGIN = Described(Text(pattern=_ORIGIN), _WHAT)
#: the origins of Operations.cors_origins
ORIGINS = Items(ORIGIN, "origins, each " + _WHAT)
#: the option's text: origins separated by commas (empty: none)
ORIGINS_TEXT = Described(Text(non_empty=False, pattern=rf"\s*({_ORIGIN})?\s*(,\s*({_ORIGIN})?\s*)*"),
                         _WHAT + "; several separated by commas")
