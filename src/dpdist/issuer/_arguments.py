"""The rules of :func:`dpdist.issuer.create_app`'s arguments that ``dpdist issuer serve`` states for its options too
(a module without Starlette: the command line's table is built before the issuer is)."""

from __future__ import annotations

from .._validation import Described, Items, OneOf, Optional, SQLiteFile, Text, Token

__all__ = ["ADMIN_TOKEN", "CORS_ORIGINS", "SERVER_NAME", "STORE"]

#: an origin of a page that may request tokens: scheme://host[:port], or "*"
_ORIGIN = r"\*|https?://[^/\s,]+"
#: the issuer's server name (RFC 9577, section 2.1.1.1): a host name, an optional port 1..65535
SERVER_NAME = Described(Text(pattern=r"(?=.{1,253}(:|$))[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                             r"[A-Za-z0-9])?)*(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2]"
                             r"[0-9]|6553[0-5]))?"),
                        "the issuer's server name: a host name with an optional port (RFC 9577, section 2.1.1.1), e.g. "
                        "'issuer.example.org'")
#: origins as a list, or a comma-separated string of them (the command line's --cors-origin)
CORS_ORIGINS = Optional(OneOf((
    Text(non_empty=False, pattern=rf"\s*({_ORIGIN})?\s*(,\s*({_ORIGIN})?\s*)*"),
    Items(Text(pattern=_ORIGIN), "origins"),
), "a list of origins such as 'https://example.org' (scheme://host[:port]), a comma-separated string of them, or '*'"))
#: the admin API's bearer token: sent in an HTTP header, shown by its length only
#: the issuer's store: a SQLite file (as the relay's queue; ``dpdist serve --db`` refuses an in-memory database too)
STORE = SQLiteFile("the path of the issuer's SQLite file")
ADMIN_TOKEN = Token(16, "a string of at least 16 printable ASCII characters", spaces=True)
