"""What a command prints from an answer is built before it is printed; an answer it cannot be made of is one line
(``unexpected_answer``), never an internal error (attack70 F5: 58 of 354 fuzzed rounds documents ended in one)."""

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


@pytest.mark.parametrize("path", [("plan", "epsilon"), ("plan",), ("rounds",), ("rounds", 0), ("rounds", 0, "n"),
                                  ("rounds", 0, "refused_batches"), ("estimate",), ("estimate", "q"),
                                  ("estimate", "values", 0), ("estimate", "level"), ("estimate", "low")])
@pytest.mark.parametrize("value", ["x", None, {}, 10**4299, [1]])
def test_a_rounds_document_it_cannot_print_is_one_line(path, value, capsys):
    try:
        show_rounds(_Service(_with(path, value)), "q", advance=False, as_json=False)
    except ServiceRefusedError as refused:
        assert refused.code == "unexpected_answer" and "\n" not in str(refused)
        assert str(refused).startswith("The answer to GET http://h/api/campaigns/q/rounds is not what a dpdist service "
                                       "answers (a campaign's rounds whose ")
        assert capsys.readouterr().out == ""  # nothing printed before the refusal
    # else: a value that prints (a null estimate, an empty list of limits) is printed as it is


def test_dpdist_s_own_errors_pass_through():
    def lines_of(document):
        raise InvalidParameterError("no such level")

    with pytest.raises(InvalidParameterError):
        printed_lines(lines_of, {}, "GET http://h/x", "an estimate")


@pytest.mark.parametrize("path, value", [(("plan", "epsilon"), "x"), (("rounds", 0, "n"), None),
                                         (("estimate", "values", 0), 10**4299), (("rounds",), [1])])
def test_these_answers_are_refused(path, value):
    with pytest.raises(ServiceRefusedError, match="a campaign's rounds whose"):
        show_rounds(_Service(_with(path, value)), "q", advance=False, as_json=False)
