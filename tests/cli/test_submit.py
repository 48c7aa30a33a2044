"""``dpdist submit`` (dpdist.cli._submit): a device's rows sent to a campaign, and the journal that lets a
stopped run resume."""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("starlette")

from serve_support import admin_headers  # noqa: E402 - after the extra's check
import numpy as np  # noqa: E402 - after the extra's check
from cli_support import run  # noqa: E402 - after the extra's check
from ack_server_support import AckServer, right_ack  # noqa: E402 - after the extra's check
from dpdist.local.frequency.oue import OUE  # noqa: E402 - after the extra's check


@pytest.mark.slow  # the module's dpdist serve subprocess
def test_submit_names_the_journal_option_when_it_cannot_be_used(server, tmp_path, capsys, monkeypatch):
    answer = httpx.post(f"{server.url}/api/campaigns", headers=admin_headers(),
                        json={"campaign": "modes", "config": {"protocol": "grr", "epsilon": 1.0, "domain_size": 4}})
    assert answer.status_code == 201, answer.text
    assert httpx.post(f"{server.url}/api/campaigns/modes/open", headers=admin_headers()).status_code == 200
    data = tmp_path / "modes.csv"
    data.write_text("mode\n0\n1\n2\n3\n")
    monkeypatch.setenv("DPDIST_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("")
    for journal in (tmp_path / "a-file" / "j.bin", tmp_path / "a-directory"):
        code, _, err = run(capsys, "submit", "--server", server.url, "--campaign", "modes", str(data), "--column", "mode",
                           "--journal", str(journal))
        errors = [line for line in err.splitlines() if line.startswith("dpdist: error")]
        assert code == 2 and len(errors) == 1, err
        assert "--journal" in errors[0], errors[0]
        assert "resuming" not in err, err  # nothing was journaled there


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from serve_support import ServerProcess

    process = ServerProcess(str(tmp_path_factory.mktemp("serve") / "c.sqlite")).start()
    yield process
    process.stop()


def _campaign(server, config: dict) -> str:
    import uuid

    from dpdist.client import AdminClient
    from serve_support import ADMIN_TOKEN

    name = f"c{uuid.uuid4().hex[:10]}"
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        admin.create_campaign(name, config)
        admin.open_campaign(name)
    return name


@pytest.mark.slow  # a dpdist serve subprocess
def test_submit_skips_and_counts_unknown_labels_as_privatize_does(server, data, capsys):
    """`submit` aborted a whole file on one unknown label where `privatize` skipped and counted it."""
    from dpdist.client import AdminClient
    from serve_support import ADMIN_TOKEN

    campaign = _campaign(server, {"protocol": "grr", "epsilon": 1.0, "labels": ["home", "cart", "checkout"]})
    status, out, err = run(capsys, "submit", "--server", server.url, "--campaign", campaign, data / "d.csv",
                           "--column", "page")
    unknown = (np.loadtxt(data / "d.csv", delimiter=",", skiprows=1, usecols=1, dtype=str) == "help").sum()
    assert status == 0, err
    assert f"{unknown} value(s) outside the label domain rejected" in err
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        assert admin.campaign(campaign)["n"] == 600 - unknown


def test_submit_says_at_once_that_it_retries_an_unreachable_server(data, capsys):
    """A server that is down gave 41 s of silence, then one line: now the first failure is said at once."""
    from serve_support import free_port

    status, _, err = run(capsys, "submit", "--server", f"http://127.0.0.1:{free_port()}", "--campaign", "c",
                         data / "d.csv", "--column", "x", "--retries", "2")
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 3
    assert "did not answer" in lines[0] and "sending the same request again for up to 5 min (--retry-window" in lines[0]
    assert "nothing was counted yet; run the same command again" in lines[1]
    assert "ConnectError" in lines[2] and "after 3 attempt(s)" in lines[2] and "is the server running at" in lines[2]



def test_submit_through_an_ohttp_relay_names_the_relay_when_it_retries(data, capsys, tmp_path):
    """a relay's failure was reported as "http://collector did not answer (HTTP 502)"."""
    pytest.importorskip("pyhpke")
    from serve_support import free_port

    from dpdist import _ohttp

    keys = tmp_path / "ohttp-keys.bin"
    keys.write_bytes(_ohttp.encode_key_list([_ohttp.KeyConfig(0, _ohttp.public_key_of(b"\x01" * 32))]))
    relay = f"http://127.0.0.1:{free_port()}/ohttp"
    status, _, err = run(capsys, "submit", "--server", "http://collector.invalid", "--campaign", "c", data / "d.csv",
                         "--column", "x", "--retries", "1", "--ohttp-relay", relay, "--ohttp-keys", keys)
    first = err.strip().splitlines()[0]
    assert status == 2 and f"the Oblivious HTTP relay {relay} (or http://collector.invalid behind it) did not answer" in first
    last = err.strip().splitlines()[-1]  # it named the collector, to which nothing was sent
    assert f"through the Oblivious HTTP relay {relay} failed: ConnectError" in last
    assert "is the relay running at http://127.0.0.1:" in last and "collector.invalid" not in last


@pytest.mark.parametrize("options, named", [
    (["--ohttp-relay", "ftp://relay.example"], "--ohttp-relay"),
    (["--ohttp-keys", "keys.bin"], "--ohttp-keys"),
    (["--ohttp-relay", "http://relay.example/ohttp", "--ohttp-keys", "missing.bin"], "--ohttp-keys"),
])
def test_submit_names_a_wrong_ohttp_option_in_one_line(data, capsys, options, named):
    status, _, err = run(capsys, "submit", "--server", "http://127.0.0.1:9", "--campaign", "c", data / "d.csv",
                         "--column", "x", "--retries", "0", *options)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and named in lines[0], err


@pytest.mark.slow  # dpdist serve and a relay in subprocesses
def test_submit_through_a_standard_ohttp_relay_counts_each_row_once(server, data, capsys, tmp_path):
    from ohttp_relay_support import OhttpRelayProcess
    from serve_support import ADMIN_TOKEN

    from dpdist.client import AdminClient

    campaign = _campaign(server, {"protocol": "grr", "epsilon": 1.0, "labels": ["home", "cart", "checkout", "help"]})
    relay = OhttpRelayProcess(server.url + "/ohttp/gateway", lifetime=120).start()
    try:
        keys = tmp_path / "keys.bin"
        keys.write_bytes(httpx.get(server.url + "/ohttp/keys").content)
        status, _, err = run(capsys, "submit", "--server", server.url, "--campaign", campaign, data / "d.csv", "--column",
                             "page", "--ohttp-relay", relay.url + "/ohttp", "--ohttp-keys", keys, "--batch-size", "250")
        assert status == 0, err
        swapped = tmp_path / "swapped.bin"
        from dpdist._ohttp import KeyConfig, decode_key_list, encode_key_list, public_key_of

        swapped.write_bytes(encode_key_list([KeyConfig(decode_key_list(keys.read_bytes())[0].key_id, public_key_of(b"\x05" * 32))]))
        status, _, err = run(capsys, "submit", "--server", server.url, "--campaign", campaign, data / "d.csv", "--column",
                             "page", "--ohttp-relay", relay.url + "/ohttp", "--ohttp-keys", swapped)
        # the config itself goes through the relay, encapsulated to the swapped key: the gateway cannot open it
        assert status == 2 and "not_decapsulated" in err and len(err.strip().splitlines()) == 1, err
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.campaign(campaign)["n"] == 600
    finally:
        relay.kill()


def test_submit_takes_no_other_answer_for_an_acknowledgement_and_resends_the_journaled_batch(data, capsys, monkeypatch):
    """A 200 that is not the service's acknowledgement of the batch (a captive portal's page) was printed as
    counted, or crashed `submit` with a traceback (KeyError, JSONDecodeError); the batch must stay for the next run."""

    monkeypatch.setenv("DPDIST_CACHE_DIR", str(data / "cache"))
    config = {"campaign": "c", "state": "open", "config": {"protocol": "grr", "epsilon": 1.0, "domain_size": 10}}
    command = ["submit", "--campaign", "c", data / "d.csv", "--column", "k", "--retries", "1"]
    with AckServer([b"<html>Sign in to the hotel Wi-Fi</html>"], config=config) as server:
        status, out, err = run(capsys, *command, "--server", server.url)
        lines = err.strip().splitlines()
        assert status == 2 and out == "" and "Traceback" not in err and len(lines) == 3, err
        assert f"dpdist: {server.url} did not acknowledge the batch (no acknowledgement of batch id" in lines[0]
        assert "nothing was counted yet" in lines[1] and lines[2].startswith("dpdist: error: PUT ")
        assert "got no acknowledgement of batch id" in lines[2] and f"Is {server.url} the dpdist service" in lines[2]
        first = server.requests
        assert len(first) == 2 and len(set(first)) == 1 and server.counted == []
        server.script([b'{"campaign": "c", "batch_id": "', right_ack])  # cut short, then the acknowledgement
        status, out, err = run(capsys, *command, "--server", server.url)
        assert status == 0 and "resuming from the journal" in err and "1 batch(es) acknowledged" in out, err
        assert server.requests == first  # the same batch id and bytes, drawn once
        assert len(server.counted) == 1


# ---------------------------------------------------------------- a config answer is an instruction
# One whose reports the service's body cannot hold is refused in one line before anything is read, drawn or journaled;
# batches are cut to that body and a resumed run resends them as they are; memory running out is one line.

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


@pytest.mark.parametrize("config", [{"protocol": "oue", "epsilon": -1.0, "domain_size": 8},
                                    {"protocol": "nope", "epsilon": 1.0}])
def test_a_config_this_dpdist_cannot_build_is_the_server_s_answer_refused(data, capsys, monkeypatch, config):
    """A hostile config's out-of-range parameter read as the user's own mistake (`The 'epsilon' parameter of
    GRR must be ...`, exit 2); it is the server's answer, refused in one line naming it, nothing sent."""
    monkeypatch.setenv("DPDIST_CACHE_DIR", str(data / "cache"))
    with AckServer([right_ack], config={"campaign": "c", "state": "open", "config": config}) as server:
        status, out, err = run(capsys, *_command(data, server))
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("dpdist: error: The config answer of campaign 'c' is not a config this dpdist can use")
    assert server.requests == []


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
