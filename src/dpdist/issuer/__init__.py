"""``dpdist issuer``: a Privacy Pass issuer that gives each credential a bounded number of blind tokens (install ``dpdist[relay]``).

A relayed campaign admits a report only with a one-time token of its issuer key (RFC 9576-9578,
token type 0x0002: publicly verifiable blind RSA, :mod:`dpdist.privacypass`).  The issuer holds one
RSA-2048 key per campaign (a *key name*), hands its operator credentials to give out (an enrollment
list, an account system calling the admin API), and signs at most ``tokens_each`` tokens per
credential, blind: it learns who got a token, not which token.  Keys, hashed credentials and the
answers given are in one SQLite file (:mod:`._store`, private keys included); the HTTP API is
:mod:`._app`; the limits are the collection service's (:mod:`._limits`).  See
docs/how-to/anonymous-collection.md, "Anonymous collection", "The issuer".

>>> from dpdist.issuer import create_app
>>> app = create_app("issuer.sqlite", name="issuer.example.org", admin_token="...")   # doctest: +SKIP
"""

__all__ = ["create_app"]


def __getattr__(name):  # Starlette and cryptography are imported only when the issuer is built
    if name == "create_app":
        from ._app import create_app  # lazy: Starlette loads only when the issuer is built

        return create_app
    raise AttributeError(name)
