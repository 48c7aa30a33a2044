"""Privacy Pass tokens of type 0x0002 (publicly verifiable, blind RSA-2048): who may put one report in a relayed batch.

A device holding a credential asks an issuer (``dpdist issuer``) for a token bound to a campaign's
TokenChallenge; the issuer signs it blind, so it learns who got a token, not which token.  The
device spends the token once with its sealed report; the relay and the collector check it with
the issuer's public key alone (docs/how-to/anonymous-collection.md, "Anonymous collection").

- RFC 9474 blind RSA, variant RSABSSA-SHA384-PSS-Deterministic: :func:`blind`, :func:`blind_sign`,
  :func:`finalize`, :func:`verify` (:mod:`._blindrsa`);
- RFC 9578 token key (SPKI with id-RSASSA-PSS) and its id: :func:`encode_token_key`,
  :func:`decode_token_key`, :func:`token_key_id`, :func:`generate_private_key` (:mod:`._token_key`);
- RFC 9577/9578 messages: :class:`TokenChallenge`, :class:`TokenRequest`, :class:`Token` (:mod:`._messages`);
- the HTTP scheme: :func:`format_www_authenticate`, :func:`parse_www_authenticate`,
  :func:`format_authorization`, :func:`parse_authorization` (:mod:`._http_auth`);
- the client: :func:`request_token`, :func:`finalize_token` (:mod:`._client`), and over HTTP
  :func:`fetch_token` / :func:`fetch_token_async` (:mod:`._fetch`);
- the verifier: :func:`verify_token` returns a valid token's nonce (:mod:`._verify`).

``cryptography`` (and ``httpx`` for fetching) are imported when first used, not by ``import
dpdist.privacypass``; both come with ``dpdist[relay]`` and ``dpdist[serve]``.

>>> from dpdist import privacypass as pp
>>> key = pp.generate_private_key()
>>> token_key = pp.encode_token_key(key.public_key())
>>> challenge = pp.TokenChallenge("issuer.example", bytes(32))
>>> pending = pp.request_token(challenge, token_key)                     # on the device
>>> answer = pp.blind_sign(key, pp.TokenRequest.decode(pending.request).blinded_msg)   # at the issuer
>>> token = pp.finalize_token(pending, answer)                           # on the device
>>> len(pp.verify_token(token, token_key, challenge))                    # at the relay, at the collector
32
"""

from ._blindrsa import blind, blind_sign, finalize, verify
from ._client import PendingToken, finalize_token, request_token
from ._fetch import REQUEST_MEDIA_TYPE, RESPONSE_MEDIA_TYPE, fetch_token, fetch_token_async
from ._http_auth import (
    PrivateTokenChallenge,
    b64url_decode,
    b64url_encode,
    format_authorization,
    format_www_authenticate,
    parse_authorization,
    parse_www_authenticate,
)
from ._messages import NK, TOKEN_LENGTH, TOKEN_REQUEST_LENGTH, TOKEN_TYPE, Token, TokenChallenge, TokenRequest
from ._token_key import decode_token_key, encode_token_key, generate_private_key, token_key_id
from ._verify import verify_token

__all__ = [
    "NK",
    "REQUEST_MEDIA_TYPE",
    "RESPONSE_MEDIA_TYPE",
    "TOKEN_LENGTH",
    "TOKEN_REQUEST_LENGTH",
    "TOKEN_TYPE",
    "PendingToken",
    "PrivateTokenChallenge",
    "Token",
    "TokenChallenge",
    "TokenRequest",
    "b64url_decode",
    "b64url_encode",
    "blind",
    "blind_sign",
    "decode_token_key",
    "encode_token_key",
    "fetch_token",
    "fetch_token_async",
    "finalize",
    "finalize_token",
    "format_authorization",
    "format_www_authenticate",
    "generate_private_key",
    "parse_authorization",
    "parse_www_authenticate",
    "request_token",
    "token_key_id",
    "verify",
    "verify_token",
]
