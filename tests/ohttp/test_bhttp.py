"""Binary HTTP (dpdist._ohttp._bhttp) on RFC 9292's examples byte for byte, against npm's bhttp-js, and its refusals.

The hex dumps are typed in from RFC 9292, section 5 (Figures 8, 9, 11 and 13), in the RFC's own groups.
bhttp-js (an implementation dpdist did not write, installed by .ci/run into the npm prefix of
dpdist.datasets.npm) reads what this codec writes and writes what it reads.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dpdist.errors import MalformedReportError
from dpdist._ohttp._bhttp import (Request, Response, _read_request, _usual_request, decode_request, decode_response,
                                 encode_request, encode_response, read_varint, write_varint)


def _dump(text: str) -> bytes:
    """The bytes of an RFC hex dump: the hex groups of each line, its ASCII rendering dropped."""
    return bytes.fromhex("".join(line[:35].replace(" ", "") for line in text.strip("\n").splitlines()))


FIGURE_8 = _dump("""
00034745 54056874 74707300 0a2f6865  ..GET.https../he
6c6c6f2e 74787440 6c0a7573 65722d61  llo.txt@l.user-a
67656e74 34637572 6c2f372e 31362e33  gent4curl/7.16.3
206c6962 6375726c 2f372e31 362e3320   libcurl/7.16.3
4f70656e 53534c2f 302e392e 376c207a  OpenSSL/0.9.7l z
6c69622f 312e322e 3304686f 73740f77  lib/1.2.3.host.w
77772e65 78616d70 6c652e63 6f6d0f61  ww.example.com.a
63636570 742d6c61 6e677561 67650665  ccept-language.e
6e2c206d 690000                      n, mi..
""")
FIGURE_9 = _dump("""
02034745 54056874 74707300 0a2f6865  ..GET.https../he
6c6c6f2e 7478740a 75736572 2d616765  llo.txt.user-age
6e743463 75726c2f 372e3136 2e33206c  nt4curl/7.16.3 l
69626375 726c2f37 2e31362e 33204f70  ibcurl/7.16.3 Op
656e5353 4c2f302e 392e376c 207a6c69  enSSL/0.9.7l zli
622f312e 322e3304 686f7374 0f777777  b/1.2.3.host.www
2e657861 6d706c65 2e636f6d 0f616363  .example.com.acc
6570742d 6c616e67 75616765 06656e2c  ept-language.en,
206d6900 00000000 00000000 00000000   mi.............
""")
FIGURE_11 = _dump("""
03406607 72756e6e 696e670a 22736c65  .@f.running."sle
65702031 35220040 67046c69 6e6b233c  ep 15".@g.link#<
2f737479 6c652e63 73733e3b 2072656c  /style.css>; rel
3d707265 6c6f6164 3b206173 3d737479  =preload; as=sty
6c65046c 696e6b24 3c2f7363 72697074  le.link$</script
2e6a733e 3b207265 6c3d7072 656c6f61  .js>; rel=preloa
643b2061 733d7363 72697074 0040c804  d; as=script.@..
64617465 1d4d6f6e 2c203237 204a756c  date.Mon, 27 Jul
20323030 39203132 3a32383a 35332047   2009 12:28:53 G
4d540673 65727665 72064170 61636865  MT.server.Apache
0d6c6173 742d6d6f 64696669 65641d57  .last-modified.W
65642c20 3232204a 756c2032 30303920  ed, 22 Jul 2009
31393a31 353a3536 20474d54 04657461  19:15:56 GMT.eta
67142233 34616133 38372d64 2d313536  g."34aa387-d-156
38656230 30220d61 63636570 742d7261  8eb00".accept-ra
6e676573 05627974 65730e63 6f6e7465  nges.bytes.conte
6e742d6c 656e6774 68023531 04766172  nt-length.51.var
790f4163 63657074 2d456e63 6f64696e  y.Accept-Encodin
670c636f 6e74656e 742d7479 70650a74  g.content-type.t
6578742f 706c6169 6e003348 656c6c6f  ext/plain.3Hello
20576f72 6c642120 4d792063 6f6e7465   World! My conte
6e742069 6e636c75 64657320 61207472  nt includes a tr
61696c69 6e672043 524c462e 0d0a0000  ailing CRLF.....
""")
FIGURE_13 = _dump("""
0140c800 1d546869 7320636f 6e74656e  .@...This conten
7420636f 6e746169 6e732043 524c462e  t contains CRLF.
0d0a0d07 74726169 6c657204 74657874  ....trailer.text
""")
HELLO = Request("GET", "https", "", "/hello.txt", (
    (b"user-agent", b"curl/7.16.3 libcurl/7.16.3 OpenSSL/0.9.7l zlib/1.2.3"), (b"host", b"www.example.com"),
    (b"accept-language", b"en, mi")))


def test_the_figure_7_request_encodes_to_figure_8_and_both_framings_decode_to_it():
    assert encode_request(HELLO) == FIGURE_8
    assert decode_request(FIGURE_8) == HELLO
    assert decode_request(FIGURE_9) == HELLO  # indeterminate length, 10 bytes of padding
    for cut in (1, 2):  # the empty content and trailer sections may be truncated (RFC 9292 section 3.8)
        assert decode_request(FIGURE_8[:-cut]) == HELLO
    assert decode_request(FIGURE_9[:-12]) == HELLO


def test_the_figure_10_response_decodes_from_figure_11_with_its_informational_responses():
    response = decode_response(FIGURE_11)
    assert [status for status, _ in response.informational] == [102, 103]
    assert response.informational[0][1] == ((b"running", b'"sleep 15"'),)
    assert [value for _, value in response.informational[1][1]] == [b"</style.css>; rel=preload; as=style",
                                                                     b"</script.js>; rel=preload; as=script"]
    assert response.status == 200 and response.content == b"Hello World! My content includes a trailing CRLF.\r\n"
    assert (b"etag", b'"34aa387-d-1568eb00"') in response.headers and len(response.headers) == 8
    assert encode_response(response)[0] == 1 and decode_response(encode_response(response)) == response


def test_the_figure_12_response_encodes_to_figure_13():
    response = Response(200, (), b"This content contains CRLF.\r\n", ((b"trailer", b"text"),))
    assert encode_response(response) == FIGURE_13
    assert decode_response(FIGURE_13) == response


@pytest.mark.parametrize("value", [0, 37, 63, 64, 15293, 16383, 16384, 494878333, 2**30, 151288809941952652, 2**62 - 1])
def test_varints_round_trip_on_the_fewest_bytes(value):
    encoded = write_varint(value)
    assert read_varint(encoded, 0) == (value, len(encoded))
    assert len(encoded) == (1 if value < 64 else 2 if value < 16384 else 4 if value < 2**30 else 8)
    # RFC 9000 appendix A.1's examples
    assert read_varint(bytes.fromhex("c2197c5eff14e88c"), 0)[0] == 151288809941952652
    assert read_varint(bytes.fromhex("9d7f3e7d"), 0)[0] == 494878333
    assert read_varint(bytes.fromhex("7bbd"), 0)[0] == 15293


@pytest.mark.parametrize("broken, words", [
    (b"\x04" + FIGURE_8[1:], "framing indicator 0 or 2"),
    (FIGURE_8[:5], "ends"),  # inside the control data
    (FIGURE_8[:40], "past"),  # inside the header section
    (FIGURE_8 + b"\x01", "zero padding"),
    (FIGURE_8.replace(b"host", b"Host"), "lower-case HTTP token"),
    (FIGURE_8.replace(b"\x04host", b"\x04:pat"), "pseudo-field"),
    (FIGURE_8.replace(b"en, mi", b"en\r\nmi"), "CR, LF"),
    (FIGURE_8.replace(b"en, mi", b" en,mi"), "white space"),
    (FIGURE_8.replace(b"https", b"ftp:x"), "http\\(s\\) scheme"),
])
def test_a_malformed_request_is_refused_by_name(broken, words):
    with pytest.raises(MalformedReportError, match=words):
        decode_request(broken)


def test_limits_bound_what_a_message_makes_the_reader_hold():
    with pytest.raises(MalformedReportError, match="more field lines"):
        decode_request(FIGURE_8, max_fields=2)
    big = encode_request(Request("PUT", "https", "", "/x", (), b"y" * 5000))
    with pytest.raises(MalformedReportError, match="limit"):
        decode_request(big, max_bytes=4096)
    with pytest.raises(MalformedReportError, match="status must be 100-599"):
        decode_response(b"\x01\x40\x63")
    with pytest.raises(MalformedReportError, match="framing indicator 1 or 3"):
        decode_response(FIGURE_8)


def test_the_usual_request_read_in_one_go_is_what_the_general_reader_reads_or_left_to_it():
    """Every byte of a device's padded request (its head, the content's first bytes, its end) changed to values that
    move a length, a field's validity or the padding, and every truncation of it: the quick reading gives the general
    reader's request, or None (left to the reader, which may refuse it)."""
    encoded = encode_request(Request("PUT", "http", "collector.example", "/api/campaigns/commute/batches/" + "0f" * 16,
                                     ((b"content-type", b"application/octet-stream"), (b"authorization", b"Bearer t")),
                                     b"\x01" * 70))
    padded = encoded + bytes(16)
    variants = [padded[:end] for end in range(len(padded) + 1)]
    for position in [*range(len(encoded) - 66), *range(len(encoded) - 4, len(padded))]:
        for value in (0x00, 0x01, 0x09, 0x0A, 0x0D, 0x20, 0x3A, 0x3F, 0x40, 0x41, 0x7F, 0x80, 0xC0, 0xFF):
            variants.append(padded[:position] + bytes([value]) + padded[position + 1 :])
    quick = 0
    for variant in variants:
        usual = _usual_request(variant, 256)
        if usual is not None:
            quick += 1
            assert usual == _read_request(variant, 1 << 24, 256), variant
    assert quick > len(variants) // 4 and _usual_request(padded, 256) == _read_request(padded, 1 << 24, 256)
    assert _usual_request(padded, 1) is None  # more fields than allowed: the reader's refusal


# ---- against bhttp-js ----
def _bhttp_js(jobs: list[dict]) -> list[dict]:
    from js_support import node_path

    prefix = Path(os.environ.get("DPDIST_NPM_PREFIX", Path.home() / ".cache" / "dpdist" / "npm"))
    if not (prefix / "node_modules" / "bhttp-js").is_dir():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"npm bhttp-js is not in {prefix}, and CI is set (.ci/run installs it).")
        pytest.skip(f"npm bhttp-js is not in {prefix} (.ci/run installs it)")
    driver = Path(__file__).resolve().parents[1] / "bhttp_js_driver.mjs"
    result = subprocess.run([node_path(), str(driver), str(prefix)], input="".join(json.dumps(j) + "\n" for j in jobs),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


BATCH = Request("PUT", "https", "collector.example", "/api/campaigns/commute/batches/0f3c",
                ((b"authorization", b"Bearer tok"), (b"content-type", b"application/octet-stream")), bytes(range(256)) * 3)


def test_bhttp_js_reads_what_this_codec_writes_and_the_reverse():
    ack = Response(200, ((b"content-type", b"application/json"),), b'{"duplicate":false}')
    ours, theirs_req, theirs_res, rfc = _bhttp_js([
        {"decodeRequest": encode_request(BATCH).hex()},
        {"encodeRequest": {"method": "PUT", "url": "https://collector.example/api/campaigns/commute/batches/0f3c",
                           "headers": [["authorization", "Bearer tok"], ["content-type", "application/octet-stream"]],
                           "body": BATCH.content.hex()}},
        {"encodeResponse": {"status": 200, "headers": [["content-type", "application/json"]],
                            "body": ack.content.hex()}},
        {"decodeResponse": FIGURE_11.hex()}])
    assert ours["method"] == "PUT" and ours["url"] == "https://collector.example/api/campaigns/commute/batches/0f3c"
    assert bytes.fromhex(ours["body"]) == BATCH.content and ["authorization", "Bearer tok"] in ours["headers"]
    decoded = decode_request(bytes.fromhex(theirs_req["hex"]))
    assert (decoded.method, decoded.authority, decoded.path, decoded.content) == (
        "PUT", "collector.example", BATCH.path, BATCH.content)
    assert decoded.header("authorization") == "Bearer tok"
    assert decode_response(bytes.fromhex(theirs_res["hex"])) == ack
    assert bytes.fromhex(theirs_res["hex"]) == encode_response(ack)  # both write the known-length framing the same
    assert rfc["status"] == 200 and bytes.fromhex(rfc["body"]) == decode_response(FIGURE_11).content
