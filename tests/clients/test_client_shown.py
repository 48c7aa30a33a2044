"""The device clients show a server's text as Python does (dpdist._shown.shown): escaped, masked, cut, byte for byte.

The JavaScript client (``clients/js/src/shown.js``) is run by node on the same texts and credentials, and both clients'
tests compare with ``clients/js/test/fixtures/shown.json`` (checked here to be Python's); a client that
escaped or masked otherwise would put an echoed token or a raw ESC sequence in a ServiceError where Python's line has
``***`` and ``\\x1b`` (attack67 F5).
"""

from __future__ import annotations

import functools
import json
import random
import subprocess
from typing import Any

import pytest

from dpdist._shown import shown
from js_support import ROOT, node_path

SECRET = "SUBMITSECRET123456"
#: the forms Python's _redact learned after the clients copied it (a fullwidth ``:``, a fullwidth or small ``@``, a
#: ``%3A`` userinfo, a ``password%3D``, a name's percent-encoded whitespace, IGNORECASE's dotted and dotless i): each
#: HIDDEN word is masked, each KEEP word shown
NEW_FORMS = [
    "fullwidth colon: http://user\uff1aHIDDEN1@host/x and //u\uff1aHIDDEN2@h/p, a port stays: http://host\uff1a8080/KEEP1",
    "fullwidth at https://user:HIDDEN1\uff20host.example/path, small at https://user:HIDDEN2\ufe6bhost/x, both "
    "https://u\uff1aHIDDEN3\uff20h/ https://u\uff1aHIDDEN4\ufe6bh",
    "the at in the user name: //u\uff1aHIDDEN1@host\uff1a8080/x and http://u\uff1aKEEP1\uff1aKEEP2/y and http://a@b\uff1aKEEP3",
    "encoded colon: https://user%3AHIDDEN1@host/x, https://user%3aHIDDEN2\uff20host/y, //u%3AHIDDEN3\ufe6bh/z, no at: "
    "https://user%3AKEEP1/x http://h/a%3AKEEP2",
    "GET https://a\uff1aHIDDEN1\uff20h1/ then postgresql://u%3AHIDDEN2@db:5432/x?sslpassword%3DHIDDEN3&password=HIDDEN4 "
    "and 'user:HIDDEN5@h' Bearer HIDDEN6",
    "?password%3DHIDDEN1&SSLPASSWORD%3dHIDDEN2 x_password%3DKEEP1 pass%77ord%C2%85=HIDDEN3 %EF%BB%BFpass%77ord=KEEP2 "
    "pass%77ord%1C=HIDDEN4",
    "Bas\u0131c HIDDEN1 and BAS\u0130C HIDDEN2 and \u0131password=HIDDEN7 \u0130token=HIDDEN5 pa\u017fsword=HIDDEN3 "
    "to\u212aen=HIDDEN4 Bearer \u0131\u0131\u0131\u0131\u0131\u0131\u0131",
    "refused by the proxy " + "x" * 150 + " https://user\uff1aHIDDEN1\uff20host/x and https://user%3AHIDDEN2@host/y",
]
#: attack116: a password parameter holding an ``@`` after a port in a line (F1); a password typed with a space and a
#: ``/``, a quoted or spaced parameter, a ``#`` or quote in a value (F2); a JSON string's token inside a JSON string,
#: ``token = ``, a quoted Bearer credential, a header's token, an ``Authorization`` value, ``password:``, fullwidth
#: slashes (F3): each HIDDEN word is masked, each KEEP word shown
ATTACK116_FORMS = [
    "F1 postgresql://dp@127.0.0.1:5432/db?password=p@ssw@rd:HIDDEN1 failed; postgresql://dp@h:5432/d?sslpassword=k@HIDDEN2",
    "F2 postgresql://dp:pa ss/w@HIDDEN1@host/db KEEP1, host=h password=ab#HIDDEN2 x, ?password=it's-HIDDEN3 and "
    "password=\"a HIDDEN4\" KEEP2 \"?password%3DHIDDEN5\" password = HIDDEN6",
    "F3 {\\\"submit_token\\\": \\\"HIDDEN1\\\"} token = HIDDEN2 Bearer \"HIDDEN3x\" Bearer 'HIDDEN4x' X-Submit-Token: HIDDEN5 "
    "KEEP1 Authorization: HIDDEN6",
    "F3 password: HIDDEN1 {\"password\": \"HIDDEN2 x\"} http:\uff0f\uff0fuser:HIDDEN3@host \uff0f/u:HIDDEN4@h bad token: KEEP1",
    "F3 Proxy-Authorization: Basic HIDDEN1x,\n\"Authorization\": \"Bearer HIDDEN2\", access_token: HIDDEN3 "
    "Authorization: PrivateToken token=\"HIDDEN4\"\nsend 'Authorization: Bearer <token>' KEEP1",
]
#: attack117: an Authorization value of any scheme (NTLM, Digest), a tab before its scheme or a Bearer credential (F3);
#: a quoted token value, an encoded name's quoted value, a JSON value's escaped quote (F4); a prefixed password name,
#: a Token header, a Bearer credential holding a ";" or "," (F5): each HIDDEN word is masked, each KEEP word shown
ATTACK117_FORMS = [
    "F3 KEEP1 Authorization: NTLM HIDDEN1\nProxy-Authorization: Digest username=\"HIDDEN2\", response=\"HIDDEN3\"\n"
    "Authorization:\tBearer HIDDEN4\nBearer\tHIDDEN5x KEEP2 {\"Authorization\": \"NTLM HIDDEN6\", \"KEEP3\": 1}",
    "F4 token=\"a HIDDEN1\" KEEP1 pass%77ord=\"q HIDDEN2\" KEEP2 {\"password\": \"a\\\"HIDDEN3\", \"token\": \"b\\\"HIDDEN4\"} KEEP3",
    "F5 PGPASSWORD=HIDDEN1 DB_PASSWORD: HIDDEN2 {\"db_password\": \"HIDDEN3\"}\nToken: HIDDEN4\nBearer a;HIDDEN5 "
    "Basic abc,HIDDEN6 KEEP1 Authorization: required. KEEP2 'Authorization: Bearer <token>' KEEP3",
]
#: attack118's forms (masked before escaping: F1 a tab before a quoted value, F2 a control character before a name, F3
#: whitespace before the separator; a Token header after any sign; F4 a value led by <, ; or , and camelCase names)
ATTACK118_FORMS = [
    "F1 {\"token\":\t\"HIDDEN1\", \"password\":\t\"HIDDEN2 x\"}\ntoken:\t'HIDDEN3' \"token\":\n\"HIDDEN4\" KEEP1 "
    "\"submit_token\":\u2028\"HIDDEN5\" \"token\":\x0b\"HIDDEN6\"",
    "F2 x\x1bBearer HIDDEN1x KEEP1 x\x00Authorization: NTLM HIDDEN2\n\x7fBasic HIDDEN3x x\u202eToken: HIDDEN4 (Token: HIDDEN5 "
    "bad token: expired KEEP2",
    "F3 token\t= HIDDEN1\ntoken\t: HIDDEN2 \"password\"\t:\t\"HIDDEN3\" password\t=\tHIDDEN4 token\x0b=\x0bHIDDEN5 "
    "password \xa0= HIDDEN6 KEEP1 password\u3000=\u3000HIDDEN7",
    "F4 token=<HIDDEN1> token=;HIDDEN2 token=,HIDDEN3 KEEP1 submitToken: HIDDEN4 accessToken=HIDDEN5 accessToken: HIDDEN6 "
    "\"accessToken\": \"HIDDEN7\" KEEP2",
]
#: attack119's forms (F2: whitespace but a space or a line break inside an unquoted value is masked with it; F3: an
#: Authorization value's quoted part across a line break, a folded header)
ATTACK119_FORMS = [
    "F2 token=a\tHIDDEN1 KEEP1 token=a\x85HIDDEN2 X-Submit-Token: a\x1fHIDDEN3 password=a\x0bHIDDEN4 "
    "submit_token: a\u2028HIDDEN5 Bearer a\x1cHIDDEN6 Basic abcdef\u2029HIDDEN7 PGPASSWORD=a\xa0HIDDEN8 "
    "x?password=a\u3000HIDDEN9&KEEP2=1 (Token: a\x0cHIDDEN10 password: a\u200aHIDDEN11 token=<a\x1eHIDDEN12 KEEP3",
    "F3 Authorization: Bearer \"a\nHIDDEN1\"\nKEEP1 Authorization: Digest username=\"u\",\r\n response=\"HIDDEN2\"\r\n"
    "KEEP2 Proxy-Authorization: Digest username=\"u\",\n\tresponse=\"HIDDEN3\"\nKEEP3 Authorization: NTLM \"a\\\"\nHIDDEN4",
]
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
    *NEW_FORMS,
    *ATTACK116_FORMS,
    *ATTACK117_FORMS,
    *ATTACK118_FORMS,
    *ATTACK119_FORMS,
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
    # the fullwidth and small @, the fullwidth :, the %3A of a userinfo, the %3D of a password=, a name's %xx whitespace
    ("//", "\uff1a", 200_000, " http://u\uff1aSECRET\uff20h", " http://u:***@h"),
    ("", "//u\uff1a", 50_000, " http://u\uff1aSECRET\ufe6bh", " http://u:***@h"),
    ("//", "u\uff1a", 100_000, " //u\uff1aSECRET@h", " //u:***@h"),
    ("//u", "\uff20", 200_000, " //u:SECRET\uff20h", " //u:***@h"),
    ("//", "%3A", 66_667, " http://u%3aSECRET\uff20h", " http://u%3a***@h"),
    ("", "//u%3A", 33_334, " http://u%3ASECRET@h", " http://u%3A***@h"),
    ("", "xpassword%3D", 16_667, " sslpassword%3dSECRET", " sslpassword%3d***"),
    ("pass%77ord", "%20", 66_667, "x=1 pass%77ord%20=SECRET", "x=1 pass%77ord%20=***"),
    # attack116's patterns: a spaced password up to a "//" (or with "/"), fullwidth slashes, a quoted or escaped named
    # value, a header's or Authorization's, a quoted Bearer credential, an encoded name's quoted value
    ("", "http://u: ", 20_000, " http://u: SE/CRET@h", " http://u:***@h"),
    ("", "http://u: a/", 16_667, " http://u: SE/CRET@h", " http://u:***@h"),
    ("", "\uff0f\uff0fu:", 50_000, " \uff0f\uff0fu:SECRET@h", " \uff0f\uff0fu:***@h"),
    ("", "\uff0f", 200_000, " http:\uff0f\uff0fu:SECRET@h", " http:\uff0f\uff0fu:***@h"),
    ("", "token ", 40_000, "x-token: SECRET", "x-token: ***"),
    ("token=", "\\", 200_000, " token = \\\"SECRET\\\"", " token = \\\"***\\\""),
    ("password: '", "\\", 200_000, "' Authorization: SECRET", "' Authorization: ***"),
    ("", "Bearer \\' ", 22_223, " Bearer 'SECRET1'", " Bearer '***'"),
    ("", "Authorization: Bearer <token> ", 6_667, "Authorization: SECRET", "Authorization: ***"),
    ("", "%41='", 40_000, " pass%77ord=SECRET", " pass%77ord=***"),
    # attack117's: an Authorization value of any scheme (an empty quoted one, escaped whitespace), a Bearer credential
    # after escaped whitespace, a Token header, a quoted password value, a prefixed password name, an encoded name's
    # quoted value
    ("", "Authorization: \"\" ", 11_112, "Authorization: NTLM SECRET", "Authorization: NTLM ***"),
    ("Authorization:", "\\t", 100_000, " NTLM SECRET", " NTLM ***"),
    ("Bearer", "\\t", 100_000, "SECRET1", "***"),
    ("", "\\nToken:'' ", 18_182, "\\nToken: SECRET", "\\nToken: ***"),
    ("", "password: \"\"", 16_667, " password: \"SE CRET\"", " password: \"***\""),
    ("", "_", 200_000, "password=SECRET", "password=***"),
    ("", "-", 200_000, "password: SECRET", "password: ***"),
    ("", "%41=\"", 40_000, " pass%77ord=\"SE CRET\"", " pass%77ord=***"),
    # attack118: camelCase token names and a Token header after a sign; spaces before a separator
    ("", "xToken(", 30_000, "Token: SECRET", "Token: ***"),
    ("token", " ", 200_000, "= SECRET", "= ***"),
    ("", "xToken;", 30_000, " token=,SECRET", " token=***"),
]

#: attack119: long runs of whitespace but a space or a line break inside an unquoted value (a named value, a led one, a
#: Bearer credential, a password parameter and what its mask left; masked whole with it), an Authorization value's
#: quoted segments, escaped quotes and folded lines; ``(before, repeat, times, then, before shown, repeat shown, then
#: shown)``
HOSTILE_119 = [
    ("token=a", "\t", 200_000, "b token=SECRET", "token=***", "", " token=***"),
    ("token=<", "\x0b", 200_000, "b token=SECRET", "token=***", "", " token=***"),
    ("Bearer a", "\x1c", 200_000, "bcdef Bearer SECRET1", "Bearer ***", "", " Bearer ***"),
    ("password=a", "\t", 200_000, "b password=SECRET", "password=***", "", " password=***"),
    ("password=a'", "\u2028", 200_000, "b password=SECRET", "password=***", "", " password=***"),
    ("", "Authorization: a\"", 12_000, "\nAuthorization: NTLM SECRET", "", "", "Authorization: ***\\nAuthorization: NTLM ***"),
    ("", "Authorization: NTLM a\n ", 8_700, "\nAuthorization: NTLM SECRET", "", "",
     "Authorization: NTLM ***\\nAuthorization: NTLM ***"),
    ("Authorization: a\"", "\\\"", 100_000, "\nAuthorization: NTLM SECRET", "Authorization: ***", "", ""),
]

#: attack120 F2: texts folded into one line (``shown(..., fold=True)``, a refusal's detail; JS and Java:
#: ``shownOneLine``): whitespace inside a credential (a tab, ``\x0b``, ``\x1c``, NEL, NBSP, U+2028, U+3000) is masked
#: with it (folded first, it became a space that ended the value: ``token=*** HIJ``); a long run of whitespace takes no
#: room before the cut; the request's credential holding whitespace is masked as it reads folded.  Each is shown with
#: FOLDED_SECRETS, at three limits, and so is every text above (the cut texts at one)
FOLDED_TEXTS = [
    "a token=ABCDEFG\tHIJ b password=PW\u00a0WORD c Bearer SECRETQ\u2028MORE d submitToken=ABC\u3000DEF",
    *(f"a token=ABC{space}TAIL1 b password=PW{space}TAIL2 c Bearer SECRETQ{space}TAIL3 d\nsubmitToken=ABC{space}TAIL4 \n e"
      for space in ("\t", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000")),
    "\t" + " " * 4998 + "\u3000\nKEEP token=a\tb" + " x" * 150,
    f"  you sent\t{SECRET}\u00a0and abc\u2028def  ghi\x1b[2J and  Bearer\tabc\u3000defgh \n",
]
FOLDED_SECRETS = ([], [SECRET, "abc\tdef ghi"])
#: folded, at most 8 x (limit + 4096) characters are read before masking: at limit 80, 33,408 (the first is shown,
#: the second not)
FOLDED_READ_TEXTS = [" " * 33_400 + "KEEP x", " " * 33_500 + "KEEP x"]


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
    hostile += [{"text": {"before": before, "repeat": repeat, "times": times, "then": then}, "secrets": [], "limit": None,
                 "shown": {"before": shown_before, "repeat": shown_repeat, "times": times, "then": then_shown}}
                for before, repeat, times, then, shown_before, shown_repeat, then_shown in HOSTILE_119]
    folded = [{"text": text, "secrets": secrets, "limit": limit, "fold": True}
              for text in [*FOLDED_TEXTS, *TEXTS] for secrets in FOLDED_SECRETS for limit in (200, 80, None)]
    folded += [{"text": text, "secrets": [SECRET], "limit": 200, "fold": True} for text in CUT_TEXTS]
    folded += [{"text": text, "secrets": [], "limit": 80, "fold": True} for text in FOLDED_READ_TEXTS]
    return ([{**case, "shown": shown(case["text"], tuple(case["secrets"]), case["limit"])} for case in chosen] + hostile
            + [{**case, "shown": shown(case["text"], tuple(case["secrets"]), case["limit"], fold=True)} for case in folded])


def test_the_clients_fixture_is_what_python_shows():
    # the JS (test/shown.test.js) and Java (AnswersTest) clients' tests compare with this file; to write it again:
    # PYTHONPATH=tests uv run python tests/clients/test_client_shown.py
    assert json.loads(FIXTURE.read_text()) == cases()
    assert "***" in cases()[6]["shown"] and SECRET not in cases()[6]["shown"] and "\\x1b" in cases()[6]["shown"]
    # attack75 A: no piece of the credential is shown, a copy the cut crossed included (it was masked after the cut)
    assert not any(SECRET[:6] in case["shown"] for case in cases() if case["secrets"])
    # attack120 F2: folded, no tail of a credential holding whitespace is shown; what follows a long run of it is
    folded = [case for case in cases() if case.get("fold") and case["text"] in FOLDED_TEXTS]
    assert len(folded) == len(FOLDED_TEXTS) * 6 and all(case["shown"].isprintable() for case in folded)
    assert not any(tail in case["shown"] for case in folded for tail in ("TAIL", "HIJ", "WORD", "MORE", "DEF"))
    assert not any("def" in case["shown"] for case in folded if case["secrets"])  # abc\u2028def  ghi, the credential
    assert all(case["shown"].startswith("KEEP token=*** x") for case in folded if "KEEP" in case["text"])
    assert [case["shown"] for case in cases() if case["text"] in FOLDED_READ_TEXTS] == ["KEEP x", ""]


def each_hidden_and_kept(forms: list[str], one_printable_line: bool = False) -> None:
    """Each form shown whole: no ``HIDDEN`` left, every ``KEEP`` kept (and, if asked, one printable line)."""
    for text in forms:
        shown_text = shown(text, (), None)
        assert "HIDDEN" not in shown_text and shown_text.count("KEEP") == text.count("KEEP"), shown_text
        assert not one_printable_line or (shown_text.isprintable() and "\n" not in shown_text), shown_text


def test_the_forms_python_learned_later_are_masked():
    # a fullwidth or small @, a fullwidth :, a %3A userinfo, a password%3D, a name's encoded whitespace, IGNORECASE's i
    each_hidden_and_kept(NEW_FORMS)


def test_quoted_escaped_and_header_credentials_are_masked_and_prose_kept():
    # each HIDDEN word masked, each KEEP word shown; dpdist's own refusal names 'Authorization: Bearer <token>' as it is
    each_hidden_and_kept(ATTACK116_FORMS)
    assert "send 'Authorization: Bearer <token>' KEEP1" in shown(ATTACK116_FORMS[-1], (), None)
    assert shown("bad token: expired; the password is wrong", (), None) == "bad token: expired; the password is wrong"


def test_an_authorization_value_of_any_scheme_and_named_passwords_are_masked():
    each_hidden_and_kept(ATTACK117_FORMS)
    assert shown("Authorization: NTLM abcSEKRET", (), None) == "Authorization: NTLM ***"
    assert shown("Authorization:\tBearer SEKRETabcdef", (), None) == "Authorization:\\tBearer ***"
    assert shown('"password": "a\\"bSEKRET" x', (), None) == '"password": "***" x'
    assert shown("Authorization: required", (), None) == "Authorization: required"


def test_the_raw_text_is_masked_before_its_control_characters_are_escaped():
    # masked before escaping: an escaped \t is no value, an escaped \x1b no word's end; then escaped, one line
    each_hidden_and_kept(ATTACK118_FORMS, one_printable_line=True)
    assert shown('"token":\t"abcSEKRETxyz"', (), None) == '"token":\\t"***"'
    assert shown("x\x1bBearer abcSEKRETxyz", (), None) == "x\\x1bBearer ***"
    assert shown("x\u202eToken: abcSEKRETxyz", (), None) == "x\\u202eToken: ***"
    assert shown("password\t=\tx", (), None) == "password\\t=\\t***"
    assert shown("token=<abcSEKRETxyz> KEEP", (), None) == "token=*** KEEP"
    assert shown("submitToken: abcSEKRETxyz", (), None) == "submitToken: ***"
    # the escaped forms a raw text may hold as two characters are still read as whitespace
    assert shown("Authorization:\\tBearer abcSEKRETxyz", (), None) == "Authorization:\\tBearer ***"
    for prose in ("bad token: expired", "my Token: x", "the token: x"):
        assert shown(prose, (), None) == prose


def test_a_value_ends_only_at_a_space_a_line_break_or_a_delimiter():
    # F2: only an ASCII space, a line break or a delimiter ends an unquoted value; F3: an Authorization value's quoted
    # part and folded lines are masked whole
    each_hidden_and_kept(ATTACK119_FORMS)
    assert shown("token=a\tkQ7wZ9pX4mV2", (), None) == "token=***"
    assert shown("PGPASSWORD=a\u2028kQ7wZ9pX4mV2 KEEP", (), None) == "PGPASSWORD=*** KEEP"
    assert shown("Bearer abcdef\x85kQ7wZ9pX4mV2", (), None) == "Bearer ***"
    assert shown("token=a b", (), None) == "token=*** b"  # a space still ends it, a line break too
    assert shown("Bearer abcdefgh\nKEEP", (), None) == "Bearer ***\\nKEEP"
    assert shown('Authorization: Bearer "a\nkQ7wZ9pX4mV2"', (), None) == "Authorization: Bearer ***"
    assert (shown('Authorization: Digest username="u",\r\n response="kQ7wZ9pX4mV2"\r\nKEEP: 1', (), None)
            == "Authorization: Digest ***\\r\\nKEEP: 1")
    # URL userinfo is read as before (a tab ends a password there)
    assert shown("http://u:pw@h/x KEEP", (), None) == "http://u:***@h/x KEEP"


@pytest.mark.slow  # 200,000 characters each, 4 CPU-s: the fast loop shows them at a twentieth of that (below)
def test_a_long_hostile_text_is_shown_whole_and_masked_as_before():
    # fix76: 200,000 characters each (a quadratic pattern takes minutes; no timed assertion)
    hostile = [case for case in cases() if not isinstance(case["text"], str)]
    assert len(hostile) == len(HOSTILE) + len(HOSTILE_119) and all(len(expanded(case["text"])) >= 200_000 for case in hostile)
    for case in hostile:
        assert shown(expanded(case["text"]), (), None) == expanded(case["shown"]), case
        assert "SECRET" not in expanded(case["shown"])


def test_a_hostile_text_a_twentieth_as_long_is_masked_as_the_long_one():
    # the long texts' output, at 10,000 characters: what each pattern makes of the run and the secret after it
    for before, repeat, times, then, then_shown in HOSTILE:
        run = repeat * max(1, times // 20)
        assert shown(before + run + then, (), None) == before + run + then_shown, (before, repeat, then)
        assert "SECRET" not in then_shown
    for before, repeat, times, then, shown_before, shown_repeat, then_shown in HOSTILE_119:
        count = max(1, times // 20)
        assert shown(before + repeat * count + then, (), None) == shown_before + shown_repeat * count + then_shown, repeat
        assert "SECRET" not in then_shown


def js_shown(chosen: list[dict[str, Any]]) -> list[str]:
    """What the JS client shows of each case's text (expanded), credentials and limit."""
    script = ("import { shown, shownOneLine } from './clients/js/src/shown.js';"
              "const expanded = (t) => (typeof t === 'string' ? t : t.before + t.repeat.repeat(t.times) + t.then);"
              "let input = ''; process.stdin.on('data', (d) => { input += d; });"
              "process.stdin.on('end', () => { const cases = JSON.parse(input);"
              "process.stdout.write(JSON.stringify(cases.map((c) => (c.fold ? shownOneLine : shown)(expanded(c.text), c.secrets,"
              " c.limit)))); });")
    result = subprocess.run([node_path(), "--input-type=module", "-e", script], input=json.dumps(chosen),
                            capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow  # node on every fixture text, the 16 hostile ones of 200,000 characters (0.8 CPU-s): what the JS
# client's own suite checks against the fixture (clients/js/test/shown.test.js, test_js_client.py's
# test_node_test_suite_passes); the fast loop keeps test_the_clients_fixture_is_what_python_shows
def test_the_js_client_shows_a_servers_text_as_python():
    for case, js in zip(cases(), js_shown(cases()), strict=True):
        assert js == expanded(case["shown"]), case


#: what the random texts below are made of: the pieces each pattern reads, the characters it stops at, the letters
#: Python's IGNORECASE reads as ASCII ones, percent-encoded whitespace
PIECES = ["http", "://", "//", "/", ":", "\uff1a", "@", "\uff20", "\ufe6b", "%3A", "%3a", "%3D", "%3", "password", "ssl",
          "pass%77ord", "=", "'", '"', " ", "\n", "u", "pw", "Bearer ", "Basic ", "token", "_", "-", "&", "?", "#", "\\",
          "%41", "%C2%85", "%C2%A0", "%1C", "%EF%BB%BF", "\u0131", "\u0130", "\u017f", "\u212a", "x", "1", "+", ".", ",",
          "\t", "\x1b", "\u00a0", "\u00e9", "\U0001f600", "abcdefgh",
          # attack116's forms
          "\uff0f", "Authorization", "authorization: ", "Proxy-", "PrivateToken ", "password: ", '\\"', "\\", "*", "***",
          "x-token: ", "_token", ": ", "5432", "db?", "<token>", "Bearer \"", " = ",
          # attack117's forms
          "NTLM ", "Digest ", "\\t", "\\n", "\\x0b", "Token", "PG", "PASSWORD", "db_", ";", "required", "\r", '"q r"',
          # attack118's forms: raw whitespace and control characters JS's and Java's \s read otherwise than Python's
          "\x0b", "\x1c", "\x1f", "\x85", "\u2028", "\u3000", "\ufeff", "\x00", "\x7f", "\u202e", "(", "<", "submitToken",
          "accessToken: "]


def test_the_js_client_shows_random_texts_as_python():
    # 3,000 seeded texts of PIECES: a form one side masks and the other does not, or reads otherwise, shows here
    rng = random.Random(76)
    chosen = [{"text": "".join(rng.choices(PIECES, k=rng.randint(1, 25))), "secrets": rng.choice([[], [], [], ["abcdefgh"]]),
               "limit": rng.choice([None, None, 20, 40])} for _ in range(3000)]
    for case, js in zip(chosen, js_shown(chosen), strict=True):
        assert js == shown(case["text"], tuple(case["secrets"]), case["limit"]), case
    folded = [{**case, "fold": True} for case in chosen]  # the same texts folded into one line (attack120 F2)
    for case, js in zip(folded, js_shown(folded), strict=True):
        assert js == shown(case["text"], tuple(case["secrets"]), case["limit"], fold=True), case


@pytest.mark.slow  # node; the JS client's own suite checks these credentials (clients/js/test/shown.test.js)
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
