"""The server's JSON log lines (``dpdist.serve._logs``): a JSON access line's method and path are percent-encoded as
the text line's are (attack 67, F11), whatever the request spelled."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("starlette")

from dpdist.serve._logs import AccessLog, JsonFormatter  # noqa: E402


FORGED = '/x\nINFO:     - - "PUT /api/campaigns/c2/batches/- HTTP/1.1" 200 OK'
PATHS = [FORGED, "/api/campaigns/c2/config\r\nINJECTED", "/LOGSECRET5\x1b[2J", "/a\u202etxt.exe", "/caf\u00e9 \"q\""]


def _scope(path: str, method: str = "GET") -> dict:
    return {"type": "http", "method": method, "path": path, "http_version": "1.1", "client": ("127.0.0.1", 5555)}


def _one_line(text: str) -> None:
    assert text.isprintable() and text.isascii(), text  # no newline, CR, ESC, bidi override


@pytest.mark.parametrize("path", PATHS)
def test_a_json_access_lines_path_is_percent_encoded_too(path, caplog):
    with caplog.at_level("INFO", logger="dpdist.serve.access"):
        AccessLog.write(_scope(path, "GET"), "unmatched", 404, time.perf_counter(), full=True)
    (record,) = [record for record in caplog.records if record.name == "dpdist.serve.access"]
    document = json.loads(JsonFormatter().format(record))
    _one_line(document["path"])
    assert document["method"] == "GET" and document["route"] == "unmatched"
