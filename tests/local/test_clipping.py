"""Clipping for every numerical local protocol and the command line, by default.

One value outside the bounds aborted `privatize`, `submit` and the one-shot `estimate` ("Got 1398
value(s) outside") while `dpdist release` clipped.  Now `clip=True` (and `--clip`) is the default of
every numerical protocol, as of every central release: a value outside the bounds is randomized as
the nearest bound, the count is reported where the values are (a warning, a line of the command's
output) and never sent: the reports are exactly those of the clipped values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from conformance._examples import EXAMPLES
from dpdist import io, local
from dpdist.cli import main
from dpdist.errors import ClippedValuesWarning, MissingValuesError, MissingValuesWarning, OutOfDomainError

#: every registered numerical protocol, with the parameters of its first conformance example (other than epsilon
#: and the bounds, set below): the registry's, so a new protocol is checked here with no list to join
NUMERICAL = {
    name: {key: value for key, value in EXAMPLES[name][0].items() if key not in ("epsilon", "bounds")}
    for name in local.available("numerical")
}


@pytest.mark.parametrize("name", sorted(NUMERICAL))
def test_values_outside_the_bounds_are_randomized_as_the_nearest_bound(name):
    proto = local.make(name, epsilon=1.0, bounds=(10.0, 20.0), **NUMERICAL[name])
    values = np.array([12.0, 25.0, 9.0, -math.inf, math.inf, math.nan, 20.0, 10.0])
    clipped = np.array([12.0, 20.0, 10.0, 10.0, 20.0, 10.0, 20.0, 10.0])
    if proto.circular:  # one period of a circle: a finite value outside wraps around (25 is 15, 9 is 19)
        clipped = np.array([12.0, 15.0, 19.0, 10.0, 20.0, 10.0, 20.0, 10.0])
    # the missing value (NaN) is refused unless the caller says what it is: here the lower bound
    with pytest.raises(MissingValuesError, match=r"has 1 missing value\(s\) .* among 8"):
        proto.privatize(values, rng=3)
    with pytest.warns(ClippedValuesWarning, match=r"4 of 8 value\(s\) outside the bounds \[10, 20\]"), \
            pytest.warns(MissingValuesWarning, match="1 missing value"):
        reports = proto.privatize(values, rng=3, missing=10.0)
    np.testing.assert_array_equal(reports, proto.privatize(clipped, rng=3, clip=False))
    with pytest.warns(ClippedValuesWarning), pytest.warns(MissingValuesWarning):
        simulated = proto.simulate(values, rng=4, missing=10.0)
    assert simulated == proto.simulate(clipped, rng=4, clip=False)
    with warnings.catch_warnings():  # nothing to clip: no warning
        warnings.simplefilter("error")
        proto.privatize(clipped, rng=3)
    with pytest.raises(OutOfDomainError, match="values"):
        proto.privatize(values, rng=3, clip=False, missing=10.0)
    assert proto.clip_values(values)[1] == 5


def test_the_count_is_not_in_the_reports_or_their_config():
    """What leaves the device is the reports of the clipped values: the same bytes, whatever was clipped."""
    proto = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=8)
    with pytest.warns(ClippedValuesWarning):
        outside = proto.privatize([0.5, 7.0, -3.0], rng=9)
    inside = proto.privatize([0.5, 1.0, 0.0], rng=9)
    assert outside.tobytes() == inside.tobytes() and outside.dtype == inside.dtype
    assert "clip" not in proto.config()


def test_the_two_phase_mean_and_variance_clips_too():
    proto = local.make("pm", epsilon=2.0, bounds=(0.0, 10.0))
    values = np.random.default_rng(0).uniform(0, 10, 4_000)
    with pytest.warns(ClippedValuesWarning, match="2 of 4000"):
        clipped = proto.estimate_mean_variance(np.r_[values[:-2], 50.0, -50.0], rng=1)
    assert clipped.mean == proto.estimate_mean_variance(np.r_[values[:-2], 10.0, 0.0], rng=1).mean
    with pytest.raises(OutOfDomainError):
        proto.estimate_mean_variance([1.0, 11.0], rng=0, clip=False)


@pytest.fixture
def column(tmp_path):
    values = np.r_[np.linspace(0.5, 9.5, 97), [12.0, -3.0, 40.0]]  # 3 outside [0, 10]
    np.random.default_rng(0).shuffle(values)
    (tmp_path / "d.csv").write_text("x\n" + "\n".join(f"{v:g}" for v in values) + "\n")
    (tmp_path / "clipped.csv").write_text("x\n" + "\n".join(f"{v:g}" for v in np.clip(values, 0, 10)) + "\n")
    (tmp_path / "sw.json").write_text('{"protocol": "sw", "epsilon": 1, "bounds": [0, 10], "bins": 16}')
    return tmp_path


def test_cli_privatize_clips_counts_and_writes_the_reports_of_the_clipped_values(column, capsys):
    common = ["--column", "x", "--config", str(column / "sw.json"), "--seed", "5", "--no-progress"]
    assert main(["privatize", str(column / "d.csv"), "--out", str(column / "a.bin"), *common]) == 0
    out = capsys.readouterr().out
    assert "100 report(s) of sw" in out and "3 value(s) outside the bounds [0, 10] clipped" in out
    assert main(["privatize", str(column / "clipped.csv"), "--out", str(column / "b.bin"), *common]) == 0
    assert "bounded" not in capsys.readouterr().out
    first, second = io.read_reports(column / "a.bin"), io.read_reports(column / "b.bin")
    np.testing.assert_array_equal(first.reports, second.reports)
    assert main(["privatize", str(column / "d.csv"), "--out", str(column / "c.bin"), *common, "--no-clip"]) == 2
    err = capsys.readouterr().err
    assert "--no-clip" in err and "3 value(s) outside" in err and not (column / "c.bin").exists()


def test_cli_privatize_clips_a_numeric_column_binned_for_a_frequency_protocol(column, capsys):
    config = '{"protocol": "grr", "epsilon": 1, "domain_size": 5}'
    assert main(["privatize", str(column / "d.csv"), "--column", "x", "--config", config, "--bounds", "0,10",
                 "--out", str(column / "g.bin"), "--no-progress"]) == 0
    assert "3 value(s) outside the bounds [0, 10] clipped" in capsys.readouterr().out


def test_cli_estimate_clips_to_bounds_and_says_how_many(column, capsys):
    argv = ["estimate", str(column / "d.csv"), "--column", "x", "--protocol", "sw", "--epsilon", "2",
            "--bounds", "0,10", "--seed", "1", "--replicates", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "clipped            3 value(s) outside --bounds" in out
    assert main(argv + ["--no-clip"]) == 2
    assert "--no-clip" in capsys.readouterr().err


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from serve_support import ServerProcess

    process = ServerProcess(str(tmp_path_factory.mktemp("serve") / "c.sqlite")).start()
    yield process
    process.stop()


@pytest.mark.slow  # a dpdist serve subprocess
def test_cli_submit_clips_and_counts_on_this_machine_only(server, column, capsys):
    from dpdist.client import AdminClient
    from serve_support import ADMIN_TOKEN

    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        admin.create_campaign("bounded", {"protocol": "sw", "epsilon": 1.0, "bounds": [0, 10], "bins": 16})
        admin.open_campaign("bounded")
        assert main(["submit", "--server", server.url, "--campaign", "bounded", str(column / "d.csv"),
                     "--column", "x", "--no-clip"]) == 2
        assert "--no-clip" in capsys.readouterr().err and admin.campaign("bounded")["n"] == 0
        assert main(["submit", "--server", server.url, "--campaign", "bounded", str(column / "d.csv"),
                     "--column", "x"]) == 0
        out, err = capsys.readouterr()
        assert "100 report(s) accepted" in out and "3 value(s) outside the bounds [0, 10] clipped" in err
        state = admin.campaign("bounded")
        assert state["n"] == 100 and state["rejected"] == {} and "clip" not in str(state["config"])
