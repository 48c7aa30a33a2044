"""A hostile estimate answer's nested fields are checked before ``dpdist campaign estimate`` prints them.

A stub on 127.0.0.1 answers a real grr estimate document (the service's ``served_estimate``) with one field replaced by
a value of another type or size: 78 such answers ended in "internal error ... (a bug of dpdist)" (``'float' object is
not iterable``, ``int too large to convert to float``, ``Unknown format code 'g'``), and 16 million items beside 8
frequencies were printed.  Each is now one line ``unexpected_answer`` (or printed, where the value is one an estimate
may hold), in text and ``--json``, and :meth:`Client.estimate` refuses what its spec checks.
"""

from __future__ import annotations

import http.server
import json

import numpy as np
import pytest

from cli_support import parsers_built_once, run  # noqa: F401  (a fixture, used by name)
from ops_support import serving
from dpdist.errors import ServiceRefusedError

httpx = pytest.importorskip("httpx")

ADMIN = "admin-token-0123456789"
_BIG = 10 ** 4299  # the largest integer Python's JSON reads (4300 digits); no float holds it


def _document() -> dict:
    """A real estimate answer: a grr campaign's served estimate with its anytime intervals and stop readout."""
    from dpdist import local
    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("grr", epsilon=2.0, domain_size=4, labels=["a", "b", "c", "d"])
    aggregate = protocol.simulate(np.random.default_rng(1).integers(0, 4, 2000), rng=3)
    estimate = served_estimate(protocol, aggregate, protocol.estimate(aggregate), level=0.95, width=0.05,
                               replicates=0, target_n=10_000, options={})
    return {"campaign": "c", "state": "open", "n": 2000, "batches": 1, "protocol": "grr", "epsilon": 2.0,
            "rejected": {}, "guarantee": "epsilon=2", "estimate": estimate}


_REAL = json.loads(json.dumps(_document()))


class _Estimate(http.server.BaseHTTPRequestHandler):
    body = b"{}"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(type(self).body)))
        self.end_headers()
        self.wfile.write(type(self).body)

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def stub():
    with serving(_Estimate) as url:
        yield url


def _with(path: tuple, value) -> bytes:
    """The real answer with the field at ``path`` set to ``value``, as JSON text (10^4299 written out)."""
    document = json.loads(json.dumps(_REAL))
    where = document
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return json.dumps(document, allow_nan=True).encode()


#: the fields the attack's fuzzer ended in "internal error" with, and the rest the text reads
_FIELDS = [
    ("epsilon",), ("estimate", "intervals"), ("estimate", "intervals", 0, "low"), ("estimate", "intervals", 0, "high"),
    ("estimate", "intervals", 0, "low", 0), ("estimate", "intervals", 0, "high", 0), ("estimate", "intervals", 0, "level"),
    ("estimate", "intervals", 0, "method"), ("estimate", "intervals", 0, "quantity"),
    ("estimate", "intervals", 1, "anytime_valid"), ("estimate", "intervals", 2, "simultaneous"),
    ("estimate", "items"), ("estimate", "labels"), ("estimate", "notes"), ("estimate", "frequencies"),
    ("estimate", "frequencies", 0), ("estimate", "kind"), ("estimate", "uncertainty"),
    ("estimate", "uncertainty", "bootstrap"), ("estimate", "uncertainty", "note"), ("estimate", "uncertainty", "stop"),
    ("estimate", "uncertainty", "stop", "n"), ("estimate", "uncertainty", "stop", "width"),
    ("estimate", "uncertainty", "sequence_unavailable"), ("diagnostics",), ("rejected",),
]
#: the attack's values: inf, NaN and 10^4299 of both signs, a string with a terminal escape, true, null, [], {}
_VALUES = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"), "bigint": _BIG, "-bigint": -_BIG,
           "float": 1.5, "neg": -1, "str": "x\x1b[2J", "bool": True, "null": None, "list": [], "obj": {},
           "hugefloat": 1.7e308}


# every answer is read (and refused) the same way for both outputs: the fast loop writes it as text, the full suite as
# JSON as well (338 command lines, 1.1 CPU-s)
@pytest.mark.usefixtures("parsers_built_once")
@pytest.mark.parametrize("json_flag", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["text", "json"])
@pytest.mark.parametrize("value", list(_VALUES), ids=list(_VALUES))
@pytest.mark.parametrize("path", _FIELDS, ids=[".".join(map(str, path)) for path in _FIELDS])
def test_a_field_of_another_type_is_one_line_never_an_internal_error(stub, monkeypatch, capsys, path, value, json_flag):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)
    monkeypatch.setattr(_Estimate, "body", _with(path, _VALUES[value]))
    status, out, err = run(capsys, "campaign", "estimate", "c", "--server", stub, "--retries", "0",
                           *(["--json"] if json_flag else []))
    assert "internal error" not in err and "Traceback" not in err, err
    if status != 0:  # (a kind of no estimate dpdist knows: said so by MalformedDocumentError)
        assert out == "" and err.count("\n") == 1, (out, err)
        assert "is not what a dpdist service answers" in err or "No result has the kind" in err, err
        assert "\x1b" not in err, err


@pytest.mark.parametrize("path, value, why", [
    (("epsilon",), _BIG, "['epsilon'] is an integer beyond 1.8e308"),
    (("estimate", "intervals"), 5, "['estimate']['intervals'] is an integer, not a JSON array"),
    (("estimate", "intervals", 0, "low"), {}, "['estimate']['intervals'][0]['low'] is a JSON object, not a number or null or a JSON array"),
    (("estimate", "intervals", 0, "low", 0), "x", "['estimate']['intervals'][0]['low'][0] is a string, not a number"),
    (("estimate", "intervals", 0, "method"), None, "['estimate']['intervals'][0]['method'] is null, not a string"),
    (("estimate", "items"), list(range(1000)), "['estimate']['items'] has 1000 entries, ['estimate']['frequencies'] 4"),
    (("estimate", "labels"), ["a"], "['estimate']['labels'] has 1 entries, ['estimate']['frequencies'] 4"),
    (("estimate", "intervals", 1, "high"), [0.5] * 9,
     "['estimate']['intervals'][1]['high'] has 9 entries, ['estimate']['frequencies'] 4"),
    (("estimate", "frequencies", 0), _BIG, "['estimate']['frequencies'][0] is an integer beyond 1.8e308"),
    (("estimate", "uncertainty", "stop"), "x", "['estimate']['uncertainty']['stop'] is a string, not null or a JSON object"),
    (("estimate", "notes"), 3, "['estimate']['notes'] is an integer, not null or a JSON array"),
])
def test_the_client_refuses_what_its_estimate_spec_checks(stub, monkeypatch, path, value, why):
    from dpdist.client import AdminClient

    monkeypatch.setattr(_Estimate, "body", _with(path, value))
    with AdminClient(stub, admin_token=ADMIN, retries=0) as client:
        with pytest.raises(ServiceRefusedError) as refused:
            client.estimate("c")
    assert refused.value.code == "unexpected_answer" and why in str(refused.value), str(refused.value)


def test_the_real_answer_is_read_and_printed(stub, monkeypatch, capsys):
    from dpdist.client import AdminClient

    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)
    monkeypatch.setattr(_Estimate, "body", json.dumps(_REAL).encode())
    with AdminClient(stub, admin_token=ADMIN, retries=0) as client:
        assert client.estimate("c") == _REAL
    status, out, err = run(capsys, "campaign", "estimate", "c", "--server", stub, "--retries", "0")
    assert status == 0 and err == "", err
    assert "campaign c (open): grr (epsilon=2), n=2000" in out and "stop: width" in out, out


def test_a_value_the_spec_lets_through_that_the_text_cannot_print_is_one_line(stub, monkeypatch, capsys):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)  # a diagnostics' test with no summary: read by the text only
    monkeypatch.setattr(_Estimate, "body", _with(("diagnostics",), {"test": "chi2"}))
    status, out, err = run(capsys, "campaign", "estimate", "c", "--server", stub, "--retries", "0")
    assert status != 0 and out == "" and err.count("\n") == 1, (out, err)
    assert "is not what a dpdist service answers (an estimate whose KeyError: 'summary' stops its printing)" in err, err
