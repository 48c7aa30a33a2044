"""The Oblivious HTTP envelope (dpdist._ohttp) on RFC 9458's Appendix A, byte for byte, and its refusals.

The values below are typed in from RFC 9458, Appendix A ("Complete Example of a Request and Response"). The
chunked variant (draft-ietf-ohai-chunked-ohttp) is checked against a sender and a reader written here from the
draft's formulas, independently of the module's own code; ohttpy's variant against ohttpy itself
(tests/serve/test_ohttp_gateway_processes.py).
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

pytest.importorskip("pyhpke")

from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
from pyhpke import AEADId, CipherSuite, KDFId, KEMId  # noqa: E402

from dpdist.errors import InvalidParameterError, MalformedReportError  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist._ohttp._bhttp import Request, decode_request, decode_response, encode_request, write_varint  # noqa: E402

# ---- RFC 9458, Appendix A (typed in from the RFC's text) ----
SKR = bytes.fromhex("3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a")
KEY_CONFIG = bytes.fromhex("01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e"
                           "79815500080001000100010003")
REQUEST = bytes.fromhex("00034745540568747470730b6578616d706c652e636f6d012f")
SKE = bytes.fromhex("bc51d5e930bda26589890ac7032f70ad12e4ecb37abb1b65b1256c9c48999c73")
PKE = bytes.fromhex("4b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b472")
INFO = bytes.fromhex("6d6573736167652f626874747020726571756573740001002000010001")
ENCAPSULATED_REQUEST = bytes.fromhex("010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad1"
                                     "9dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e796"
                                     "5e7d86b83dd440b2c0185204b4d63525")
RESPONSE = bytes.fromhex("0140c8")
SECRET = bytes.fromhex("62d87a6ba569ee81014c2641f52bea36")
RESPONSE_NONCE = bytes.fromhex("c789e7151fcba46158ca84b04464910d")
SALT = bytes.fromhex("4b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b472"
                     "c789e7151fcba46158ca84b04464910d")
PRK = bytes.fromhex("979aaeae066cf211ab407b31ae49767f344e1501e475c84e8aff547cc5a683db")
AEAD_KEY = bytes.fromhex("5d0172a080e428b16d298c4ea0db620d")
AEAD_NONCE = bytes.fromhex("f6bf1aeb88d6df87007fa263")
ENCAPSULATED_RESPONSE = bytes.fromhex("c789e7151fcba46158ca84b04464910d86f9013e404feea014e7be4a441f234f"
                                      "857fbd")
KEYS = {1: SKR}


def test_the_rfc_key_configuration_reads_and_writes_back_byte_for_byte():
    (config,) = _ohttp.decode_key_list(len(KEY_CONFIG).to_bytes(2, "big") + KEY_CONFIG)
    assert config.key_id == 1 and config.kem_id == 0x0020
    assert config.symmetric == ((1, 1), (1, 3))  # AES-128-GCM and ChaCha20-Poly1305
    assert config.public_key == _ohttp.public_key_of(SKR)
    assert config.encode() == KEY_CONFIG and config.supported


def test_the_rfc_request_decapsulates_to_its_binary_http_request():
    opened = _ohttp.decapsulate_request(KEYS, ENCAPSULATED_REQUEST)
    assert opened.message == REQUEST and opened.key_id == 1
    request = decode_request(opened.message)
    assert (request.method, request.scheme, request.authority, request.path) == ("GET", "https", "example.com", "/")
    assert encode_request(request)[: len(REQUEST)] == REQUEST  # the RFC's message is ours truncated (RFC 9292 3.8)


def test_the_rfc_response_is_produced_byte_for_byte_from_the_examples_values():
    opened = _ohttp.decapsulate_request(KEYS, ENCAPSULATED_REQUEST)
    assert opened.respond(RESPONSE, response_nonce=RESPONSE_NONCE) == ENCAPSULATED_RESPONSE
    assert opened.response_content_type == "message/ohttp-res"
    assert decode_response(RESPONSE).status == 200


def test_the_key_schedule_gives_the_rfc_intermediate_values():
    assert SALT == PKE + RESPONSE_NONCE
    assert hmac.new(SALT, SECRET, hashlib.sha256).digest() == PRK  # Extract, computed here
    assert _ohttp.response_keys(SECRET, PKE, RESPONSE_NONCE) == (AEAD_KEY, AEAD_NONCE)
    suite = CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
    context = suite.create_recipient_context(PKE, suite.kem.deserialize_private_key(SKR), info=INFO)
    assert context.export(b"message/bhttp response", 16) == SECRET


def test_the_rfc_request_is_reproduced_from_its_ephemeral_key_and_its_response_opens():
    (config,) = _ohttp.decode_key_list(len(KEY_CONFIG).to_bytes(2, "big") + KEY_CONFIG)
    encapsulated, context = _ohttp.encapsulate_request(config, REQUEST, ephemeral_private_key=SKE)
    assert encapsulated == ENCAPSULATED_REQUEST
    assert context.enc == PKE
    assert context.open_response(ENCAPSULATED_RESPONSE) == RESPONSE
    tampered = bytearray(ENCAPSULATED_RESPONSE)
    tampered[-1] ^= 1
    with pytest.raises(MalformedReportError, match="does not open"):
        context.open_response(bytes(tampered))


def test_every_byte_of_the_rfc_request_is_covered():
    for index in range(len(ENCAPSULATED_REQUEST)):
        tampered = bytearray(ENCAPSULATED_REQUEST)
        tampered[index] ^= 0x40
        with pytest.raises(MalformedReportError):
            _ohttp.decapsulate_request(KEYS, bytes(tampered))


def test_an_unknown_key_id_or_suite_is_a_key_configuration_mismatch():
    with pytest.raises(_ohttp.KeyConfigMismatch, match="key id 1"):
        _ohttp.decapsulate_request({2: SKR}, ENCAPSULATED_REQUEST)
    chacha = ENCAPSULATED_REQUEST[:5] + b"\x00\x03" + ENCAPSULATED_REQUEST[7:]
    with pytest.raises(_ohttp.KeyConfigMismatch, match="0x0003"):
        _ohttp.decapsulate_request(KEYS, chacha)
    with pytest.raises(MalformedReportError, match="at least 39"):
        _ohttp.decapsulate_request(KEYS, ENCAPSULATED_REQUEST[:20])


def test_key_lists_refuse_broken_documents_by_name():
    good = len(KEY_CONFIG).to_bytes(2, "big") + KEY_CONFIG
    for broken, words in ((good[:-1], "past the end"), (b"", "no key configuration"), (good + b"\x00", "inside a length"),
                          (b"\x00\x03\x01\x00\x21", "KEM is 0x0021")):
        with pytest.raises(MalformedReportError, match=words):
            _ohttp.decode_key_list(broken)
    with pytest.raises(InvalidParameterError, match="one suite"):
        _ohttp.encapsulate_request(_ohttp.KeyConfig(1, bytes(32), ((1, 3),)), REQUEST)


# ---- the chunked variant (draft-ietf-ohai-chunked-ohttp), from the draft's formulas ----
def _suite():
    return CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)


def _chunked_request(message: bytes, chunk: int) -> tuple[bytes, object, bytes]:
    suite = _suite()
    header = bytes.fromhex("01002000010001")
    enc, sender = suite.create_sender_context(suite.kem.deserialize_public_key(_ohttp.public_key_of(SKR)),
                                              info=b"message/bhttp chunked request\x00" + header)
    parts = [message[i : i + chunk] for i in range(0, len(message), chunk)]
    body = b"".join(write_varint(len(sealed)) + sealed for sealed in (sender.seal(part, aad=b"") for part in parts))
    return header + enc + body + b"\x00" + sender.seal(b"", aad=b"final"), sender, enc


def _read_chunked_response(data: bytes, sender, enc: bytes) -> bytes:
    secret = sender.export(b"message/bhttp chunked response", 16)
    prk = hmac.new(enc + data[:16], secret, hashlib.sha256).digest()
    key = hmac.new(prk, b"key\x01", hashlib.sha256).digest()[:16]
    base = int.from_bytes(hmac.new(prk, b"nonce\x01", hashlib.sha256).digest()[:12], "big")
    offset, counter, out = 16, 0, b""
    while True:
        first = data[offset]
        size = 1 << (first >> 6)
        length = int.from_bytes(data[offset : offset + size], "big") & ((1 << (8 * size - 2)) - 1)
        offset += size
        nonce = (base ^ counter).to_bytes(12, "big")
        if length == 0:
            return out + AESGCM(key).decrypt(nonce, data[offset:], b"final")
        out += AESGCM(key).decrypt(nonce, data[offset : offset + length], b"")
        offset, counter = offset + length, counter + 1


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_a_chunked_request_opens_and_its_chunked_answer_reads_back(chunk):
    message = encode_request(Request("PUT", "https", "collector.example", "/api/campaigns/c/batches/b",
                                     ((b"content-type", b"application/octet-stream"),), b"x" * 40_000))
    encapsulated, sender, enc = _chunked_request(message, chunk if chunk < 1000 else 16384)
    if chunk < 1000:  # 40,000 tiny chunks: past the default cap, opened when the caller lifts it
        with pytest.raises(_ohttp.TooManyChunks):
            _ohttp.decapsulate_request(KEYS, encapsulated, chunked=True)
    opened = _ohttp.decapsulate_request(KEYS, encapsulated, chunked=True, max_chunks=len(encapsulated))
    assert opened.message == message and opened.response_content_type == "message/ohttp-chunked-res"
    answer = b"\x01" * 40_000
    assert _read_chunked_response(opened.respond(answer), sender, enc) == answer


def test_a_chunked_request_cut_reordered_or_without_its_final_chunk_is_refused():
    message = b"\x00\x03PUT\x05https\x00\x02/x" + b"z" * 100
    encapsulated, _, _ = _chunked_request(message, 10)
    with pytest.raises(MalformedReportError):
        _ohttp.decapsulate_request(KEYS, encapsulated[:-1], chunked=True)
    first = 39 + 1 + 26  # header, enc, the first chunk's length and its 10 + 16 bytes
    swapped = encapsulated[:39] + encapsulated[first : first + 27] + encapsulated[39:first] + encapsulated[first + 27 :]
    with pytest.raises(MalformedReportError):
        _ohttp.decapsulate_request(KEYS, swapped, chunked=True)
    final = encapsulated.rindex(b"\x00", 0, len(encapsulated) - 16)
    with pytest.raises(MalformedReportError):  # the last chunk sealed as final, announced as non-final
        _ohttp.decapsulate_request(KEYS, encapsulated[:final], chunked=True)


def test_ohttpys_unchunked_request_under_the_chunked_type_is_answered_in_its_framing():
    opened = _ohttp.decapsulate_request(KEYS, ENCAPSULATED_REQUEST, chunked=True)
    assert opened.message == REQUEST
    answer = opened.respond(RESPONSE, response_nonce=RESPONSE_NONCE)
    assert answer[:16] == RESPONSE_NONCE and answer[16] == 0 and answer[17] == len(answer) - 18
    assert AESGCM(AEAD_KEY).decrypt(AEAD_NONCE, answer[18:], b"final") == RESPONSE


def test_response_nonces_are_each_used_once_and_a_forked_process_draws_its_own():
    import os

    taken = [_ohttp._fresh_nonce() for _ in range(600)]  # past two reads of the CSPRNG
    assert len(set(taken)) == 600 and {len(nonce) for nonce in taken} == {16}
    parent_next = _ohttp._NONCES[-1]
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked child
        os.write(write, _ohttp._fresh_nonce())
        os._exit(0)
    os.close(write)
    childs = os.read(read, 16)
    os.close(read)
    os.waitpid(child, 0)
    assert len(childs) == 16 and childs != parent_next and _ohttp._fresh_nonce() == parent_next
