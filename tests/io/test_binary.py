"""Report wire formats (dpdist binary records, Arrow/Parquet): round trips and validation on read."""

from __future__ import annotations

import json
import struct
import sys
import zlib

import numpy as np
import pytest

from conformance._examples import CASES, case_id, make, population
from dpdist import io, local
from dpdist.errors import DatasetUnavailableError, MalformedReportError

pa = pytest.importorskip("pyarrow")


def _reports(protocol, n=600, seed=1):
    return protocol.privatize(population(protocol, n, rng=seed), rng=seed)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_protocol_round_trips_through_both_formats(case, tmp_path):
    protocol = make(case)
    reports = _reports(protocol)
    expected = protocol.aggregator().add(reports)

    record = io.decode_record(io.encode_record(protocol, reports))
    table = io.reports_from_arrow(io.reports_to_arrow(protocol, reports))
    assert record.config == table.config == protocol.config()
    for batch in (record, table):
        assert batch.n_read == batch.n_valid == len(reports) and batch.rejected == {}
        assert batch.add_to(protocol.aggregator()) == expected

    for name in ("reports.parquet", "reports.bin"):
        path = tmp_path / name
        with io.ReportWriter(path, protocol) as writer:  # two batches: two records / buffered row group
            writer.write(reports[:250])
            writer.write(reports[250:])
        assert io.count_reports(path) == len(reports)
        assert io.protocol_of_file(path) == protocol
        assert io.read_reports(path).add_to(protocol.aggregator()) == expected
        batches = list(io.iter_report_batches(path, protocol, batch_rows=100))
        assert sum(batch.n_read for batch in batches) == len(reports)


@pytest.mark.parametrize("case", CASES[::3], ids=case_id)
def test_a_slice_of_a_table_reads_the_same_rows(case):
    protocol = make(case)
    reports = _reports(protocol)
    sliced = io.reports_to_arrow(protocol, reports).slice(111, 222)  # non-zero Arrow offsets
    batch = io.reports_from_arrow(sliced, protocol)
    assert batch.add_to(protocol.aggregator()) == protocol.aggregator().add(np.asarray(reports)[111:333])


def test_reports_of_another_config_are_rejected_and_counted(tmp_path):
    written = local.make("grr", epsilon=1.0, domain_size=5)
    reader = local.make("grr", epsilon=2.0, domain_size=5)
    reports = written.privatize(np.arange(40) % 5, rng=0)
    for batch in (
        io.decode_record(io.encode_record(written, reports), reader),
        io.reports_from_arrow(io.reports_to_arrow(written, reports), reader),
    ):
        assert batch.rejected == {"other_config": 40} and batch.n_valid == 0
        aggregator = batch.add_to(reader.aggregator())
        assert aggregator.n == 0 and aggregator.rejected == {"other_config": 40}


def test_foreign_arrow_rows_of_wrong_shape_missing_or_out_of_range_are_counted():
    oue = local.make("oue", epsilon=1.0, domain_size=12)  # 2 bytes per report, 4 padding bits
    good = oue.privatize(np.arange(6) % 12, rng=3)
    rows = [bytes(row) for row in good]
    rows[1] = rows[1][:1]  # too short
    rows[2] = None  # missing
    rows[3] = bytes([rows[3][0], rows[3][1] | 0x01])  # a padding bit set: the protocol's own reason
    batch = io.reports_from_arrow(pa.table({"report": pa.array(rows, type=pa.binary())}), oue)
    assert batch.rejected == {"wrong_shape": 1, "missing": 1, "padding_bits_set": 1}
    np.testing.assert_array_equal(batch.reports, good[[0, 4, 5]])

    olh = local.make("olh", epsilon=1.0, domain_size=5, hash_prime=7)
    pairs = olh.privatize(np.arange(5), rng=1).astype(np.int64).tolist()
    pairs[0] = pairs[0] + [0]  # three values
    pairs[1] = [-1, 0]  # negative: not representable as uint64
    pairs[2] = [pairs[2][0], None]  # a missing value inside the row
    batch = io.reports_from_arrow(pa.table({"report": pa.array(pairs, type=pa.list_(pa.int64()))}), olh)
    assert batch.rejected == {"wrong_shape": 1, "out_of_range": 1, "missing": 1}
    assert batch.n_valid == 2

    grr = local.make("grr", epsilon=1.0, domain_size=5)
    column = pa.array([0, 4, 5, -3, 300, None, 2.0], type=pa.float64())
    batch = io.reports_from_arrow(pa.table({"report": column}), grr)
    # 5 is out of GRR's range, -3 and 300 do not fit its uint8 layout: all are "out_of_range"
    assert batch.rejected == {"out_of_range": 3, "missing": 1}
    np.testing.assert_array_equal(batch.reports, [0, 4, 2])


def test_structured_reports_need_every_field_column():
    hh = local.make("hh", epsilon=1.0, bins=4, branching=2)
    table = io.reports_to_arrow(hh, hh.privatize(np.linspace(0, 1, 10), rng=0))
    with pytest.raises(MalformedReportError, match="column"):
        io.reports_from_arrow(table.drop_columns(["level"]), hh)


def _raw_record(config, array, *, version=1, crc=None, magic=b"DPDISTR\n"):
    payload = array.tobytes()
    header = json.dumps(
        {
            "config": config,
            "dtype": np.lib.format.dtype_to_descr(array.dtype),
            "shape": list(array.shape),
            "payload_bytes": len(payload),
            "crc32": zlib.crc32(payload) if crc is None else crc,
        }
    ).encode()
    return struct.pack("<8sHI", magic, version, len(header)) + header + payload


def test_binary_records_validate_range_shape_and_integrity():
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    config = grr.config()
    out_of_range = io.decode_record(_raw_record(config, np.array([0, 7, 4, 5], dtype=np.uint8)), grr)
    assert out_of_range.rejected == {"out_of_range": 2}
    np.testing.assert_array_equal(out_of_range.reports, [0, 4])
    wide = io.decode_record(_raw_record(config, np.array([1, 2, 256, -1], dtype=np.int64)), grr)
    assert wide.rejected == {"out_of_range": 2} and wide.reports.dtype == np.uint8
    wrong_shape = io.decode_record(_raw_record(config, np.zeros((3, 2), dtype=np.uint8)), grr)
    assert wrong_shape.rejected == {"wrong_shape": 3}

    record = _raw_record(config, np.array([0, 1], dtype=np.uint8))
    for bad, message in [
        (_raw_record(config, np.array([0, 1], dtype=np.uint8), magic=b"NOTDPDST"), "not a dpdist report record .its first "
         "bytes are not b'DPDISTR.n'; they are not shown"),
        (_raw_record(config, np.array([0, 1], dtype=np.uint8), version=99), "version 99"),
        (_raw_record(config, np.array([0, 1], dtype=np.uint8), crc=12345), "CRC"),
        (record[:-1], "truncated"),
        (record + b"x", "trailing"),
        (_raw_record(config, np.array([None, 1], dtype=object)), "dtype"),
    ]:
        with pytest.raises(MalformedReportError, match=message):
            io.decode_record(bad, grr)


def test_a_record_without_a_config_is_refused_naming_the_missing_config():
    """The header with ``"config": null`` (and one without the field) was refused as "record header has dtype
    uint64, shape (2, 2): not a report batch", though its dtype and shape were right: the message names the config."""
    olh = local.make("olh", epsilon=2.0, domain_size=16)
    good = np.array([[5, 1], [7, 2]], dtype="<u8")
    without = _raw_record(olh.config(), good)
    header_length = struct.unpack("<I", without[10:14])[0]
    header = json.loads(without[14:14 + header_length])
    del header["config"]
    encoded = json.dumps(header).encode()
    for bad, got in ((_raw_record(None, good), "Got None"), (_raw_record([1], good), "Got [1]"),
                     (without[:10] + struct.pack("<I", len(encoded)) + encoded + good.tobytes(), "Got no such field")):
        with pytest.raises(MalformedReportError) as refused:
            io.decode_record(bad, olh)
        message = str(refused.value)
        assert "no protocol config" in message and "'config'" in message and got in message, message
        assert "not a report batch" not in message
    header["config"] = olh.config()
    del header["dtype"]
    encoded = json.dumps(header).encode()
    with pytest.raises(MalformedReportError, match="no 'dtype' field"):
        io.decode_record(without[:10] + struct.pack("<I", len(encoded)) + encoded + good.tobytes(), olh)


def test_only_valid_reports_are_written():
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    with pytest.raises(MalformedReportError, match="invalid report"):
        io.encode_record(grr, np.array([0, 9], dtype=np.uint8))
    with pytest.raises(MalformedReportError):
        io.reports_to_arrow(local.make("oue", epsilon=1.0, domain_size=12), np.zeros((3, 5), np.uint8))


def test_a_failed_write_leaves_no_file(tmp_path):
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    for path in (tmp_path / "reports.parquet", tmp_path / "reports.bin"):
        with pytest.raises(RuntimeError), io.ReportWriter(path, grr) as writer:
            writer.write(grr.privatize(np.arange(5000) % 5, rng=0))
            writer._flush_parquet() if path.suffix == ".parquet" else None  # a row group already written
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_keeps_its_config(tmp_path):
    sw = local.make("sw", epsilon=1.0, bins=4, output_bins=6)
    io.write_reports(tmp_path / "empty.parquet", sw, np.zeros(0, dtype=np.uint8))
    batch = io.read_reports(tmp_path / "empty.parquet")
    assert batch.n_read == 0 and batch.config == sw.config()


def test_missing_pyarrow_says_what_to_install(monkeypatch):
    from dpdist._io._pyarrow import require_pyarrow

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(DatasetUnavailableError, match=r"dpdist\[deploy\]"):
        require_pyarrow()


def test_a_file_that_is_neither_format_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, world")
    with pytest.raises(MalformedReportError, match="neither"):
        io.read_reports(path, local.make("grr", epsilon=1.0, domain_size=5))
