"""Every result reads back from its JSON or is refused by name: dpdist._documents behind every ``from_dict``.

The classes are found in the source (every class that writes a document), so a new result class is covered the day it
is written: it needs a real document in tests/results_support.py, or a reason there why it is not read back.  Each
real document is then dropped, retyped, NaN'd and edited field by field: the reader refuses it with a dpdist error
naming a field of the document, or loads a result that writes that same document again; never a silently different
result, never a raw TypeError or KeyError.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import results_support
from dpdist._documents import check_document, same_document
from dpdist.errors import DPDistError, IncompatibleStateError, MalformedDocumentError

READERS = results_support.readers()
CASES = [(name, index) for name, (_, makers) in READERS.items() for index in range(len(makers))]


@functools.cache
def _document_text(name: str, index: int) -> str:
    """The real result's document as JSON, written once per session (each hypothesis example reads its own copy)."""
    return json.dumps(results_support.real(name, index).to_dict())


def _document(name: str, index: int) -> dict:
    return json.loads(_document_text(name, index))


def _paths(value, prefix=()):
    """Every path into a document (the first, middle and last entry of a long list)."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index in sorted({0, len(value) // 2, len(value) - 1} if value else set()):
            yield from _paths(value[index], (*prefix, index))


def _mutated(document: dict, path: tuple, how: str, value) -> dict:
    mutated = copy.deepcopy(document)
    parent = mutated
    for step in path[:-1]:
        parent = parent[step]
    if how == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return mutated


def _edit(value):
    """A plausible edit of a value of the document (a number moved, a word changed, a flag flipped)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 if isinstance(value, int) else value * 1.5 + 0.01
    if isinstance(value, str):
        return value + "!"
    if isinstance(value, list):
        return value[:-1]
    return None


_RETYPED = ("text", True, None, {}, [], 7, 0.5, -1, math.nan, math.inf)


def _level(document: dict) -> float:
    """The level an estimate's document was written at (as dpdist.estimates._reading reads it)."""
    levels = [i["level"] for i in document.get("intervals", []) if isinstance(i, dict) and not i.get("anytime_valid")]
    band = document.get("band")
    if not levels and isinstance(band, dict) and isinstance(band.get("level"), float):
        levels = [band["level"]]
    return min(levels, default=0.95)


def _check_outcome(reader, original: dict, mutated: dict) -> None:
    """Refused by a dpdist error that names a field of the document, or loaded as a result writing ``mutated`` again."""
    try:
        loaded = reader(mutated)
    except DPDistError as error:
        message = str(error)  # a field named: quoted as a path, or a word of the constructor's own message
        assert any(re.search(rf"'{re.escape(key)}|\b{re.escape(key)}\b", message) for key in original), (
            f"the refusal names no field: {message}")
        return
    if "schema" in original and "kind" in original and original.get("schema", "").startswith("dpdist.estimate"):
        written = loaded.to_dict(_level(mutated))
        mutated = {**mutated, "intervals": [i for i in mutated["intervals"] if not i["anytime_valid"]]}
    else:
        written = loaded.to_dict()
    same_document(written, mutated, "the loaded result")  # raises: a result other than the document states


@pytest.mark.slow  # a walk of the whole package's syntax trees, 0.5 CPU-s: the documents of the classes found are read back below
def test_every_class_that_writes_a_document_is_read_back_or_says_why_not():
    """A new result class fails here until it has a real document (results_support.readers) or a reason."""
    found = results_support.writing_classes()
    assert found - set(READERS) - set(results_support.NOT_READ_BACK) == set(), "a result class with no reader"
    assert (set(READERS) | set(results_support.NOT_READ_BACK)) - found == set(), "a listed class writes no document"


@pytest.mark.parametrize("name, index", CASES)
def test_a_real_document_reads_back_as_the_same_statement(name, index):
    reader = READERS[name][0]
    document = _document(name, index)
    again = reader(copy.deepcopy(document))
    _check_outcome(reader, document, document)
    assert type(again).__name__ in (name, "Distribution")


#: the heaviest documents of a class with lighter ones in CASES (PrivacyLoss-3: a curve of 2,001 points, 0.43 CPU-s;
#: PrivacyGuarantee-0, 0.2): their corruptions run in the whole suite only (here and in the exhaustive test below);
#: the fast loop corrupts PrivacyLoss-0..2 and PrivacyGuarantee-1..2, and reads every document back
HEAVY = {("PrivacyLoss", 3), ("PrivacyGuarantee", 0)}
assert all(any(case[0] == name and case not in HEAVY for case in CASES) for name, _ in HEAVY)


@pytest.mark.parametrize("name, index", [pytest.param(*case, marks=pytest.mark.slow) if case in HEAVY else case
                                         for case in CASES])
@settings(max_examples=24, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_corrupted_document_is_refused_by_name_or_restated(name, index, data):
    """Drop, retype, NaN or edit one field anywhere in the document (its top-level fields drawn as often as all the
    nested ones together)."""
    document = _document(name, index)
    paths = list(_paths(document))
    top = [path for path in paths if len(path) == 1]
    path = data.draw(st.sampled_from(top) | st.sampled_from(paths), label="path")
    value = document
    for step in path:
        value = value[step]
    how = data.draw(st.sampled_from(("drop", "retype", "edit")), label="how")
    replacement = data.draw(st.sampled_from(_RETYPED), label="value") if how == "retype" else _edit(value)
    _check_outcome(READERS[name][0], document, _mutated(document, path, how, replacement))


@pytest.mark.slow
@pytest.mark.parametrize("name, index", CASES)
def test_every_field_dropped_retyped_or_edited_is_refused_by_name_or_restated(name, index):
    """The exhaustive form of the property above: every path, every corruption (the whole suite only)."""
    document = _document(name, index)
    reader = READERS[name][0]
    for path in _paths(document):
        value = document
        for step in path:
            value = value[step]
        for how, replacement in [("drop", None), ("edit", _edit(value)), *(("retype", v) for v in _RETYPED)]:
            _check_outcome(reader, document, _mutated(document, path, how, replacement))


def test_a_document_without_its_guarantee_is_refused():
    """A release's document with its guarantee dropped, or set to null beside its epsilon, loaded as a
    release with no privacy statement."""
    reader = READERS["RangeEstimate"][0]
    document = _document("RangeEstimate", 0)
    with pytest.raises(MalformedDocumentError, match="'guarantee' is missing"):
        reader({key: value for key, value in document.items() if key != "guarantee"})
    with pytest.raises(MalformedDocumentError, match="'guarantee' is null where the document states epsilon"):
        reader({**document, "guarantee": None})


@pytest.mark.parametrize("field, value", [("schema", math.nan), ("schema", "dpdist.estimate/9"), ("method", math.nan),
                                          ("method", 3), ("summary", "x"), ("intervals", [math.nan]), ("notes", [3]),
                                          ("notes", "one note")])
def test_nan_or_a_value_of_another_type_in_the_envelope_is_refused(field, value):
    """NaN or a string in schema, method, summary, intervals or notes loaded."""
    document = _document("RangeEstimate", 0)
    with pytest.raises(MalformedDocumentError, match=f"'{field}"):
        READERS["RangeEstimate"][0]({**document, field: value})


def test_an_edited_summary_is_refused_naming_it():
    document = _document("Distribution", 1)
    document["summary"]["median"] += 0.1
    with pytest.raises(MalformedDocumentError, match=r"'summary\.median' is .* where the result its other fields make"):
        READERS["Distribution"][0](document)


@pytest.mark.parametrize("name", ["MarginalsEstimate", "GridsEstimate"])
def test_a_marginals_document_is_refused_rather_than_read_without_its_noise_model(name):
    from dpdist.estimates import Presented

    estimate = (results_support._marginals if name == "MarginalsEstimate" else results_support._grids)()
    with pytest.raises(IncompatibleStateError, match="not read back from its JSON: its JSON lists the reported"):
        Presented.from_dict(json.loads(estimate.to_json()))


def test_a_service_s_anytime_intervals_and_unknown_fields_are_left_to_the_schema():
    """A served estimate carries the confidence sequence's intervals and fields of the service: read as the estimate."""
    from dpdist.estimates import Presented

    document = _document("FrequencyEstimate", 0)
    sequence = results_support._sequence("grr", epsilon=1.0, domain_size=4)
    served = {**document, "intervals": [*document["intervals"], *(i.to_dict() for i in sequence.intervals())],
              "uncertainty": {"note": None}}
    assert Presented.from_dict(served).to_dict(0.95)["frequencies"] == document["frequencies"]
    served["intervals"][-1]["low"] = [math.nan] * 4
    with pytest.raises(MalformedDocumentError, match=r"'intervals\[\d\]\.low\[0\]' must be a finite number"):
        Presented.from_dict(served)


def test_the_schema_reader_refuses_nan_and_booleans_as_numbers():
    schema = {"type": "object", "required": ["x"], "properties": {"x": {"type": "number", "minimum": 0}}}
    check_document({"x": 1}, schema, "t")
    for bad, words in [({"x": math.nan}, "finite"), ({"x": True}, "a number"), ({"x": -1}, ">= 0"), ({}, "missing")]:
        with pytest.raises(MalformedDocumentError, match=f"'x'.*{words}|'x' is {words}"):
            check_document(bad, schema, "t")


def test_a_corrupt_explain_cache_entry_is_computed_again(tmp_path):
    """The explain cache read a file by hand and raised KeyError on a damaged one; it is a miss now."""
    from dpdist.accuracy import explain

    first = explain("grr", n=500, epsilons=[1.0], domain_size=4, cache=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    document = json.loads(entry.read_text())
    document["predictions"][0]["errors"]["mse"]["value"] = "a lot"
    entry.write_text(json.dumps(document))
    from dpdist.accuracy import _MEMORY

    _MEMORY.clear()
    again = explain("grr", n=500, epsilons=[1.0], domain_size=4, cache=tmp_path)
    assert again["mse"].tolist() == first["mse"].tolist()
