"""``dpdist.io``, the one public entry to files: its documented round trip and its old names."""

from __future__ import annotations

import numpy as np

from dpdist import io, local


def test_reports_and_state_go_through_files_as_the_module_shows(tmp_path):
    proto = local.make("oue", epsilon=1.0, domain_size=64)
    reports = proto.privatize(np.arange(300) % 64, rng=0)
    for name in ("reports.parquet", "reports.dpdist"):
        io.write_reports(tmp_path / name, proto, reports)
        batch = io.read_reports(tmp_path / name, proto)
        assert batch.n_read == 300 and not batch.rejected
        assert io.count_reports(tmp_path / name) == 300 and io.protocol_of_file(tmp_path / name).config() == proto.config()
    aggregator = proto.aggregator().add_batch(batch)
    io.save_state(tmp_path / "state.bin", aggregator)
    assert io.load_state(tmp_path / "state.bin", proto).aggregator == aggregator


def test_the_old_names_of_the_report_format_still_answer():
    proto = local.make("grr", epsilon=1.0, domain_size=8)
    assert io.report_layout(proto) is proto.report_format and io.ReportLayout is local.ReportFormat
    assert all(hasattr(io, name) for name in io.__all__)
