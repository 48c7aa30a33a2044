"""attack70 F1, ``dpdist submit``: a config answer is an instruction to the device. One whose reports the service's body
cannot hold is refused in one line before anything is read, drawn or journaled; batches are cut to that body and a
resumed run resends them as they are; memory running out is one line, not an internal error."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx")

from ack_server_support import AckServer, right_ack  # noqa: E402 - after the extra's check
from cli_support import run  # noqa: E402 - after the extra's check
from dpdist.local.frequency.oue import OUE  # noqa: E402 - after the extra's check


def _config(domain_size: int, max_body_bytes: int = 16 << 20) -> dict:
    return {"campaign": "c", "state": "open", "max_body_bytes": max_body_bytes,
            "config": {"protocol": "oue", "epsilon": 1.0, "domain_size": domain_size}}


def _command(data, server) -> list:
    return ["submit", "--campaign", "c", data / "d.csv", "--column", "k", "--retries", "0", "--server", server.url]


def test_a_hostile_config_is_refused_in_one_line_before_anything_is_drawn(data, capsys, monkeypatch):
    """The attack: the real config with domain_size = 2*10^7 (~530 bytes) made `submit` of 300 values take 1.69 GB and
    39 s, then 'internal error MemoryError'."""
    monkeypatch.setenv("DPDIST_CACHE_DIR", str(data / "cache"))

    def drawn(*args, **kwargs):
        raise AssertionError("privatize was called before the config was refused")

    monkeypatch.setattr(OUE, "privatize", drawn)
    with AckServer([right_ack], config=_config(20_000_000)) as server:
        status, out, err = run(capsys, *_command(data, server))
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("dpdist: error: The config answer of campaign 'c'") and "domain_size = 20000000" in err
    assert server.requests == [] and not (data / "cache").exists()  # nothing sent, nothing journaled


def _ack(campaign: str, batch_id: str) -> bytes:
    return right_ack(campaign, batch_id)


def test_batches_fit_the_service_s_body_and_a_resumed_run_resends_the_same_bytes(data, capsys, monkeypatch):
    """600 OUE reports of 128 bytes were one batch of 77 kB for a service taking 8 kB; now each fits, and a second run
    resends the journaled batches (same ids, same bytes), drawing nothing."""
    monkeypatch.setenv("DPDIST_CACHE_DIR", str(data / "cache"))
    with AckServer([_ack], config=_config(1024, max_body_bytes=8192)) as server:
        status, out, err = run(capsys, *_command(data, server))
        assert status == 0, err
        first = list(server.requests)
        assert len(first) > 1 and all(len(body) <= 8192 for _, body in first)
        assert f"{len(first)} batch(es) acknowledged" in out
        server.script([_ack])
        status, out, err = run(capsys, *_command(data, server))
        assert status == 0 and "resuming from the journal" in err, err
        assert server.requests == first


def test_memory_running_out_is_one_line_naming_it(data, capsys, monkeypatch):
    import dpdist.cli._submit as submit

    def exhausted(client, args):
        raise MemoryError("Unable to allocate 3.49 GiB for an array with shape (300, 12500000) and data type uint8")
        yield  # pragma: no cover - a generator, as the real one

    monkeypatch.setattr(submit, "_submit_column", exhausted)
    with AckServer([_ack], config=_config(1024)) as server:
        status, out, err = run(capsys, *_command(data, server))
    assert status == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("dpdist: error: memory ran out running 'dpdist submit' (Unable to allocate 3.49 GiB")
    assert "internal error" not in err and "bug" not in err
