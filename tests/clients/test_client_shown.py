"""The device clients show a server's text as Python does (dpdist._shown.shown): their own secrets masked in every
form, escaped, cut, byte for byte.

``clients/js/test/fixtures/shown.json`` holds Python's outputs for texts that echo a client's secrets in each form a
server could (as sent, percent-encoded, JSON-, Python- or HTML-escaped, in base64 at each offset), across the cut, and
texts to escape (control characters, bidi overrides, characters past U+FFFF); the JavaScript (``test/shown.test.js``)
and Java (``AnswersTest``) clients' tests compare with it, and this test checks it is Python's.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
import subprocess
from typing import Any
from urllib.parse import quote

import pytest

from dpdist._shown import shown
from js_support import ROOT, node_path

FIXTURE = ROOT / "clients" / "js" / "test" / "fixtures" / "shown.json"
#: secrets of the kinds a client holds: a token, one with URL-special and HTML-special characters, a non-ASCII password,
#: one past U+FFFF, one with a space, one shorter than what is masked
SECRETS = ["SUBMITSECRET123456", "a/b+c=d:e@f%g", "<p&'q\">", "p\u00e4ssw\u00f6rd", "k\U0001f511ey!", "two words",
           "abc"]
#: texts to escape: control characters, DEL, C1, bidi overrides, separators, NBSP, a character past U+FFFF
ESCAPED = ["x\x1b[2J\x1b]0;PWNED\x07\ty\r\nz", "a\x7f\x85\x9bb", "\u202eevil\u202c \u2066x\u2069", "l\u2028p\u2029",
           "n\u00a0b\u3000s", "e\U0001f600 \u4e2d\u6587", "z\u200bw\ufeff", "tab\\t is two characters"]


def echoes(secret: str) -> list[str]:
    """``secret`` in each form a server could echo it in."""
    data = secret.encode()
    forms = [secret, quote(secret, safe=""), re.sub("%[0-9A-F]{2}", lambda hex: hex.group(0).lower(), quote(secret, safe="")), quote(secret, safe="/:@"),
             json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1],
             "".join(f"&#{ord(c)};" for c in secret), "".join(f"&#x{ord(c):X};" for c in secret),
             secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;"),
             secret.replace(" ", "+"), "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in secret)]
    for prefix in (b"", b"u", b"u:"):
        forms += [base64.b64encode(prefix + data).decode(), base64.urlsafe_b64encode(prefix + data).decode().rstrip("=")]
    return list(dict.fromkeys(forms))


@functools.cache
def cases() -> list[dict[str, Any]]:
    """The fixture's cases: each secret's echoes in a text at three limits, cut across, with another's credential kept;
    the escaped texts; seeded texts of pieces of each."""
    rng = random.Random(85)
    chosen = [{"text": f"<p>you sent {echo} (again: {echo})\n</p>", "secrets": [secret, "other-secret"], "limit": limit}
              for secret in SECRETS for echo in echoes(secret) for limit in (200, 24)]
    chosen += [{"text": "x" * cut + secret + "y" * 50, "secrets": [secret], "limit": 40} for secret in SECRETS[:2]
               for cut in (30, 38, 41)]
    chosen += [{"text": text, "secrets": secrets, "limit": limit} for text in ESCAPED
               for secrets, limit in (([], 200), ([], 5), (["SUBMITSECRET123456"], None))]
    pieces = [*ESCAPED, *(echo for secret in SECRETS[:4] for echo in echoes(secret)), "Bearer theirs ", "%", "&", "\\"]
    chosen += [{"text": "".join(rng.choices(pieces, k=rng.randint(1, 6))), "secrets": rng.sample(SECRETS, 2),
                "limit": rng.choice([None, 30, 200])} for _ in range(120)]
    return [{**case, "shown": shown(case["text"], tuple(case["secrets"]), case["limit"])} for case in chosen]


def test_the_clients_fixture_is_what_python_shows():
    # the JS (test/shown.test.js) and Java (AnswersTest) clients' tests compare with this file; to write it again:
    # PYTHONPATH=tests uv run python tests/clients/test_client_shown.py
    assert json.loads(FIXTURE.read_text()) == cases()
    for case in cases():
        held = [secret for secret in case["secrets"] if len(secret) >= 4]
        assert not any(echo in case["shown"] for secret in held for echo in echoes(secret) if len(echo) >= 4), case
        assert "..." not in case["shown"][:-3] or case["limit"] is None or len(case["shown"]) <= case["limit"] + 3
    assert any(case["shown"] == "<p>you sent abc (again: abc)\\n</p>" for case in cases())  # too short to mask


@pytest.mark.slow  # node on the fixture: what the JS client's own suite checks (clients/js/test/shown.test.js)
def test_the_js_client_shows_a_servers_text_as_python():
    script = ("import { shown } from './clients/js/src/shown.js';"
              "let input = ''; process.stdin.on('data', (d) => { input += d; });"
              "process.stdin.on('end', () => process.stdout.write(JSON.stringify(JSON.parse(input).map("
              "(c) => shown(c.text, c.secrets, c.limit)))));")
    result = subprocess.run([node_path(), "--input-type=module", "-e", script], input=json.dumps(cases()),
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    for case, js in zip(cases(), json.loads(result.stdout), strict=True):
        assert js == case["shown"], case


if __name__ == "__main__":
    FIXTURE.write_text("[\n" + ",\n".join(json.dumps(case, ensure_ascii=True) for case in cases()) + "\n]\n")
