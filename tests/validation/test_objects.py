"""Rules of objects (``dpdist._validation._objects``): random sources, instances, items, tuples, text, bytes, dicts,
paths, callables and existing files."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from dpdist._validation import (
    Admits,
    AttributeIn,
    Bytes,
    CallableRule,
    Dict,
    ExistingFile,
    HasMethod,
    HttpUrl,
    InstanceOf,
    Integer,
    Items,
    MappingOf,
    NamedInstanceOf,
    PathLike,
    Present,
    RandomSource,
    Text,
    Token,
    TupleOf,
    check_param,
)
from dpdist.errors import InvalidParameterError
from rule_support import assert_rule


def test_a_random_source_is_none_a_seed_a_seed_sequence_or_a_generator():
    generator, sequence = np.random.default_rng(1), np.random.SeedSequence(2)
    assert_rule(RandomSource(), [(None, None), (3, 3), (np.int64(4), 4), (generator, generator), (sequence, sequence)])


def test_an_instance_refusal_shows_the_type_not_the_content():
    assert_rule(InstanceOf(dict, "a dict"), [({}, {})])
    with pytest.raises(InvalidParameterError) as refused:
        check_param("f()", "config", ["secret-value"], InstanceOf(dict, "a dict"))
    assert "list" in str(refused.value) and "secret-value" not in str(refused.value)
    assert not _takes(InstanceOf(int, "an int"), True)  # a bool is not the int meant
    assert InstanceOf(dict, "a protocol", shows_text=True).shown("grr") == "the str 'grr'"


def test_items_are_checked_one_by_one_and_a_refusal_names_the_first_bad_one():
    rule = Items(Integer(low=0), "a list of ints >= 0", min_length=2, increasing=True)
    assert_rule(rule, [([1, 2, 5], (1, 2, 5)), ((x for x in (0, 3)), (0, 3)), (np.array([1, 4]), (1, 4))])
    assert rule.shown([1, 2, -3, -4]) == "a list whose item 2 is -3"
    assert not _takes(rule, [2, 1])


def test_a_tuple_of_rules_checks_each_place():
    rule = TupleOf((Integer(low=1), Text()), "a pair (count, name)")
    assert_rule(rule, [([2, "a"], (2, "a")), ((3.0, "b"), (3, "b"))])


def test_named_instances_are_refused_while_their_package_is_not_imported():
    rule = NamedInstanceOf("fractions", ("Fraction",), "a Fraction")
    from fractions import Fraction  # imported: its objects can exist

    assert_rule(rule, [(Fraction(1, 3), Fraction(1, 3))])
    assert not _takes(NamedInstanceOf("a_package_never_imported", ("Thing",), "a thing"), object())


def test_text_and_bytes():
    assert_rule(Text(ascii=True, min_length=2, max_length=4, pattern="[a-z]+"), [("ab", "ab"), ("abcd", "abcd")])
    assert Text().describe() == "a non-empty str"
    assert_rule(Bytes(length=2), [(b"ab", b"ab"), (bytearray(b"cd"), b"cd"), (memoryview(b"ef"), b"ef")])
    assert Bytes().shown(b"secret") == "6 bytes"


def test_a_dict_shows_its_keys_never_its_values():
    rule = Dict("a config", required=("name",), allowed=("name", "size"), values=(("size", Integer(low=1)),))
    assert_rule(rule, [({"name": "x"}, {"name": "x"}), ({"name": "x", "size": 2}, {"name": "x", "size": 2})])
    assert rule.shown({"name": "private", "size": 0}) == "a dict with the keys ['name', 'size'] whose 'size' is 0"


def test_paths_callables_and_existing_files(tmp_path):
    assert_rule(PathLike(), [("a.csv", "a.csv"), (tmp_path, tmp_path)])
    assert_rule(CallableRule("a function"), [(len, len)])
    data = tmp_path / "data.CSV.gz"
    data.write_text("x")
    assert_rule(ExistingFile(endings=(".csv.gz",)), [(data, data), (str(data), str(data))])
    assert not _takes(ExistingFile(), tmp_path)  # a folder is not a file
    assert not _takes(ExistingFile(containing=(".json",)), pathlib.Path(__file__))


def _takes(rule, value) -> bool:
    try:
        rule.check(value)
    except (ValueError, TypeError):
        return False
    return True


def test_a_token_is_printable_ascii_without_surrounding_spaces_and_shown_by_its_length():
    rule = Token(16)
    assert_rule(rule, [("relay-token-0123456789", "relay-token-0123456789")])
    assert rule.shown("s\u00e9cret-token-0123") == "a str of 17 characters" and rule.shown(None) == "a NoneType"
    assert_rule(Token(16, "an admin token", spaces=True), [(" admin-token-0123456 ", " admin-token-0123456 ")])
    assert_rule(Token(0, "a token"), [("", "")])


def test_a_mapping_checks_its_keys_its_values_and_the_values_of_named_keys():
    rule = MappingOf(Text(), Items(None, "values", min_length=1), "a grid", named=(("n", Items(Integer(low=1), "ns")),))
    assert_rule(rule, [({"epsilon": [1, 2]}, {"epsilon": (1, 2)}), ({"n": [3]}, {"n": (3,)})])
    given = {"epsilon": [1, 2]}
    assert MappingOf(Text(), Items(None, "values"), "a grid", as_given=True).check(given) is given
    assert rule.shown({"n": [0]}) == "a dict with the keys ['n'] whose 'n' is a list whose item 0 is 0"
    assert rule.shown({3: [1]}) == "a dict with the keys ['3'] whose key 3 is refused"


def test_objects_by_a_method_or_an_attribute():
    assert_rule(HasMethod("upper", "an object with an upper()"), [("text", "text")])
    rule = AttributeIn(np.ndarray, "ndim", (1,), "a 1-D array")
    vector = np.zeros(3)
    assert rule.check(vector) is vector
    assert_rule(rule, [])
    with pytest.raises(ValueError):
        rule.check(np.zeros((2, 2)))


def test_present_and_admits_show_the_type_and_the_reason():
    assert_rule(Present("the values"), [(0, 0), ([], [])])
    rule = Admits(int, lambda value: None if value % 2 == 0 else "odd", "an even int")
    assert_rule(rule, [(4, 4)])
    assert not _takes(rule, 3) and rule.shown(3) == "int (odd)" and rule.shown("x") == "str"


def test_an_http_url_names_a_host_and_a_readable_port_and_is_shown_without_its_password():
    assert_rule(HttpUrl(), [("http://collector", "http://collector"), ("https://u:pw@h.example:443/x", "https://u:pw@h.example:443/x"),
                            ("http://[::1]:8080/", "http://[::1]:8080/"), ("HTTP://h", "HTTP://h")])
    assert HttpUrl().shown("http://u:SECRET/x@h:1") == "'http://u:***@h:1'"


def test_an_http_url_refuses_a_host_no_connection_can_be_made_to():
    """``Client("http://exa mple.com")`` was taken, then its requests retried in silence for the whole retry window."""
    assert_rule(HttpUrl(), [("https://b\u00fccher.example/", "https://b\u00fccher.example/"), ("http://a_b.example", "http://a_b.example"),
                            ("http://127.0.0.1:8000/x", "http://127.0.0.1:8000/x")])
    for url in ("http://exa mple.com", 'http://exa"mple.com', "http://ex<a>.com", "http://h{x}", "htp:/oops", "http:/oops"):
        assert _takes(HttpUrl(), url) is False, url


def test_an_http_url_refuses_a_port_out_of_1_to_65535():
    assert_rule(HttpUrl(), [("http://h:1", "http://h:1"), ("http://h:65535/", "http://h:65535/")])
    for url in ("http://h:0", "http://h:99999", "http://alice:S3cretPW@h:99999"):
        assert _takes(HttpUrl(), url) is False


def test_an_http_url_without_userinfo_refuses_a_user_or_password_and_says_why():
    rule = HttpUrl("the relay's URL", no_userinfo="devices are given it")
    assert_rule(rule, [("https://relay.example:8443/base", "https://relay.example:8443/base"), ("http://[::1]:1", "http://[::1]:1")])
    for url in ("http://alice:S3cretPW@h:1", "http://alice@h", "https://:pw@h/x"):
        assert _takes(rule, url) is False
    with pytest.raises(InvalidParameterError) as raised:
        check_param("f", "relay", "http://alice:S3cretPW@h:1", rule)
    message = str(raised.value)
    assert "S3cretPW" not in message and "without user:password@ (devices are given it)" in message and "alice:***@h:1" in message
    assert _takes(HttpUrl(), "http://alice:S3cretPW@h:1")  # the default keeps userinfo (an OHTTP relay's, say)


def test_a_base_url_refuses_a_query_or_a_fragment_and_says_why():
    """``--server 'http://h:p?x=1'`` was taken, then every request went to ``/`` (httpx drops the joined
    path), and the service's index was printed as the campaign."""
    rule = HttpUrl("the server's URL", no_userinfo="a token is sent", base=True)
    assert_rule(rule, [("https://h.example:8443/base/", "https://h.example:8443/base/"), ("http://h", "http://h")])
    for url in ("http://h:1?x=1", "http://h:1/?x=1", "http://h:1?", "http://h/base#frag", "http://h#"):
        assert _takes(rule, url) is False and _takes(HttpUrl(), url)
    with pytest.raises(InvalidParameterError, match=r"without a query or fragment .*Got 'http://h:1\?x=\*\*\*'"):
        check_param("f", "server", "http://h:1?x=1", rule)


@pytest.mark.parametrize("url, shown", [
    # a refused URL's query values and fragment may be credentials; a password after a %-encoded ":",
    # or before a fullwidth "@", is one
    ("http://127.0.0.1:9200/?token=S3CRETl", "'http://127.0.0.1:9200/?token=***'"),
    ("http://h/?a=1&access_token=S3CRETa&X-Amz-Signature=S3CRETb", "'http://h/?a=***&access_token=***&X-Amz-Signature=***'"),
    ("http://127.0.0.1:9200/#S3CRETm", "'http://127.0.0.1:9200/#***'"),
    ("http://u%3AS3CRETc@127.0.0.1:9200", "'http://u%3A***@127.0.0.1:9200'"),
    ("http://u:S3CRETe\uff20127.0.0.1:9200", "'http://u:***\uff20127.0.0.1:9200'"),
])
def test_a_refused_url_is_shown_without_what_may_be_a_credential(url, shown):
    rule = HttpUrl("the server's URL", no_userinfo=HttpUrl.TOKEN_SENT, base=True)
    assert _takes(rule, url) is False and rule.shown(url) == shown
    with pytest.raises(InvalidParameterError) as raised:
        check_param("f", "server", url, rule)
    assert "S3CRET" not in str(raised.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9200/\x1b]0;PWN\x07", "http://h/\x7f", "http://h/a\u202eb"])
def test_a_url_with_a_control_character_is_refused_by_name(url):
    """``--server $'http://h/\\x1b]0;PWN\\x07'`` was "internal error InvalidURL" (httpx's); a bidi
    override was taken silently."""
    for rule in (HttpUrl(), HttpUrl("the server's URL", no_userinfo=HttpUrl.TOKEN_SENT, base=True)):
        assert _takes(rule, url) is False
        with pytest.raises(InvalidParameterError, match="'server'") as raised:
            check_param("f", "server", url, rule)
        assert "\x1b" not in str(raised.value) and "\u202e" not in str(raised.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9202/p;password=RSECRET4", "http://127.0.0.1:9202/p;token=RSECRET5/x",
                                 "http://127.0.0.1:9202/RSECRET6%00x", "http://h/a%0Ab", "http://h/a%7f"])
def test_a_published_url_refuses_path_parameters_and_control_characters(url):
    """A relay URL with ``;password=...`` in its path, or a NUL, was taken and served to anyone."""
    rule = HttpUrl("the relay's URL", no_userinfo=HttpUrl.PUBLISHED)
    assert _takes(rule, url) is False
    assert "RSECRET4" not in rule.shown(url) and "RSECRET5" not in rule.shown(url)
    assert _takes(HttpUrl(), url) is (";" in url)  # a path parameter is refused only where the URL is published


def test_a_sqlite_file_refuses_memory_with_a_query(tmp_path):
    """``:memory:?cache=shared`` made a file of that name (``--queue``, ``--issuer-db``)."""
    from dpdist._validation import SQLiteFile, sqlite_name_problem

    assert "in-memory" in (sqlite_name_problem(":memory:?cache=shared") or "")
    assert _takes(SQLiteFile(), ":memory:?cache=shared") is False
    assert _takes(SQLiteFile(), str(tmp_path / "q.sqlite"))
