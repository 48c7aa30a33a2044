"""The server's JSON log lines (``dpdist.serve._logs``): a JSON access line's method and path are percent-encoded as
the text line's are (attack 67, F11), whatever the request spelled."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("starlette")

from dpdist.serve._logs import AccessLog, JsonFormatter  # noqa: E402
from serve_support import HOSTILE_PATHS, assert_one_line, http_scope  # noqa: E402




@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_json_access_lines_path_is_percent_encoded_too(path, caplog):
    with caplog.at_level("INFO", logger="dpdist.serve.access"):
        AccessLog.write(http_scope(path, "GET"), "unmatched", 404, time.perf_counter(), full=True)
    (record,) = [record for record in caplog.records if record.name == "dpdist.serve.access"]
    document = json.loads(JsonFormatter().format(record))
    assert_one_line(document["path"])
    assert document["method"] == "GET" and document["route"] == "unmatched"
