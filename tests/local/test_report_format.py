"""The declared report format and the one way to add a validated batch.

Every protocol states its reports as ``protocol.report_format`` (dtype, row
shape, check, select, count, validate); ``Aggregator.add``, the report files
and Dask all add what ``validate`` returns through ``Aggregator.add_batch``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import dpdist
from dpdist import io, local
from dpdist.errors import IncompatibleStateError, InvalidParameterError, MalformedReportError
from conformance._examples import EXAMPLES, make, population

#: one small instance of every registered protocol
FIRST_CASES = [(name, EXAMPLES[name][0]) for name in local.available() if EXAMPLES.get(name)]
HOOKS = {"_check_reports", "_select_reports", "_count_reports", "_accumulate"}


def _ids(case):
    return case[0]


@pytest.fixture(params=FIRST_CASES, ids=_ids)
def protocol(request):
    return make(request.param)


def test_every_protocol_declares_its_format(protocol):
    report_format = protocol.report_format
    assert report_format is protocol.report_format  # cached
    reports = np.asarray(protocol.privatize(population(protocol, 50), rng=1))
    assert reports.dtype == report_format.dtype, protocol.name
    assert reports.shape == (50, *report_format.row_shape), protocol.name
    assert report_format.count(reports) == 50
    assert report_format.empty(3).shape == (3, *report_format.row_shape)
    keep = np.arange(50) % 3 == 0
    assert report_format.count(report_format.select(reports, keep)) == int(keep.sum())


def test_add_is_validate_then_add_batch(protocol):
    reports = protocol.privatize(population(protocol, 200), rng=2)
    batch = protocol.report_format.validate(reports)
    assert isinstance(batch, local.ReportBatch)
    assert (batch.n_read, batch.n_valid, batch.rejected, batch.first_invalid_row) == (200, 200, {}, None)
    assert protocol.aggregator().add_batch(batch) == protocol.aggregator().add(reports)
    half = protocol.report_format.select(reports, np.arange(200) < 100)
    assert protocol.aggregator().add(half).n == 100


def test_files_and_arrays_take_the_same_path(protocol, tmp_path):
    reports = protocol.privatize(population(protocol, 120), rng=3)
    io.write_reports(tmp_path / "r.bin", protocol, reports)
    from_file = io.read_reports(tmp_path / "r.bin", protocol)
    assert protocol.aggregator().add_batch(from_file) == protocol.aggregator().add(reports)


def test_invalid_rows_are_counted_or_refused_with_their_first_row():
    proto = local.make("grr", epsilon=1.0, domain_size=4)
    reports = np.array([0, 1, 7, 2, 9], dtype=np.int64)
    batch = proto.report_format.validate(reports)
    assert (batch.n_read, batch.n_rejected_rows, batch.rejected, batch.first_invalid_row) == (5, 2, {"out_of_range": 2}, 2)
    assert batch.reports.tolist() == [0, 1, 2]
    with pytest.raises(MalformedReportError, match="the first is at row 2"):
        proto.report_format.validate(reports, on_invalid="raise")
    with pytest.raises(MalformedReportError, match="the first is at row 2"):
        proto.aggregator().add(reports, on_invalid="raise")
    agg = proto.aggregator().add_batch(batch)
    assert (agg.n, agg.rejected) == (3, {"out_of_range": 2})
    # rows found bad while decoding a file are not counted twice
    decoded = {"missing": np.array([False, False, True, False, False])}
    batch = proto.report_format.validate(reports, invalid=decoded)
    assert batch.rejected == {"missing": 1, "out_of_range": 1} and batch.n_rejected_rows == 2


def test_add_batch_refuses_another_config_and_non_batches():
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    other = local.make("grr", epsilon=2.0, domain_size=4)
    batch = grr.report_format.validate([0, 1])
    with pytest.raises(IncompatibleStateError, match="differs"):
        other.aggregator().add_batch(batch)
    with pytest.raises(InvalidParameterError, match="ReportBatch"):
        grr.aggregator().add_batch(np.array([0, 1]))
    with pytest.raises(InvalidParameterError, match="on_invalid"):
        grr.report_format.validate([0], on_invalid="drop")


def test_composite_protocols_use_their_oracle_format():
    binning = local.make("binning", epsilon=1.0, bins=8, oracle="oue")
    assert (binning.report_format.dtype, binning.report_format.row_shape) == (
        binning.oracle.report_format.dtype,
        binning.oracle.report_format.row_shape,
    )
    hh = local.make("hh", epsilon=1.0, bins=16, branching=4)
    values = np.random.default_rng(0).random(500)
    assert hh.aggregator().add(hh.privatize(values, rng=1)).n == 500


def _hook_calls_on_other_objects(path: Path) -> list[str]:
    """``x._check_reports(...)`` and the like where ``x`` is not ``self`` or ``super()``.

    A file whose text names no hook holds no such attribute: only the files that name one are parsed (the others
    were 1.3 of this test's 1.5 CPU-s)."""
    found = []
    text = path.read_text()
    if not any(hook in text for hook in HOOKS):
        return found
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr in HOOKS:
            owner = node.value
            is_self = isinstance(owner, ast.Name) and owner.id == "self"
            is_super = isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super"
            if not (is_self or is_super):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_one_reaches_into_the_report_hooks():
    """Only the format calls a protocol's report hooks; everyone else calls ``report_format``."""
    source = Path(dpdist.__file__).parent
    tests = Path(__file__).parents[1]
    allowed = {source / "local" / "_report_format.py"}
    offenders = [
        hit
        for path in sorted([*source.rglob("*.py"), *tests.rglob("*.py")])
        if path not in allowed
        for hit in _hook_calls_on_other_objects(path)
    ]
    assert offenders == []
