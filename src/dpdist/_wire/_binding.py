"""A report and its Privacy Pass token are one: the token's nonce commits to the HPKE key the report is sealed with.

With each token a device draws a 32-byte ``seed`` (the CSPRNG); the HPKE ephemeral key pair of the one
report the token admits is ``DeriveKeyPair(seed)`` (RFC 9180 section 7.1.3), whose public key is the ``enc``
of that report's RFC 9458 request (:func:`~._ohttp_report.ephemeral_key`), and the token's nonce is::

    nonce = SHA-256("dpdist report binding v1" || 0x00 || challenge_digest || enc)

with ``challenge_digest = SHA-256(TokenChallenge)``, the token's own field (the campaign's challenge).  The
issuer never sees the nonce (the token request is blinded: RFC 9578 type 0x0002 issuance and the RFC 9577
token are unchanged), and ``enc`` is a fresh X25519 public key: the fresh high-entropy input RFC 9474 section
7.3 asks of a signed message.  The device gets its tokens before it randomizes anything, encapsulates the
report once with the token's key (:func:`~._ohttp_report.encapsulate_report`), keeps the request's bytes for
resends and forgets the seed once the relay acknowledged it.

The relay's admission check and the collector's verification recompute the nonce from the ``enc`` of the
message the token travels with (:func:`is_bound`, one SHA-256): a token moved onto another report, or onto
a report encapsulated again, names another ``enc`` and is refused, ``token_not_bound``.  A message with the
token's ``enc`` and other ciphertext cannot be made without the ephemeral private key or the collector's:
HPKE derives the AEAD key from their Diffie-Hellman secret (its key schedule; IND-CCA of base mode, Alwen et
al., Eurocrypt 2021), so the collector refuses such a message as ``unopened``.  Binding to ``enc`` rather
than to the request's bytes lets the token come first: the issuer's refusal (a credential exhausted) still
precedes any draw, and tokens got well before a report is sent keep issuance time apart from arrival time.
The same binding holds for a report in dpdist's deprecated envelope (:mod:`._envelope`, from a device of an
earlier version), whose ``enc`` sits at another offset (:func:`enc_of_message`).
"""

from __future__ import annotations

import hashlib
import hmac

from . import _envelope, _ohttp_report

__all__ = ["LABEL", "enc_of_message", "is_bound", "report_nonce", "seed_nonce"]

#: the domain separation of the nonce's hash
LABEL = b"dpdist report binding v1\x00"


def report_nonce(challenge_digest: bytes, enc: bytes) -> bytes:
    """The nonce of the token that admits the report sealed with ``enc`` under the challenge of ``challenge_digest``."""
    return hashlib.sha256(LABEL + bytes(challenge_digest) + bytes(enc)).digest()


def seed_nonce(challenge: bytes, seed: bytes) -> bytes:
    """The nonce a device asks its token with: the one of the report it will encapsulate with ``seed``'s key
    (``challenge``: the campaign's TokenChallenge, encoded)."""
    return report_nonce(hashlib.sha256(challenge).digest(), _ohttp_report.ephemeral_key(seed)[1])


def enc_of_message(message: bytes) -> bytes:
    """The ``enc`` of a relayed report: an RFC 9458 request's, or that of a report in dpdist's deprecated envelope (told
    apart by the first byte, as the collector does)."""
    return _ohttp_report.enc_of(message) if _ohttp_report.is_encapsulated(message) else _envelope.enc_of(message)


def is_bound(token: bytes, message: bytes) -> bool:
    """Whether ``token`` (354 bytes, verified by the caller: its challenge digest is the campaign's) names the report
    ``message`` (as the relay forwards it)."""
    token = bytes(token)
    return hmac.compare_digest(token[2:34], report_nonce(token[34:66], enc_of_message(message)))
