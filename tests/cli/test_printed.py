"""What a command prints from an answer is built before it is printed; an answer it cannot be made of is one line
(``unexpected_answer``), never an internal error."""

from __future__ import annotations

import copy

import pytest

from dpdist.cli._campaign_rounds import show_rounds
from dpdist.cli._printed import printed_lines
from dpdist.errors import InvalidParameterError, ServiceRefusedError

ROUNDS = {"plan": {"q": [0.5], "epsilon": 1.0, "bounds": [0.0, 1.0]}, "round": 2, "of": 2,
          "rounds": [{"round": 1, "campaign": "q-r1", "state": "closed", "n": 100, "size": 100, "refused_batches": {}},
                     {"round": 2, "campaign": "q-r2", "state": "open", "n": 40, "size": 100,
                      "refused_batches": {"too_large": 1}}],
          "estimate": {"q": [0.5], "values": [0.42], "low": [0.4], "high": [0.45], "level": 0.95}}


class _Service:
    server = "http://h"

    def __init__(self, report):
        self.report = report

    def rounds(self, campaign):
        return self.report

    def campaign(self, campaign):
        return {"state": "open"}


def _with(path, value):
    document = copy.deepcopy(ROUNDS)
    *parents, last = path
    target = document
    for key in parents:
        target = target[key]
    target[last] = value
    return document


def test_a_rounds_document_is_printed(capsys):
    assert show_rounds(_Service(ROUNDS), "q", advance=False, as_json=False) == 0
    out = capsys.readouterr().out
    assert "round 2 of 2" in out and "too_large 1" in out and "q=0.5" in out and "[0.4, 0.45]" in out


VALUES = {"text": "x", "null": None, "object": {}, "huge": 10**4299, "list": [1]}
#: the documents that print (each value where the printer reads one it can show), and the line that shows it
PRINTS = {(("rounds",), "object"): "quantiles released from 0 report(s), each with its 95% interval:",
          (("rounds", 0, "n"), "huge"): f"  1      q-r1                     closed   {10**4299} / 100    -",
          (("rounds", 0, "refused_batches"), "object"): "  1      q-r1                     closed       100 / 100    -",
          (("estimate",), "null"): "no report yet: nothing released",
          (("estimate", "q"), "list"): "  q=1              0.42   [0.4, 0.45]",
          (("estimate", "low"), "null"): "  q=0.5            0.42   -",
          (("estimate", "low"), "object"): "  q=0.5            0.42   -",
          (("estimate", "low"), "list"): "  q=0.5            0.42   [1, 0.45]"}


@pytest.mark.parametrize("path", [("plan", "epsilon"), ("plan",), ("rounds",), ("rounds", 0), ("rounds", 0, "n"),
                                  ("rounds", 0, "refused_batches"), ("estimate",), ("estimate", "q"),
                                  ("estimate", "values", 0), ("estimate", "level"), ("estimate", "low")])
@pytest.mark.parametrize("value", list(VALUES))
def test_a_rounds_document_is_printed_whole_or_refused_in_one_line(path, value, capsys):
    """Each value in each place: a document the printer can show is printed (the line that shows the value), any
    other refused as ``unexpected_answer`` in one line, nothing printed before it."""
    service = _Service(_with(path, VALUES[value]))
    if (path, value) in PRINTS:
        assert show_rounds(service, "q", advance=False, as_json=False) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("campaign q (open): adaptive quantile rounds, round 2 of 2") and PRINTS[path, value] in lines
        return
    with pytest.raises(ServiceRefusedError) as refused:
        show_rounds(service, "q", advance=False, as_json=False)
    assert refused.value.code == "unexpected_answer" and "\n" not in str(refused.value)
    assert str(refused.value).startswith("The answer to GET http://h/api/campaigns/q/rounds is not what a dpdist service "
                                         "answers (a campaign's rounds whose ")
    assert capsys.readouterr().out == ""  # nothing printed before the refusal


def test_dpdist_s_own_errors_pass_through():
    def lines_of(document):
        raise InvalidParameterError("no such level")

    with pytest.raises(InvalidParameterError):
        printed_lines(lines_of, {}, "GET http://h/x", "an estimate")
