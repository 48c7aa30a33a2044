"""The device clients show a server's text as Python does (dpdist._shown.shown): escaped, masked, cut, byte for byte.

The JavaScript client (``clients/js/src/shown.js``) is run by node on the same texts and credentials, and both clients'
tests compare with ``clients/js/test/fixtures/shown.json`` (checked here to be Python's); a client that
escaped or masked otherwise would put an echoed token or a raw ESC sequence in a ServiceError where Python's line has
``***`` and ``\\x1b`` (attack67 F5).
"""

from __future__ import annotations

import functools
import json
import subprocess
from typing import Any

from dpdist._shown import shown
from js_support import ROOT, node_path

SECRET = "SUBMITSECRET123456"
TEXTS = [
    "x\x1b]0;PWNED\x07",
    f"\x1b[2J\x1b[31mred\nline2 Bearer {SECRET}",
    f"you sent {SECRET} and Basic dTpPSFNFQ1JFVA== and bearer\tabcdefgh",
    "tab\there\r\nnew \u202eevil\u2028sep\u00a0nbsp \U000e0001tag \ud800 caf\u00e9 \U0001f600",
    "see http://u:pw@host/x and 'user:secret@db' and http://a:b c@h and //x:y@z and \\\\u:p@h",
    "?password=abc&token=xyz&admin_token=q1 \"submit_token\": \"s2\" token=\"t3\" pass%77ord=zz %70w=keep",
    'PrivateToken token="abcdefghijkl", bad token: expired',
    "a" * 250,
    "\u00e9" * 199 + "\U0001f600\U0001f600",
    "",
]
#: attack75 A: a copy of the credential across the cut (once at limit + len + 4096), its head moved into view by a
#: token value masked before it; with the credential, cut (whole, these texts take the URL patterns 0.1 s each)
CUT_TEXTS = [*(f"token={'A' * pad} {SECRET} " for pad in (4180, 4300, 4500, 8089)), f"{SECRET} " * 300]


#: fix76: long hostile texts, shown whole (limit None), on which a pattern read a long run again from each of its
#: characters (quadratic: minutes at this length); ``(before, repeat, times, then, then shown)``, the fixture holds them
#: so (``{"before", "repeat", "times", "then"}``, text and shown alike) and each client's test expands them
HOSTILE = [
    ("", "A", 200_000, "://u:SECRET@h", "://u:***@h"),
    ("", "A", 200_000, "://u:SEC RET@h/x", "://u:***@h/x"),
    ("", "//u:", 50_000, " http://u:SECRET@h", " http://u:***@h"),
    ("", "http://", 28_572, " //u:SECRET@h", " //u:***@h"),
    ("", "\\\\u:", 50_000, " \\\\u:SECRET@h", " \\\\u:***@h"),
    ("x=", "%41", 66_667, " pass%77ord=SECRET", " pass%77ord=***"),
    ("", "_", 200_000, " admin_token=SECRET", " admin_token=***"),
    ("", "-", 200_000, " token=SECRET", " token=***"),
]


FIXTURE = ROOT / "clients" / "js" / "test" / "fixtures" / "shown.json"


def expanded(text: str | dict[str, Any]) -> str:
    """A fixture's text (or shown text): itself, or its ``before + repeat * times + then``."""
    return text if isinstance(text, str) else text["before"] + text["repeat"] * text["times"] + text["then"]


@functools.cache
def cases() -> list[dict[str, Any]]:
    """Every text with and without the request's credentials, at three limits, and what Python shows of it (the cut
    texts with them, at two)."""
    chosen: list[dict[str, Any]] = [{"text": text, "secrets": secrets, "limit": limit}
              for text in TEXTS for secrets in ([], [SECRET, "abcdefghijkl"]) for limit in (200, 80, None)]
    chosen += [{"text": text, "secrets": [SECRET], "limit": limit} for text in CUT_TEXTS for limit in (200, 80)]
    hostile = [{"text": {"before": before, "repeat": repeat, "times": times, "then": then}, "secrets": [], "limit": None,
                "shown": {"before": before, "repeat": repeat, "times": times, "then": then_shown}}
               for before, repeat, times, then, then_shown in HOSTILE]
    return [{**case, "shown": shown(case["text"], tuple(case["secrets"]), case["limit"])} for case in chosen] + hostile


def test_the_clients_fixture_is_what_python_shows():
    # the JS (test/shown.test.js) and Java (ShownTest) clients' tests compare with this file; to write it again:
    # PYTHONPATH=tests uv run python tests/clients/test_client_shown.py
    assert json.loads(FIXTURE.read_text()) == cases()
    assert "***" in cases()[6]["shown"] and SECRET not in cases()[6]["shown"] and "\\x1b" in cases()[6]["shown"]
    # attack75 A: no piece of the credential is shown, a copy the cut crossed included (it was masked after the cut)
    assert not any(SECRET[:6] in case["shown"] for case in cases() if case["secrets"])


def test_a_long_hostile_text_is_shown_whole_and_masked_as_before():
    # fix76: 200,000 characters each (a quadratic pattern takes minutes; no timed assertion)
    hostile = [case for case in cases() if not isinstance(case["text"], str)]
    assert len(hostile) == len(HOSTILE) and all(len(expanded(case["text"])) >= 200_000 for case in hostile)
    for case in hostile:
        assert shown(expanded(case["text"]), (), None) == expanded(case["shown"]), case
        assert "SECRET" not in expanded(case["shown"])


def test_the_js_client_shows_a_servers_text_as_python():
    script = ("import { shown } from './clients/js/src/shown.js';"
              "const expanded = (t) => (typeof t === 'string' ? t : t.before + t.repeat.repeat(t.times) + t.then);"
              "let input = ''; process.stdin.on('data', (d) => { input += d; });"
              "process.stdin.on('end', () => { const cases = JSON.parse(input);"
              "process.stdout.write(JSON.stringify(cases.map((c) => shown(expanded(c.text), c.secrets, c.limit)))); });")
    result = subprocess.run([node_path(), "--input-type=module", "-e", script], input=json.dumps(cases()),
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    for case, js in zip(cases(), json.loads(result.stdout), strict=True):
        assert js == expanded(case["shown"]), case


def test_the_js_client_takes_the_requests_credential_as_python():
    script = ("import { secretsOf } from './clients/js/src/shown.js';"
              "process.stdout.write(JSON.stringify(['Bearer abcdefg', 'PrivateToken token=\"abcdefgh\"', 'Bearer abc', 'x']"
              ".map(secretsOf)));")
    result = subprocess.run([node_path(), "--input-type=module", "-e", script], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [["abcdefg"], ['token="abcdefgh"', "abcdefgh"], [], []]


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(cases(), indent=1, ensure_ascii=True) + "\n")
