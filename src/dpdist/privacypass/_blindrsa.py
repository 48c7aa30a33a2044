r"""RSA blind signatures (RFC 9474): Blind, BlindSign, Finalize and Verify, with the EMSA-PSS encoding of RFC 8017.

The variant Privacy Pass token type 0x0002 uses (RFC 9578, section 6) is
**RSABSSA-SHA384-PSS-Deterministic** (RFC 9474, section 5): SHA-384, MGF1 with SHA-384, a 48-byte
salt and the identity preparation function: the defaults here.  ``salt_length=0`` gives the
PSSZERO variants and :func:`prepare_randomize` the Randomized ones (RFC 9474, section 4.1), so that
every test vector of RFC 9474's appendix A is checked.

The protocol, for a message ``msg`` and the signer's key ``(n, e, d)``:

.. math::

    m = \mathrm{OS2IP}(\mathrm{EMSA\mbox{-}PSS\mbox{-}ENCODE}(msg)),\quad
    z = m\, r^e \bmod n \;(\text{Blind}),\quad
    s' = z^d \bmod n \;(\text{BlindSign}),\quad
    s = s'\, r^{-1} \bmod n = m^d \bmod n \;(\text{Finalize})

with ``r`` uniform in ``[1, n)`` (``secrets``).  The signer sees ``z``, which is uniform whatever
``msg`` is (``r^e`` is), so it cannot link ``s`` to the request it signed (blindness).  The final
signature is an ordinary RSASSA-PSS signature (RFC 8017, section 8.1), verified here with the
``cryptography`` package.

The private operation (:func:`blind_sign`) uses the Chinese remainder theorem on the key's private
numbers, blinds its input with a fresh random ``r`` (RSA blinding, RFC 9474 section 7.1: its timing
does not depend on the message), exponentiates with GMP's constant-time ``mpz_powm_sec`` (``gmpy2``,
in the ``relay`` extra; without it Python's ``pow``, which is not constant-time in the exponent) and
checks ``s^e = m (mod n)`` before it answers (RFC 9474 section 4.3, the fault-attack safeguard).

References
----------
RFC 9474, RSA Blind Signatures (Denis, Jacobs, Wood, 2023), sections 4.1-4.5 and appendix A.
RFC 8017, PKCS #1 v2.2, sections 4.1-4.2 (I2OSP, OS2IP), 5.2 (RSASP1, RSAVP1), 8.1 (RSASSA-PSS),
9.1.1 (EMSA-PSS-ENCODE) and B.2.1 (MGF1).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameterError, InvalidTokenError, SigningFailureError
from .._validation import Bytes, Described, Integer, NamedInstanceOf, OneOf, check_param, validate_params

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey, RSAPublicKey

__all__ = ["SALT_LENGTH", "blind", "blind_sign", "finalize", "verify", "emsa_pss_encode", "prepare_randomize"]

#: the salt of RSABSSA-SHA384-PSS-Deterministic (bytes): the length of a SHA-384 digest
SALT_LENGTH = 48
_HASH_LENGTH = 48  # SHA-384


def _python_invert(x: int, modulus: int) -> int:
    return pow(x, -1, modulus)


def _powmod():
    """``(secret_powmod, invert, powmod)``: GMP's when gmpy2 is installed (``powmod_sec``, constant-time, for the
    private exponents; ``powmod`` for the public one), else Python's ``pow`` for all three."""
    try:
        import gmpy2  # lazy: optional extra (gmpy2, in dpdist[relay]), tried
    except ImportError:
        return pow, _python_invert, pow
    return gmpy2.powmod_sec, gmpy2.invert, gmpy2.powmod  # pyright: ignore[reportAttributeAccessIssue]  (gmpy2's stubs lack them)


# ---------------------------------------------------------------------- RFC 8017
def _mgf1_sha384(seed: bytes, length: int) -> bytes:
    """MGF1 with SHA-384 (RFC 8017, appendix B.2.1)."""
    blocks = (hashlib.sha384(seed + counter.to_bytes(4, "big")).digest() for counter in range(-(-length // _HASH_LENGTH)))
    return b"".join(blocks)[:length]


def emsa_pss_encode(message: bytes, em_bits: int, salt: bytes) -> bytes:
    """EMSA-PSS-ENCODE (RFC 8017, section 9.1.1) with SHA-384 and MGF1-SHA-384; ``salt`` given (its length is sLen)."""
    em_length = -(-em_bits // 8)
    if em_length < _HASH_LENGTH + len(salt) + 2:  # step 3
        raise InvalidParameterError(
            f"The RSA modulus is too short for EMSA-PSS with SHA-384 and a {len(salt)}-byte salt ({em_bits} bits) "
            "(RFC 8017, section 9.1.1: 'encoding error')."
        )
    m_hash = hashlib.sha384(message).digest()  # step 2
    h = hashlib.sha384(b"\x00" * 8 + m_hash + salt).digest()  # steps 5-6
    db = b"\x00" * (em_length - len(salt) - _HASH_LENGTH - 2) + b"\x01" + salt  # steps 7-8
    masked = int.from_bytes(db, "big") ^ int.from_bytes(_mgf1_sha384(h, len(db)), "big")  # steps 9-10
    masked &= (1 << (8 * len(db) - (8 * em_length - em_bits))) - 1  # step 11: the leftmost 8 emLen - emBits bits cleared
    return masked.to_bytes(len(db), "big") + h + b"\xbc"  # step 12


# ---------------------------------------------------------------------- keys
_RSA = "cryptography.hazmat.primitives.asymmetric.rsa"  # the key classes (an optional extra: not imported here)
#: a signer's key as an argument: public, or private (its public half is used)
_PUBLIC_KEY = NamedInstanceOf(_RSA, ("RSAPublicKey", "RSAPrivateKey"),
                              "an RSA public key (cryptography RSAPublicKey, e.g. decode_token_key(token_key))")
#: the signer's own key
_PRIVATE_KEY = NamedInstanceOf(_RSA, ("RSAPrivateKey",),
                               "an RSA private key (cryptography RSAPrivateKey, e.g. generate_private_key())")
#: the two RSABSSA-SHA384 variants' salt lengths
_SALT_LENGTH = OneOf((Integer(SALT_LENGTH, SALT_LENGTH), Integer(0, 0)),
                     f"{SALT_LENGTH} (RSABSSA-SHA384-PSS) or 0 (RSABSSA-SHA384-PSSZERO)")


def _public_numbers(key: Any) -> tuple[int, int]:
    """``(n, e)`` of a public or private ``key`` (checked by its caller's table)."""
    numbers = (key.public_key() if hasattr(key, "private_numbers") else key).public_numbers()
    return numbers.n, numbers.e


def _modulus_long(length: int) -> Described:
    """The rule of a value of the key's modulus length, ``length`` bytes."""
    return Described(Bytes(length), f"{length} bytes (the modulus length)")


# ---------------------------------------------------------------------- RFC 9474, section 4
@validate_params({"message": Bytes()})
def prepare_randomize(message: bytes) -> bytes:
    """PrepareRandomize (RFC 9474, section 4.1): 32 random bytes, then ``message`` (the Randomized variants)."""
    return secrets.token_bytes(32) + message


@validate_params({"public_key": _PUBLIC_KEY, "message": Bytes(), "salt_length": _SALT_LENGTH})
def blind(public_key: RSAPublicKey, message: bytes, *, salt_length: int = SALT_LENGTH) -> tuple[bytes, int]:
    """Blind (RFC 9474, section 4.2): the blinded message for the signer, and ``inv`` to keep for :func:`finalize`.

    Parameters
    ----------
    public_key : cryptography RSAPublicKey
        The signer's key ``(n, e)``.
    message : bytes
        The prepared message (``input_msg``; for a Privacy Pass token, the token input).
    salt_length : int
        48 (RSABSSA-SHA384-PSS, the default) or 0 (PSSZERO).

    Returns
    -------
    (blinded_msg, inv)
        ``blinded_msg``: ``modulus_len`` bytes; ``inv``: the inverse of the blinding factor ``r`` mod ``n``.
    """
    salt = secrets.token_bytes(salt_length)
    n, e = _public_numbers(public_key)
    while True:  # r uniform in [1, n) (secrets.randbelow: rejection sampling); a non-invertible r is retried (step 8)
        r = 1 + secrets.randbelow(n - 1)
        if math.gcd(r, n) == 1:
            return blind_with(n, e, message, salt, r)


def blind_with(n: int, e: int, message: bytes, salt: bytes, r: int) -> tuple[bytes, int]:
    """Blind's steps 1-12 with the salt and the blinding factor ``r`` given (the test vectors fix both)."""
    encoded = emsa_pss_encode(message, n.bit_length() - 1, salt)  # step 1 (emBits = modBits - 1, as RSASSA-PSS-SIGN)
    m = int.from_bytes(encoded, "big")  # step 3
    if math.gcd(m, n) != 1:  # steps 4-5
        raise InvalidParameterError("The encoded message is not coprime with the key's modulus: the 'public_key' is invalid (RFC 9474, section 4.2).")
    try:
        inv = pow(r, -1, n)  # step 7
    except ValueError:
        raise InvalidParameterError("The blinding factor is not invertible modulo n (RFC 9474: 'blinding error'); blind again.") from None
    z = (m * pow(r, e, n)) % n  # steps 9-10
    return z.to_bytes((n.bit_length() + 7) // 8, "big"), inv


@validate_params({"private_key": _PRIVATE_KEY, "blinded_msg": Bytes()})
def blind_sign(private_key: RSAPrivateKey, blinded_msg: bytes) -> bytes:
    """BlindSign (RFC 9474, section 4.3): the RSA private operation on ``blinded_msg``, checked before it is returned.

    CRT on the private numbers, RSA blinding with a fresh random factor, constant-time exponentiation
    when gmpy2 is installed (module docstring).

    Raises
    ------
    InvalidParameterError
        ``blinded_msg`` is not ``modulus_len`` bytes or not below ``n`` ("message representative out of range").
    SigningFailureError
        ``s^e != m (mod n)``: the computation was faulty; nothing is returned (RFC 9474, section 4.3, step 4).
    """
    numbers = private_key.private_numbers()
    n, e = numbers.public_numbers.n, numbers.public_numbers.e
    length = (n.bit_length() + 7) // 8
    m = int.from_bytes(check_param("blind_sign", "blinded_msg", blinded_msg, _modulus_long(length)), "big")
    if m >= n:
        raise InvalidParameterError("The 'blinded_msg' argument must be an integer below the modulus n (RFC 8017 RSASP1: "
                                    "'message representative out of range').")
    secret_powmod, invert, powmod = _powmod()
    while True:  # RSA blinding (Kocher 1996, section 10): the exponentiations see m r^e, not m
        r = 1 + secrets.randbelow(n - 1)
        if math.gcd(r, n) == 1:
            break
    blinded = (m * int(powmod(r, e, n))) % n
    p, q = numbers.p, numbers.q
    s_p = int(secret_powmod(blinded % p, numbers.dmp1, p))  # RSASP1 by CRT (RFC 8017, section 5.1.2, step 2.b)
    s_q = int(secret_powmod(blinded % q, numbers.dmq1, q))
    s = s_q + q * ((numbers.iqmp * (s_p - s_q)) % p)
    s = (s * int(invert(r, n))) % n
    if int(powmod(s, e, n)) != m:  # RSAVP1 and compare (step 3-4)
        raise SigningFailureError("The blind signature did not verify under the signer's own public key (RFC 9474 "
                                  "'signing failure'): nothing was returned.")
    return s.to_bytes(length, "big")


@validate_params({"public_key": _PUBLIC_KEY, "message": Bytes(), "blind_sig": Bytes(), "salt_length": _SALT_LENGTH})
def finalize(public_key: RSAPublicKey, message: bytes, blind_sig: bytes, inv: int, *, salt_length: int = SALT_LENGTH) -> bytes:
    """Finalize (RFC 9474, section 4.4): unblind ``blind_sig`` with ``inv`` and verify the signature on ``message``.

    Raises
    ------
    InvalidTokenError
        ``reason="invalid_signature"``: the signer's answer does not unblind to a valid signature.
    """
    n, _ = _public_numbers(public_key)
    length = (n.bit_length() + 7) // 8
    z = int.from_bytes(check_param("finalize", "blind_sig", blind_sig, _modulus_long(length)), "big")  # steps 1-2
    inv = check_param("finalize", "inv", inv, Described(Integer(low=1, high=n - 1), "the int in [1, n) that blind returned"))
    signature = ((z * inv) % n).to_bytes(length, "big")  # steps 3-4
    verify(public_key, message, signature, salt_length=salt_length)  # steps 5-6
    return signature


@validate_params({"public_key": _PUBLIC_KEY, "message": Bytes(), "signature": Bytes(), "salt_length": _SALT_LENGTH})
def verify(public_key: RSAPublicKey, message: bytes, signature: bytes, *, salt_length: int = SALT_LENGTH) -> None:
    """RSASSA-PSS-VERIFY (RFC 8017, section 8.1.2) with SHA-384, MGF1-SHA-384 and ``salt_length`` (RFC 9474, section 4.5).

    Raises :class:`~dpdist.errors.InvalidTokenError` (``reason="invalid_signature"``) if it does not verify.
    """
    from cryptography.exceptions import InvalidSignature  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])
    from cryptography.hazmat.primitives import hashes  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])
    from cryptography.hazmat.primitives.asymmetric import padding  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])

    pss = padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=salt_length)
    key: Any = public_key  # an RSAPrivateKey too (its table admits both): its public half verifies
    key = key.public_key() if hasattr(key, "private_numbers") else key
    try:
        key.verify(signature, message, pss, hashes.SHA384())
    except InvalidSignature:
        raise InvalidTokenError("The signature is not a valid RSASSA-PSS signature of the message under the key.",
                                reason="invalid_signature") from None
