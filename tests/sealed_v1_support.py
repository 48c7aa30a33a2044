"""A device of an earlier version, for tests of dpdist's deprecated envelope (dpdist._wire._envelope): it seals a report
as those devices did, with pyhpke (an implementation dpdist did not write), so that what the collector opens and the
relay checks during the deprecation is held to the format and not to dpdist's own opening code.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from pyhpke import AEADId, CipherSuite, KDFId, KEMId

SUITE = CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
CONTENT_TYPE = "application/vnd.dpdist.sealed-report"
_KIND = {"application/octet-stream": 1, "application/json": 2}


def public_key_of(relay: dict) -> bytes:
    """The envelope's raw public key a campaign's config or identity names (``relay.public_key``, base64url)."""
    text = relay["public_key"]
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(public_key: bytes, campaign: str, body: bytes, content_type: str, *, seed: bytes | None = None) -> bytes:
    """``body`` sealed in dpdist's envelope as a device of an earlier version sealed it (``seed``: its ephemeral key's,
    the one its token is bound to)."""
    plain = struct.pack(">BI", _KIND[content_type], len(body)) + body
    plain += bytes(-len(plain) % 256)
    header = b"\x01" + hashlib.sha256(public_key).digest()[:8]
    ephemeral = None if seed is None else SUITE.kem.derive_key_pair(seed)
    enc, sender = SUITE.create_sender_context(SUITE.kem.deserialize_public_key(public_key),
                                              info=b"dpdist relay v1\x00" + campaign.encode(), eks=ephemeral)
    return header + enc + sender.seal(plain, aad=header)
