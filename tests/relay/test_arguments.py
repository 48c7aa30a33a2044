"""``dpdist.relay.create_app`` checks what ``dpdist relay`` checks, and the command line says it in
one line naming the option.

``min_batch=0`` made 372 empty batches in 1.5 s and never delivered 3 real reports, ``min_batch > max_batch``
delivered nothing, and an empty token was accepted: each is now refused before anything is opened.
"""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError

pytest.importorskip("starlette")

TOKEN = "relay-token-0123456789"
GOOD = {"collector": "https://collector.example", "relay_token": TOKEN, "min_batch": 5, "max_batch": 8}


@pytest.mark.parametrize("change, named, allowed, got", [
    ({"min_batch": 0}, "min_batch", "an int >= 1", "Got 0 instead."),
    ({"min_batch": 2.5}, "min_batch", "an int >= 1", "Got 2.5 instead."),
    ({"min_batch": True}, "min_batch", "an int >= 1", "Got True instead."),
    ({"min_batch": 10, "max_batch": 5}, "min_batch", "at most 'max_batch' = 5", "Got 10 instead."),
    ({"relay_token": ""}, "relay_token", "at least 16 printable ASCII characters", "Got a str of 0 characters instead."),
    ({"relay_token": "short-token"}, "relay_token", "at least 16 printable", "Got a str of 11 characters instead."),
    ({"relay_token": None}, "relay_token", "at least 16 printable", "Got a NoneType instead."),
    ({"relay_token": "short-token-\u00e9\u00e9\u00e9\u00e9\u00e9"}, "relay_token", "printable ASCII",
     "Got a str of 17 characters instead."),
    ({"admin_token": "x" * 15}, "admin_token", "at least 16 printable", "Got a str of 15 characters instead."),
    ({"collector": "ftp://collector.example"}, "collector", "an http:// or https:// URL",
     "Got 'ftp://collector.example' instead."),
    ({"collector": "https://"}, "collector", "with a host", "Got 'https://' instead."),
    ({"collector": "https://alice:S3cretPW@collector.example"}, "collector", "authenticates with its token",
     "Got 'https://alice:***@collector.example' instead."),
    ({"collector": "https://collector.example:99999"}, "collector", "with a host", "Got 'https://collector.example:99999' instead."),
    ({"interval": 0}, "interval", "a number of seconds > 0", "Got 0 instead."),
    ({"max_body_bytes": 2 << 20}, "max_body_bytes", "an int from 1024 to 1048576", "Got 2097152 instead."),
])
def test_create_app_refuses_what_the_relay_cannot_run_with_naming_the_argument(tmp_path, change, named, allowed, got):
    from dpdist.relay import create_app

    with pytest.raises(InvalidParameterError) as refused:
        create_app(str(tmp_path / "q.sqlite"), **{**GOOD, **change})
    message = str(refused.value)
    assert message.startswith(f"The '{named}' parameter of dpdist.relay.create_app must be ")
    assert allowed in message and message.endswith(got)
    assert "short-token" not in message  # a token is never echoed
    assert not (tmp_path / "q.sqlite").exists()  # refused before anything is opened


@pytest.mark.parametrize("queue", ["", ":memory:", "file:rq?mode=memory", "file:?mode=memory",
                                   "file:q.sqlite?mode=memory&cache=shared", "FILE:q3.sqlite", "postgresql:x"])
def test_an_in_memory_queue_is_refused_by_the_library_and_the_command_line(monkeypatch, capsys, queue):
    """``--queue ''`` started, then every forwarding step failed with 'no such table'."""
    from dpdist.cli import main
    from dpdist.relay import create_app

    with pytest.raises(InvalidParameterError) as refused:
        create_app(queue, **GOOD)
    assert str(refused.value).startswith("The 'db_path' parameter of dpdist.relay.create_app must be the path of the "
                                         "relay's SQLite queue file in an existing folder (not a folder, and not '' or ':memory:'")
    monkeypatch.setenv("DPDIST_RELAY_TOKEN", TOKEN)
    assert main(["relay", "--queue", queue, "--collector", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpdist: error: The '--queue' option must be ") and err.count("\n") == 1


def test_create_app_refuses_limits_naming_the_option(tmp_path):
    from dpdist._guard import Limits
    from dpdist.relay import create_app

    with pytest.raises(InvalidParameterError, match="'--header-timeout' option must be a number > 0"):
        create_app(str(tmp_path / "q.sqlite"), **GOOD, limits=Limits(header_timeout=0))
    with pytest.raises(InvalidParameterError, match="--max-inflight-bytes-per-address"):
        create_app(str(tmp_path / "q.sqlite"), **GOOD, limits=Limits(max_inflight_bytes_per_address=100))


def test_a_relay_built_in_python_with_good_arguments_has_the_limits(tmp_path):
    from dpdist.relay import create_app

    app = create_app(str(tmp_path / "q.sqlite"), **GOOD, admin_token=None)
    guard = app.state.guard
    assert guard.max_body_bytes == 1 << 20 and guard.limits.header_timeout == 10.0 and guard.rate.rate == 20.0
    assert guard.budget.limit == 128 << 20 and guard.budget.share == 16 << 20


@pytest.mark.parametrize("argv, environment, option", [
    (["--min-batch", "0"], {}, "The '--min-batch' option must be an int >= 1"),
    (["--min-batch", "20", "--max-batch", "10"], {}, "The '--min-batch' option must be at most '--max-batch' = 10"),
    ([], {"DPDIST_MIN_BATCH": "0"}, "The '--min-batch' option must be an int >= 1"),
    ([], {"DPDIST_RELAY_TOKEN": "short"}, "The '--relay-token' option must be a token of at least 16 printable ASCII "
     "characters, without surrounding spaces (or DPDIST_RELAY_TOKEN). Got a str of 5 characters"),
    ([], {"DPDIST_RELAY_TOKEN": "relay-token-\u00e9\u00e9\u00e9\u00e9\u00e9"}, "The '--relay-token' option must be a "
     "token of at least 16 printable ASCII characters"),
    (["--admin-token", "short"], {}, "The '--relay-admin-token' option must be a token of at least 16 printable ASCII "
     "characters, without surrounding spaces (or DPDIST_RELAY_ADMIN_TOKEN). Got a str of 5 characters"),
    (["--collector", "collector.example"], {}, "The '--collector' option must be an http:// or https:// URL"),
    (["--header-timeout", "0"], {}, "The '--header-timeout' option must be a number > 0"),
    (["--body-timeout", "120", "--body-idle-timeout", "500"], {}, "The '--body-idle-timeout' option must be at most "
     "--body-timeout (120.0)"),
    ([], {"DPDIST_BODY_IDLE_TIMEOUT": "500"}, "The '--body-idle-timeout' option must be at most --body-timeout (120.0)"),
    (["--max-body-bytes", "100"], {}, "The '--max-body-bytes' option must be an int from 1024 to 1048576"),
    ([], {"DPDIST_RATE_LIMIT": "fast"}, "The 'DPDIST_RATE_LIMIT' environment variable (for --rate-limit) must be a number"),
])
def test_the_command_line_prints_one_line_naming_the_option(tmp_path, monkeypatch, capsys, argv, environment, option):
    from dpdist.cli import main

    monkeypatch.setenv("DPDIST_RELAY_TOKEN", TOKEN)
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    command = ["relay", "--queue", str(tmp_path / "q.sqlite"), "--collector", "http://127.0.0.1:1", *argv]
    command = command[:3] + command[5:] if "--collector" in argv else command
    assert main(command) == 2
    err = capsys.readouterr().err
    assert option in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "q.sqlite").exists()


def test_the_relay_and_the_issuer_take_the_limit_options_of_dpdist_serve_with_the_same_defaults_and_variables():
    from dataclasses import fields

    from dpdist._guard import Limits
    from dpdist.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices

    def options(name):
        return {a.option_strings[-1]: a for a in commands[name]._actions if a.option_strings and a.dest != "help"}

    serve, relay = options("serve"), options("relay")
    issuer_commands = next(a for a in commands["issuer"]._actions if a.__class__.__name__ == "_SubParsersAction")
    issuer = {a.option_strings[-1]: a for a in issuer_commands.choices["serve"]._actions if a.option_strings}
    shared = ["--" + field.name.replace("_", "-") for field in fields(Limits) if field.name != "body_grace"]
    assert len(shared) == 13  # with --max-pending-heads-per-address, --body-idle-timeout
    for other in (relay, issuer):  # dpdist relay, dpdist issuer serve
        for option in shared:
            assert other[option].default == serve[option].default, option
            assert other[option].type == serve[option].type and other[option].choices == serve[option].choices, option
            variable = "DPDIST_" + option[2:].upper().replace("-", "_")
            assert variable in other[option].help and variable in serve[option].help
    assert relay["--max-body-bytes"].default == 1 << 20  # a sealed submission, at most (serve: a batch, 16 MiB)
