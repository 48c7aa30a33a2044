"""The service's error answers (``dpdist.serve._http``): the internal-error line names the request's path
percent-encoded, so a request cannot write a line or an escape sequence into the log."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("starlette")


FORGED = '/x\nINFO:     - - "PUT /api/campaigns/c2/batches/- HTTP/1.1" 200 OK'


def _scope(path: str, method: str = "GET") -> dict:
    return {"type": "http", "method": method, "path": path, "http_version": "1.1", "client": ("127.0.0.1", 5555)}


def _one_line(text: str) -> None:
    assert text.isprintable() and text.isascii(), text  # no newline, CR, ESC, bidi override


def test_an_internal_errors_line_names_the_path_escaped(caplog):
    from starlette.requests import Request

    from dpdist.serve._http import _internal_error

    scope = _scope(FORGED) | {"scheme": "http", "server": ("127.0.0.1", 80), "query_string": b"", "headers": [],
                              "root_path": ""}
    with caplog.at_level("ERROR", logger="dpdist"):
        answer = asyncio.run(_internal_error(Request(scope), RuntimeError("boom")))
    assert answer.status_code == 500
    (record,) = [record for record in caplog.records if "internal error on" in record.getMessage()]
    _one_line(record.getMessage())
