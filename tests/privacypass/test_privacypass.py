"""Privacy Pass tokens of type 0x0002 (dpdist.privacypass), checked against every test vector of the RFCs.

Vectors (tests/data/privacypass/, each file names its source): RFC 9474 appendix A (blind RSA, the four
variants), RFC 9578 appendix A.2 (issuance of publicly verifiable tokens), RFC 9577 appendix A
(TokenChallenge and token structures, WWW-Authenticate headers).  Then round trips with fresh keys and
the ways a token can be wrong: another key, another challenge, one flipped bit, truncated, another type.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.rsa import (  # noqa: E402
    RSAPrivateNumbers,
    RSAPublicNumbers,
    rsa_crt_dmp1,
    rsa_crt_dmq1,
    rsa_crt_iqmp,
)

from dpdist import privacypass as pp  # noqa: E402
from dpdist.errors import InvalidParameterError, InvalidTokenError, SigningFailureError  # noqa: E402
from dpdist.privacypass import _blindrsa, _client  # noqa: E402

DATA = Path(__file__).parents[1] / "data" / "privacypass"
RFC9474 = json.loads((DATA / "rfc9474.json").read_text())["vectors"]
RFC9578 = json.loads((DATA / "rfc9578.json").read_text())["vectors"]
RFC9577 = json.loads((DATA / "rfc9577.json").read_text())


def _key_of(vector: dict):
    return _key(*(vector[k] for k in ("n", "e", "d", "p", "q")))


@functools.lru_cache(maxsize=None)
def _key(*numbers: str):
    n, e, d, p, q = (int(number, 16) for number in numbers)
    private = RSAPrivateNumbers(p, q, d, rsa_crt_dmp1(d, p), rsa_crt_dmq1(d, q), rsa_crt_iqmp(p, q), RSAPublicNumbers(e, n))
    return private.private_key(unsafe_skip_rsa_key_validation=True)  # the RFC's key: OpenSSL's check of a 4096-bit key takes 0.4 s


# ---------------------------------------------------------------------- RFC 9474
def test_the_rfc_9474_file_holds_its_four_variants():
    assert sorted({v["name"] for v in RFC9474}) == sorted(
        ["RSABSSA-SHA384-PSS-Randomized", "RSABSSA-SHA384-PSSZERO-Randomized", "RSABSSA-SHA384-PSS-Deterministic",
         "RSABSSA-SHA384-PSSZERO-Deterministic"])


@pytest.mark.parametrize("vector", RFC9474, ids=[f"{i}-{v['name']}" for i, v in enumerate(RFC9474)])
def test_rfc_9474_vector_byte_for_byte(vector):
    key = _key_of(vector)
    n, e = key.public_key().public_numbers().n, key.public_key().public_numbers().e
    prepared = bytes.fromhex(vector["msg_prefix"]) + bytes.fromhex(vector["msg"])  # PrepareRandomize with the vector's prefix
    assert prepared.hex() == vector["prepared_msg"]
    salt = bytes.fromhex(vector["salt"])
    assert _blindrsa.emsa_pss_encode(prepared, n.bit_length() - 1, salt).hex() == vector["encoded_msg"]
    inv = int(vector["inv"], 16)
    blinded, got_inv = _blindrsa.blind_with(n, e, prepared, salt, pow(inv, -1, n))
    assert blinded.hex() == vector["blinded_msg"] and got_inv == inv
    blind_sig = pp.blind_sign(key, blinded)
    assert blind_sig.hex() == vector["blind_sig"]
    signature = pp.finalize(key.public_key(), prepared, blind_sig, inv, salt_length=len(salt))
    assert signature.hex() == vector["sig"]
    pp.verify(key.public_key(), prepared, signature, salt_length=len(salt))
    with pytest.raises(InvalidTokenError):
        pp.verify(key.public_key(), prepared[:-1] + bytes([prepared[-1] ^ 1]), signature, salt_length=len(salt))


def test_blind_sign_is_the_same_without_gmpy2(monkeypatch):
    """Without gmpy2 the private operation falls back to Python's pow: the same signature."""
    vector = next(v for v in RFC9474 if v["name"] == "RSABSSA-SHA384-PSS-Deterministic")
    monkeypatch.setattr(_blindrsa, "_powmod", lambda: (pow, _blindrsa._python_invert, pow))
    assert pp.blind_sign(_key_of(vector), bytes.fromhex(vector["blinded_msg"])).hex() == vector["blind_sig"]


def test_blind_sign_checks_its_result_before_returning_it(monkeypatch):
    """A faulty exponentiation (a fault attack, RFC 9474 section 7.1) is caught, and nothing leaves."""
    vector = RFC9474[2]
    monkeypatch.setattr(_blindrsa, "_powmod", lambda: (lambda b, x, m: (pow(b, x, m) + 1) % m, _blindrsa._python_invert, pow))
    with pytest.raises(SigningFailureError):
        pp.blind_sign(_key_of(vector), bytes.fromhex(vector["blinded_msg"]))


def test_prepare_randomize_prefixes_32_fresh_bytes():
    a, b = _blindrsa.prepare_randomize(b"msg"), _blindrsa.prepare_randomize(b"msg")
    assert a[32:] == b[32:] == b"msg" and len(a) == 35 and a[:32] != b[:32]


# ---------------------------------------------------------------------- RFC 9578
@pytest.mark.parametrize("index", range(len(RFC9578)))
def test_rfc_9578_vector_byte_for_byte(index):
    vector = RFC9578[index]
    key = serialization.load_pem_private_key(bytes.fromhex(vector["skS"]), password=None)
    token_key = pp.encode_token_key(key.public_key())
    assert token_key.hex() == vector["pkS"]
    assert pp.decode_token_key(token_key).public_numbers() == key.public_key().public_numbers()
    challenge = bytes.fromhex(vector["token_challenge"])
    assert pp.TokenChallenge.decode(challenge).encode() == challenge
    pending = _client.request_token_with(challenge, token_key, bytes.fromhex(vector["nonce"]), bytes.fromhex(vector["salt"]),
                                         int(vector["blind"], 16))
    assert pending.request.hex() == vector["token_request"]
    request = pp.TokenRequest.decode(pending.request)
    assert request.encode() == pending.request and request.truncated_token_key_id == pp.token_key_id(token_key)[-1]
    assert pp.blind_sign(key, request.blinded_msg).hex() == vector["token_response"]
    token = pp.finalize_token(pending, bytes.fromhex(vector["token_response"]))
    assert token.hex() == vector["token"]
    assert pp.Token.decode(token).encode() == token
    assert pp.verify_token(token, token_key, challenge).hex() == vector["nonce"]
    assert pp.verify_token(token, token_key, pp.TokenChallenge.decode(challenge)).hex() == vector["nonce"]


# ---------------------------------------------------------------------- RFC 9577
@pytest.mark.parametrize("vector", RFC9577["structure"], ids=lambda v: f"type-{v['token_type']}")
def test_rfc_9577_structure_vector(vector):
    if vector["token_type"] == "0000":  # greasing: a type nobody issues, random bytes; refused, not guessed at
        data = bytes.fromhex(vector["token_authenticator_input"])
        with pytest.raises(InvalidTokenError) as caught:
            pp.Token.decode(data)
        assert caught.value.reason in ("malformed", "wrong_token_type")
        return
    challenge = pp.TokenChallenge(bytes.fromhex(vector["issuer_name"]).decode(), bytes.fromhex(vector["redemption_context"]),
                                  bytes.fromhex(vector["origin_info"]).decode(), int(vector["token_type"], 16))
    assert pp.TokenChallenge.decode(challenge.encode()) == challenge
    token_input = bytes.fromhex(vector["token_type"]) + bytes.fromhex(vector["nonce"]) + challenge.digest() + bytes.fromhex(vector["token_key_id"])
    assert token_input.hex() == vector["token_authenticator_input"]


@pytest.mark.parametrize("vector", RFC9577["headers"], ids=lambda v: f"{len([k for k in v if k.startswith('token-type')])}-challenges")
def test_rfc_9577_header_vector(vector):
    parsed = pp.parse_www_authenticate(vector["WWW-Authenticate"])
    expected = [i for i in range(3) if f"token-challenge-{i}" in vector]
    assert len(parsed) == len(expected)  # the Basic challenge is skipped, every PrivateToken one kept
    for got, i in zip(parsed, expected, strict=True):
        assert got.challenge.hex() == vector[f"token-challenge-{i}"]
        assert got.token_key.hex() == vector[f"token-key-{i}"]
        assert got.max_age == (int(vector[f"max-age-{i}"]) if f"max-age-{i}" in vector else None)
    first = parsed[0]
    again = pp.parse_www_authenticate(pp.format_www_authenticate(first.challenge, first.token_key, first.max_age))
    assert again == [first]


# ---------------------------------------------------------------------- round trips with fresh keys
@pytest.fixture(scope="module")
def keys():
    return pp.generate_private_key(), pp.generate_private_key()


@pytest.fixture(scope="module")
def issued(keys):
    """One token of key A for a campaign's challenge, and what made it."""
    key = keys[0]
    token_key = pp.encode_token_key(key.public_key())
    challenge = pp.TokenChallenge("issuer.example:8443", bytes(range(32)))
    pending = pp.request_token(challenge, token_key)
    answer = pp.blind_sign(key, pp.TokenRequest.decode(pending.request).blinded_msg)
    return token_key, challenge, pp.finalize_token(pending, answer)


def test_a_token_verifies_and_its_nonce_is_its_identity(issued):
    token_key, challenge, token = issued
    nonce = pp.verify_token(token, token_key, challenge)
    assert nonce == token[2:34] and len(token) == pp.TOKEN_LENGTH == 354
    assert pp.verify_token(bytearray(token), token_key, challenge.encode()) == nonce


def test_two_tokens_for_one_challenge_share_nothing(keys):
    """Fresh nonce, fresh blind: the issuer's view of two requests (blinded messages) and the tokens all differ."""
    token_key = pp.encode_token_key(keys[0].public_key())
    challenge = pp.TokenChallenge("issuer.example", bytes(32))
    a, b = pp.request_token(challenge, token_key), pp.request_token(challenge, token_key)
    assert a.request[:3] == b.request[:3] and a.request[3:] != b.request[3:] and a.token_input[2:34] != b.token_input[2:34]


def test_a_token_of_another_key_is_refused(keys, issued):
    token_key, challenge, token = issued
    other = pp.encode_token_key(keys[1].public_key())
    with pytest.raises(InvalidTokenError) as caught:
        pp.verify_token(token, other, challenge)
    assert caught.value.reason == "wrong_key"
    # the same token claiming the other key's id: its signature is still key A's
    forged = token[:66] + pp.token_key_id(other) + token[98:]
    with pytest.raises(InvalidTokenError) as caught:
        pp.verify_token(forged, other, challenge)
    assert caught.value.reason == "invalid_signature"


def test_a_token_of_another_challenge_is_refused(issued):
    token_key, challenge, token = issued
    for other in (pp.TokenChallenge("issuer.example:8443", bytes(32)), pp.TokenChallenge("issuer.example", bytes(range(32))),
                  pp.TokenChallenge("issuer.example:8443", bytes(range(32)), "origin.example")):
        with pytest.raises(InvalidTokenError) as caught:
            pp.verify_token(token, token_key, other)
        assert caught.value.reason == "wrong_challenge"


@pytest.mark.parametrize("bit", [0, 9, 2 * 8 + 3, 40 * 8, 70 * 8 + 7, 100 * 8, 353 * 8 + 7])
def test_one_flipped_bit_is_refused(issued, bit):
    token_key, challenge, token = issued
    flipped = bytearray(token)
    flipped[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(InvalidTokenError) as caught:
        pp.verify_token(bytes(flipped), token_key, challenge)
    byte = bit // 8
    expected = ("wrong_token_type" if byte < 2 else "invalid_signature" if byte < 34 else "wrong_challenge" if byte < 66
                else "wrong_key" if byte < 98 else "invalid_signature")
    assert caught.value.reason == expected


@pytest.mark.parametrize("cut", [0, 1, 98, 353, -1])
def test_truncated_or_longer_tokens_and_other_types_are_refused(issued, cut):
    token_key, challenge, token = issued
    data = token + b"\x00" if cut == -1 else token[:cut]
    with pytest.raises(InvalidTokenError) as caught:
        pp.verify_token(data, token_key, challenge)
    assert caught.value.reason == "malformed"
    with pytest.raises(InvalidTokenError) as caught:
        pp.verify_token(b"\x00\x01" + token[2:], token_key, challenge)  # a type 0x0001 token (privately verifiable)
    assert caught.value.reason == "wrong_token_type"
    with pytest.raises(InvalidTokenError):
        pp.verify_token("not bytes", token_key, challenge)


def test_the_verifiers_own_configuration_is_checked(issued):
    token_key, challenge, token = issued
    with pytest.raises(InvalidParameterError, match="token_key"):
        pp.verify_token(token, token_key[:-1], challenge)
    with pytest.raises(InvalidParameterError, match="token type 0x0002"):
        pp.verify_token(token, token_key, pp.TokenChallenge("issuer.example", token_type=1))
    with pytest.raises(InvalidParameterError, match="challenge"):
        pp.verify_token(token, token_key, b"\x00\x02\x00")


def test_finalize_refuses_an_answer_that_is_not_the_signature(keys):
    # the token is the smaller modulus' key, so that its blinded message is always in range for the other key to sign
    ours, other = sorted(keys[:2], key=lambda key: key.public_key().public_numbers().n)
    token_key = pp.encode_token_key(ours.public_key())
    pending = pp.request_token(pp.TokenChallenge("issuer.example"), token_key)
    blinded = pp.TokenRequest.decode(pending.request).blinded_msg
    with pytest.raises(InvalidTokenError) as caught:  # signed by another key
        pp.finalize_token(pending, pp.blind_sign(other, blinded))
    assert caught.value.reason == "invalid_signature"
    with pytest.raises(InvalidTokenError):
        pp.finalize_token(pending, bytes(255) + b"\x01")
    with pytest.raises(InvalidParameterError, match="256 bytes"):
        pp.finalize_token(pending, bytes(255))
    with pytest.raises(InvalidParameterError, match="pending"):
        pp.finalize_token(pending.request, bytes(256))


def test_blind_sign_refuses_out_of_range_and_wrong_length(keys):
    n = keys[0].public_key().public_numbers().n
    with pytest.raises(InvalidParameterError, match="out of range"):
        pp.blind_sign(keys[0], n.to_bytes(256, "big"))
    with pytest.raises(InvalidParameterError, match="256 bytes"):
        pp.blind_sign(keys[0], bytes(255))


def test_blind_and_finalize_as_the_rfc_names_them(keys):
    public = keys[0].public_key()
    message = b"a token input"
    blinded, inv = pp.blind(public, message)
    signature = pp.finalize(public, message, pp.blind_sign(keys[0], blinded), inv)
    pp.verify(public, message, signature)
    with pytest.raises(InvalidParameterError, match="salt_length"):
        pp.blind(public, message, salt_length=20)


# ---------------------------------------------------------------------- encodings
def test_the_token_key_is_the_rfc_9578_spki_and_nothing_else(keys):
    token_key = pp.encode_token_key(keys[0])  # a private key gives its public half's token key
    assert token_key == pp.encode_token_key(keys[0].public_key()) and len(token_key) == 342
    assert pp.decode_token_key(token_key).public_numbers() == keys[0].public_key().public_numbers()
    plain = keys[0].public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    bad = {
        "rsaEncryption OID": plain,
        "trailing byte": token_key + b"\x00",
        "truncated": token_key[:-1],
        "empty": b"",
        "salt 32": token_key.replace(bytes.fromhex("a203020130"), bytes.fromhex("a203020120")),
        "long-form length": token_key[:4] + bytes.fromhex("3081") + token_key[5:],
    }
    for data in bad.values():
        with pytest.raises(InvalidParameterError, match="token_key"):
            pp.decode_token_key(data)
    from cryptography.hazmat.primitives.asymmetric import rsa

    small = rsa.generate_private_key(65537, 1024)
    with pytest.raises(InvalidParameterError, match="RSA-2048"):
        pp.encode_token_key(small.public_key())
    with pytest.raises(InvalidParameterError, match="RSA-2048"):  # the same layout around a 1024-bit modulus
        from dpdist.privacypass import _token_key

        pp.decode_token_key(_token_key._encode(small.public_key().public_numbers().n, 65537))
    with pytest.raises(InvalidParameterError):
        pp.encode_token_key("not a key")


def test_token_challenges_are_checked_both_ways():
    challenge = pp.TokenChallenge("issuer.example", bytes(32), "a.example,b.example")
    data = challenge.encode()
    assert pp.TokenChallenge.decode(data) == challenge and challenge.digest() == __import__("hashlib").sha256(data).digest()
    for bad in (data + b"\x00", data[:-1], data[:1], b""):
        with pytest.raises(InvalidParameterError, match="TokenChallenge"):
            pp.TokenChallenge.decode(bad)
    with pytest.raises(InvalidParameterError, match="redemption_context"):
        pp.TokenChallenge("issuer.example", bytes(5))
    with pytest.raises(InvalidParameterError, match="issuer_name"):
        pp.TokenChallenge("")
    with pytest.raises(InvalidParameterError, match="issuer_name"):
        pp.TokenChallenge("issuér.example")
    odd = data[:20] + bytes([5]) + bytes(5) + data[53:]  # a 5-byte redemption context on the wire
    with pytest.raises(InvalidParameterError):
        pp.TokenChallenge.decode(odd)


def test_token_requests_are_checked():
    request = pp.TokenRequest(7, bytes(range(256)))
    assert pp.TokenRequest.decode(request.encode()) == request and len(request.encode()) == pp.TOKEN_REQUEST_LENGTH
    with pytest.raises(InvalidParameterError, match="259 bytes"):
        pp.TokenRequest.decode(request.encode()[:-1])
    with pytest.raises(InvalidParameterError, match="token type"):
        pp.TokenRequest.decode(b"\x00\x01" + request.encode()[2:])


def test_the_authorization_header(issued):
    _, _, token = issued
    header = pp.format_authorization(token)
    assert header.startswith('PrivateToken token="') and header.endswith('="') is False
    assert pp.parse_authorization(header) == token
    unquoted = header.replace('"', "")
    assert pp.parse_authorization(unquoted) == token  # a token value, not a quoted-string
    assert pp.parse_authorization(header.rstrip('"').rstrip("=") + '"') == token  # without the padding
    assert pp.parse_authorization("privatetoken  Token=" + header.split("=", 1)[1] + ", other=1") == token
    for bad in ("Bearer abc", 'PrivateToken other="x"', 'PrivateToken token="a*b"', "", "PrivateToken",
                f"{header}, {header}", 'PrivateToken token="abc'):
        with pytest.raises(InvalidTokenError) as caught:
            pp.parse_authorization(bad)
        assert caught.value.reason == "malformed"


def test_www_authenticate_skips_other_schemes_and_checks_its_own():
    challenge, key = pp.TokenChallenge("issuer.example").encode(), b"\x01\x02"
    header = f'Basic realm="x", Bearer abc==, {pp.format_www_authenticate(challenge, key, 10)}, Negotiate'
    assert pp.parse_www_authenticate(header) == [pp.PrivateTokenChallenge(challenge, key, 10)]
    assert pp.parse_www_authenticate('Basic realm="a, b"') == []
    assert pp.parse_www_authenticate(f"PrivateToken challenge={pp.b64url_encode(challenge)}") == [pp.PrivateTokenChallenge(challenge, None, None)]
    for bad in ('PrivateToken token-key="AAAA"', 'PrivateToken challenge="**"', 'PrivateToken challenge="AAAA", max-age=-1',
                'PrivateToken challenge="AAAA" max-age=1', '"quoted"'):
        with pytest.raises(InvalidParameterError):
            pp.parse_www_authenticate(bad)


def test_import_dpdist_privacypass_is_light():
    code = ("import sys, dpdist, dpdist.privacypass; "
            "print(sorted(m for m in ('cryptography', 'httpx', 'starlette', 'gmpy2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _privacypass_calls():
    pytest.importorskip("cryptography")
    from dpdist import privacypass as pp

    key = _issuer_key()
    token_key = pp.encode_token_key(key.public_key())
    challenge = pp.TokenChallenge("issuer.example", bytes(32))
    return [
        ("blind", lambda: pp.blind("key", b"message"), "public_key"),
        ("blind_sign", lambda: pp.blind_sign(key.public_key(), bytes(256)), "private_key"),
        ("finalize", lambda: pp.finalize(None, b"m", bytes(256), 3), "public_key"),
        ("finalize inv", lambda: pp.finalize(key.public_key(), b"m", bytes(256), "3"), "inv"),
        ("verify", lambda: pp.verify(b"key", b"m", bytes(256)), "public_key"),
        ("b64url_encode", lambda: pp.b64url_encode(2**40), "data"),  # was bytes(2**40): a MemoryError
        ("format_www_authenticate", lambda: pp.format_www_authenticate("challenge", token_key), "challenge"),
        ("format_authorization", lambda: pp.format_authorization(None), "token"),
        ("token_key_id", lambda: pp.token_key_id(2**40), "token_key"),  # was bytes(2**40)
        ("verify_token challenge", lambda: pp.verify_token(bytes(354), token_key, {"issuer": 1}), "challenge"),
        ("verify_token key", lambda: pp.verify_token(bytes(354), [1], challenge), "token_key"),
    ]


_KEY = []


def _issuer_key():
    if not _KEY:
        from dpdist import privacypass as pp

        _KEY.append(pp.generate_private_key())
    return _KEY[0]


def test_privacypass_functions_name_a_bad_argument():
    for name, call, argument in _privacypass_calls():
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()
