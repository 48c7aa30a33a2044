"""``dpdist campaign``: the options of its actions (the actions against a running service: tests/cli/test_serve.py)."""

from __future__ import annotations

import pytest

from cli_support import run


@pytest.mark.parametrize("option, url", [("--relay", "http://alice:S3cretPW@127.0.0.1:1"), ("--relay", "http://127.0.0.1:99999"),
                                         ("--issuer", "http://alice:S3cretPW@127.0.0.1:1")])
def test_create_refuses_a_relay_or_issuer_url_with_a_password_or_a_bad_port_in_one_line(capsys, monkeypatch, tmp_path, option, url):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", "admin-token-0123456789")
    (tmp_path / "c.json").write_text('{"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 2}')
    extra = ["--relay", "http://127.0.0.1:2", "--issuer-key", "k"] if option == "--issuer" else []
    status, _, err = run(capsys, "campaign", "create", "--server", "http://127.0.0.1:1", "--name", "c", "--config",
                         tmp_path / "c.json", option, url, *extra)
    assert status == 2 and err.count("\n") == 1 and f"The '{option}' option must be" in err and "S3cretPW" not in err
    assert "Traceback" not in err and ("user:password@" in err or "99999" in err)
