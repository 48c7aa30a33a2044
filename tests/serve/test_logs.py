"""``dpdist.serve._logs``: the server's log records, text or JSON, every one with the server's own secrets masked."""

from __future__ import annotations

import json
import logging
import logging.config

import pytest

pytest.importorskip("starlette")

from dpdist.serve._logs import log_config  # noqa: E402


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_record_is_one_line_of_its_format_the_servers_secrets_masked(log_format, capsys):
    logger, kept = logging.getLogger("dpdist"), logging.getLogger("dpdist").handlers[:]
    logging.config.dictConfig(log_config(log_format, "info", ("admin-0123456789",)))
    try:
        try:
            raise RuntimeError("the driver said admin-0123456789")
        except RuntimeError:
            logging.getLogger("dpdist.serve").exception("failed with %s", "admin%2D0123456789")
    finally:
        logger.handlers[:] = kept
    err = capsys.readouterr().err
    assert "admin" not in err and "failed with ***" in err and "the driver said ***" in err, err
    if log_format == "json":
        (document,) = map(json.loads, err.splitlines())
        assert document["level"] == "error" and document["logger"] == "dpdist.serve" and "exception" in document
