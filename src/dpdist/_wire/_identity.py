"""A relayed campaign's identity: the public document a device trusts, its pin, and the campaign's token challenge.

The relay passes the collector's pages on, so it could hand a device another HPKE key (and read what
the device seals to it) or another protocol config (a larger epsilon with the same report format);
and the collector writes the config, so it could hand one device a config of its own (a tag that
finds its report in the shuffled batch).  A relayed campaign therefore has one **identity**: a
document made once, when the campaign is created, stored and served verbatim
(``GET /api/campaigns/{c}/identity``), and its **pin**, the SHA-256 of its bytes.  A device takes
config, key and issuer from the identity only, from a source the relay does not control (the
collector, or anyone when the device was given the pin), and sends the pin with every report; the
relay pins the identity of each campaign the first time it admits a report and refuses any other,
so every admitted report of a campaign was made under the same identity (docs/how-to/anonymous-collection.md,
"Anonymous collection", "Keys the relay cannot swap")::

    {"campaign", "colluding", "config", "delta",
     "issuer": null | {"independent", "key", "name", "token_key", "token_type": 2, "tokens_each", "url"},
     "relay": {"aead", "ids", "kdf", "kem", "key_id", "ohttp", "public_key", "url"}}

written with sorted keys, no spaces and ASCII escapes.  ``relay.ohttp`` (campaigns made since dpdist's relay took
Oblivious HTTP requests; absent before): the campaign's Oblivious HTTP key configuration, ``application/ohttp-keys``
in base64url (:mod:`._ohttp_report`), so the pin covers it as it covers the envelope's key.  ``colluding`` counts devices (credentials of the
issuer) that are the collector's or the relay's, or give either their values or tokens, and the issuer's
``tokens_each`` (the ceiling it publishes with its key) the reports each of them may send: the campaign's guarantee
counts ``colluding x tokens_each`` reports as not honest devices' (:mod:`dpdist.amplification._statement`).  The
campaign's Privacy Pass TokenChallenge (RFC 9577 section 2.1.1) binds its tokens to that identity (and each token's
nonce to the one report it admits: :mod:`._binding`): token
type 2, the issuer's name, ``redemption_context = SHA-256("dpdist campaign v3\0" | pin)`` (the pin's 32
bytes) and no origin info (any relay).  An identity made before issuers published ``tokens_each`` (its
issuer has none) keeps the label ``"dpdist campaign v2\0"``; the new label makes a device of that earlier
version refuse an identity that states ``tokens_each`` (the challenge it derives is not the one the
campaign's config publishes: ``challenge_mismatch``), rather than take it without checking the ceiling.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from typing import Any

from .._validation import Described, Text, validate_params
from ..errors import CampaignIdentityError
from ..privacypass import TokenChallenge
from . import _envelope, _ohttp_report

__all__ = ["PIN_HEADER", "campaign_challenge", "check_identity", "context_label", "identity_document", "pin_of",
           "redemption_context"]

#: the redemption context's label of an identity whose issuer states ``tokens_each``, and of one made before (module docstring)
CONTEXT_LABEL = b"dpdist campaign v3\x00"
EARLIER_CONTEXT_LABEL = b"dpdist campaign v2\x00"
_PIN = re.compile(r"[0-9a-f]{64}")
#: the header that carries a report's pin to the relay
PIN_HEADER = "Dpdist-Pin"


def context_label(issuer: dict) -> bytes:
    """The label of the redemption context of a campaign whose identity names ``issuer`` (module docstring)."""
    return CONTEXT_LABEL if "tokens_each" in issuer else EARLIER_CONTEXT_LABEL


def redemption_context(pin: str, label: bytes = CONTEXT_LABEL) -> bytes:
    """The 32-byte redemption context that binds a campaign's tokens to its identity (its pin)."""
    return hashlib.sha256(label + bytes.fromhex(pin)).digest()


def campaign_challenge(issuer: dict, pin: str) -> bytes:
    """The TokenChallenge of the campaign whose identity has ``pin`` and names ``issuer``, encoded (RFC 9577 section
    2.1.1)."""
    return TokenChallenge(issuer["name"], redemption_context(pin, context_label(issuer))).encode()


def identity_document(campaign: str, config: dict, *, relay_url: str, public_key: bytes, issuer: dict | None,
                      colluding: int, delta: float, ohttp_public_key: bytes | None = None) -> bytes:
    """The identity document's bytes (module docstring).  ``issuer``: ``{"url", "name", "key", "token_key",
    "independent", "tokens_each"}`` (the token key base64url), or None for a campaign without admission tokens;
    ``ohttp_public_key``: the X25519 key of the campaign's Oblivious HTTP key configuration (``relay.ohttp``,
    :mod:`._ohttp_report`), None for a campaign made before it had one."""
    relay = {**_envelope.public_key_config(public_key), "url": relay_url}
    if ohttp_public_key is not None:
        relay["ohttp"] = _b64(_ohttp_report.key_list(ohttp_public_key))
    issued = None if issuer is None else {**issuer, "token_type": 2}
    document = {"campaign": campaign, "config": config, "relay": relay, "issuer": issued, "colluding": int(colluding),
                "delta": float(delta)}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def pin_of(identity: bytes) -> str:
    """The campaign's pin: the lowercase hex SHA-256 of its identity document's bytes."""
    return hashlib.sha256(identity).hexdigest()


@validate_params({"pin": Described(Text(pattern=r"[0-9a-fA-F]{64}"), "the campaign's pin: 64 hexadecimal digits")})
def check_identity(identity: bytes, pin: Any, campaign: str) -> dict:
    """The identity document of ``campaign`` if its bytes hash to ``pin`` (:class:`CampaignIdentityError` if not)."""
    if not hmac.compare_digest(pin_of(identity), pin.lower()):
        raise CampaignIdentityError(
            f"The identity of campaign {campaign!r} does not match the pin given: whoever served it changed the "
            "campaign's key, config or issuer. Nothing was sent.", "pin_mismatch")
    document = json.loads(identity)
    if not isinstance(document, dict) or document.get("campaign") != campaign or not isinstance(document.get("relay"), dict):
        raise CampaignIdentityError(f"The pinned identity is not campaign {campaign!r}'s. Nothing was sent.", "pin_mismatch")
    return document


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
