"""Text a server sent is shown escaped, masked and cut (attack66 F4, F5): an echo server repeating the request's
token, a refusal's detail holding ESC sequences."""

from __future__ import annotations

import pytest

from dpdist._shown import kind_of, secrets_of, shown

httpx = pytest.importorskip("httpx")

TOKEN = "AdminTok_SECRET_abcdef0123456789"


def test_control_characters_are_escaped_so_a_line_stays_one_line():
    text = shown("x\x1b[2J\x1b]0;pwned\x07 line1\nline2 \u202eevil")
    assert text == "x\\x1b[2J\\x1b]0;pwned\\x07 line1\\nline2 \\u202eevil"
    assert text.isprintable()


@pytest.mark.parametrize("echo", [
    f"bad token {TOKEN}",
    "Authorization: Bearer someone-elses-token-0123",
    "Authorization: Basic dTpQNnNzd29yZA==",
    "http://h/?token=abc123xyz&admin_token=X9",
    '{"submit_token": "s3cr3t-value"}',
    "http://u:S3cretPW@h/x",
])
def test_the_caller_s_token_and_any_credential_are_masked(echo):
    text = shown(echo, (TOKEN,))
    for secret in (TOKEN, "someone-elses-token-0123", "dTpQNnNzd29yZA", "abc123xyz", "X9", "s3cr3t-value", "S3cretPW"):
        assert secret not in text
    assert "***" in text


def test_text_is_cut_at_its_limit():
    assert shown("a" * 300, limit=10) == "a" * 10 + "..."
    assert shown("a" * 300, limit=None) == "a" * 300


def test_the_secret_is_the_credential_the_request_carried():
    request = httpx.Request("GET", "http://h/x", headers={"Authorization": f"Bearer {TOKEN}"})
    response = httpx.Response(200, headers={"Content-Type": f"text/{TOKEN}\x1b[31m; charset=x"}, request=request)
    assert secrets_of(response) == (TOKEN,)
    assert kind_of(response) == "text/***\\x1b[31m"
    assert secrets_of(httpx.Response(200)) == ()  # built without a request
    assert kind_of(httpx.Response(200)) == "no content type"


@pytest.mark.parametrize("location", ["/\\u:S3cretPW@h/x", "\\\\u:S3cretPW@h/x", "\\/u:S3cretPW@h/x"])
def test_userinfo_after_a_backslash_is_masked_as_browsers_read_it(location):
    assert "S3cretPW" not in shown(location) and ":***@h/x" in shown(location)


def test_prose_about_tokens_is_not_masked():
    """A dpdist service's own refusals speak of tokens; only values are masked."""
    for text in ("bad token: expired", "the token was spent", "Basic auth", "token_key"):
        assert shown(text) == text


def test_only_what_can_be_shown_is_read_and_a_secret_across_the_cut_is_masked_whole():
    """A body of 128 MiB was escaped and masked whole before it was cut (15 s for 32 MiB); a credential that starts
    before the cut is masked all the same."""
    text = "x" * 95 + f" Bearer {TOKEN} " + "y" * (1 << 20)
    shown_text = shown(text, (TOKEN,), 120)
    assert TOKEN[:5] not in shown_text and len(shown_text) == 123
    assert "AdminTok" not in shown("x" * 110 + " token=AdminTok_SECRET_" + "z" * 3000, limit=120)


def test_a_text_the_pre_check_passes_over_holds_nothing_any_pattern_masks():
    # masked() tries its patterns only on a text holding what every match of them holds (=, :, %, //, a fullwidth
    # slash, a Bearer/Basic scheme): every pattern, tried on the texts it passes over, must leave them as they are
    import json
    import random
    from pathlib import Path

    from dpdist._shown import _masked_all, _may_hold

    fixture = Path(__file__).resolve().parents[1] / "clients" / "js" / "test" / "fixtures" / "shown.json"
    texts = [case["text"] for case in json.loads(fixture.read_text(encoding="utf-8")) if isinstance(case["text"], str)]
    pieces = ["token", "password", "Authorization", "Bearer", "BAſIC", "bearer", " ", "\t", "\\t", "'", '"', "\\\"",
              "@", "/", "\\", "?", "&", "#", ";", ",", "<", ">", "user", "SEKRET123", "\uff20", "\uff1a", "\uff0f",
              "-", "_", "x", "\n", "*", "%3D", "%3a", "pass%77ord", "sslpassword",
              # attack118: shown masks the raw text (control characters, raw whitespace), and the new forms
              "\x1b", "\x00", "\x0b", "\x85", "\u2028", "\u202e", "\u3000", "(", "submitToken", "Token", "accessToken"]
    rng = random.Random(7)
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12))) for _ in range(20_000)]
    passed_over = [text for text in texts if not _may_hold(text)]
    assert len(passed_over) > 1_000
    assert [text for text in passed_over if _masked_all(text) != text] == []
    assert _may_hold("x Bearer abcdefgh") and _may_hold("BAſIC abcdefgh") and not _may_hold("/api/campaigns/c/batches/-")


@pytest.mark.parametrize("space", ["\t", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"])
def test_a_folded_text_masks_a_credential_holding_whitespace_whole(space):
    # attack120 F2: folded after masking; folded first, the whitespace inside became a space that ended the value, and
    # the credential's tail was shown
    text = f"a token=ABC{space}TAIL1 b password=PW{space}TAIL2 c Bearer SECRETQ{space}TAIL3 d\nsubmitToken=ABC{space}TAIL4 \n e"
    assert shown(text, (), 2000, fold=True) == "a token=*** b password=*** c Bearer *** d submitToken=*** e"
    assert shown(text, (), 2000).count("***") == 4  # as without folding


def test_a_folded_text_is_its_words_joined_by_one_space_its_cut_counting_them():
    assert shown(" \tx\x1b \n\u3000y\u2028 ", (), None, fold=True) == "x\\x1b y"  # escaped after folding
    # a long run of whitespace takes no room: what follows it is shown, as when the caller folded the text first
    assert shown(" " * 10_000 + "KEEP" + " x" * 200, (), 20, fold=True) == "KEEP x x x x x x x x..."
    # up to 8 x (limit + 4096) characters read: past them, a run of 1 MiB is not masked whole (0.3 s)
    assert shown(" " * 33_400 + "KEEP x", (), 80, fold=True) == "KEEP x"
    assert shown(" " * 33_500 + "KEEP x", (), 80, fold=True) == "" == shown("\t" * (1 << 20) + "token=x", (), 80, fold=True)
    # the request's credential holding a space, echoed with a tab: masked as it reads folded
    assert shown("bad\tpin abc\tdefgh here", ("abc defgh",), None, fold=True) == "bad pin *** here"
