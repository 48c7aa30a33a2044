"""``dpdist audit``: the verdict as the exit status, one-line errors naming the option."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from dpdist.cli import main


def test_a_protocol_that_holds_exits_0(capsys):
    assert main(["audit", "--protocol", "grr", "--epsilon", "1", "--domain", "4", "--samples", "4000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "no violation found" in out and "certified >=" in out


def test_a_claim_below_the_protocol_exits_3_with_json(capsys):
    code = main(["audit", "--protocol", "grr", "--epsilon", "2", "--domain", "4", "--claim", "1", "--samples", "4000",
                 "--seed", "2", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 3 and document["verdict"] == "violates" and document["claimed_epsilon"] == 1.0


def test_a_callable_is_audited(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_rr.py").write_text(textwrap.dedent("""
        import math
        import numpy as np

        def keeps_too_often(values, rng):
            values = np.asarray(values)
            return np.where(rng.random(values.size) < 0.9, values, 1 - values)
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    code = main(["audit", "--callable", "broken_rr:keeps_too_often", "--epsilon", "1", "--domain", "2",
                 "--samples", "4000", "--seed", "3"])
    assert code == 3 and "violates" in capsys.readouterr().out


@pytest.mark.parametrize("argv, named", [
    (["--protocol", "grr", "--epsilon", "1", "--domain", "1"], "--domain"),
    (["--protocol", "grr", "--epsilon", "1", "--domain", "4", "--alpha", "2"], "--alpha"),
    (["--protocol", "grr", "--epsilon", "1", "--domain", "4", "--samples", "5"], "--samples"),
    (["--callable", "nowhere_at_all:f", "--epsilon", "1", "--domain", "4"], "--callable"),
    (["--callable", "json:loads", "--domain", "4"], "--epsilon"),
    (["--protocol", "grr", "--epsilon", "-1", "--domain", "4"], "--epsilon"),
    (["--protocol", "grr", "--epsilon", "1", "--domain", "4", "--reports", "3"], "reports"),
    (["--protocol", "nope", "--epsilon", "1", "--domain", "4"], "--protocol"),  # not local.make's 'name'
    (["--protocol", "sw", "--epsilon", "1", "--domain", "8"], "--domain"),  # items to a numerical protocol
    (["--protocol", "grr", "--epsilon", "1", "--domain", "0,1"], "--domain"),  # bounds to a frequency oracle
    (["--protocol", "calm", "--epsilon", "1", "--domain", "8"], "does not apply"),  # attributes, not a domain
    (["--protocol", "auto", "--epsilon", "1", "--domain", "0,1"], "must be D items"),  # a frequency oracle's chooser
])
def test_bad_options_are_one_line_naming_the_option(argv, named, capsys):
    assert main(["audit", *argv]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and named in error and "Traceback" not in error


def test_a_randomizer_that_raises_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    (tmp_path / "raising_rr.py").write_text("def f(values, rng):\n    raise RuntimeError('no key')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["audit", "--callable", "raising_rr:f", "--epsilon", "1", "--domain", "4", "--samples", "400"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "'randomizer' f raised RuntimeError" in error and "no key" in error


# errors of `dpdist audit` named an option the user did not type.
@pytest.mark.parametrize("argv, named", [
    (["--protocol", "grr", "--epsilon", "1", "--domain", "8", "--claim", "-1"], "--claim"),
    (["--protocol", "grr", "--epsilon", "1", "--domain", "8", "--claim", "nan"], "--claim"),
    (["--callable", "json:loads", "--epsilon", "1", "--domain", "1,0"], "--domain"),
    (["--protocol", "sw", "--epsilon", "1", "--domain", "a,b"], "--domain"),
])
def test_cli_errors_name_the_option_typed(argv, named, capsys):
    assert main(["audit", *argv]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and named in error and "--bounds" not in error
    if named == "--claim":
        assert "--epsilon" not in error


def test_a_param_key_given_twice_is_refused_naming_the_key_not_the_values(capsys):
    """``--param b=0.2 --param b=0.3`` ran with the last value."""
    status = main(["audit", "--protocol", "sw", "--epsilon", "1", "--domain", "0,1", "--param", "b=0.2",
                   "--param", "b=0.3"])
    err = capsys.readouterr().err
    assert status == 2 and err == ("dpdist: error: The '--param' option must be KEY=VALUE, each KEY once. Got the KEY "
                                   "'b' more than once instead.\n")
    assert "0.3" not in err


def test_a_domain_past_a_protocols_domain_size_names_the_domain_option(capsys):
    """``--domain 99999999999999999999`` was named "'domain_size' parameter of GRR"."""
    status = main(["audit", "--protocol", "grr", "--epsilon", "1", "--domain", "99999999999999999999"])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("dpdist: error: The '--domain' option must be an int from 2 to 2147483647")
    assert "domain_size" not in err and err.count("\n") == 1
