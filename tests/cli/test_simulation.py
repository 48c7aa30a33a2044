"""The one-shot ``dpdist estimate FILE`` says first that it is a simulation whose truth is not private."""

import pytest

from cli_support import estimate_text, run


@pytest.mark.parametrize("options", [
    ("--column", "x", "--protocol", "sw", "--bounds", "-5,15", "--replicates", "0"),
    ("--column", "x", "--protocol", "pm", "--bounds", "-5,15"),
    ("--column", "page", "--labels", "pages.txt", "--protocol", "grr"),
    ("--column", "word", "--protocol", "pem"),
    ("--columns", "page,k", "--attributes",
     '[{"name": "page", "labels": ["home", "cart", "checkout", "help"]}, {"name": "k", "domain_size": 10}]',
     "--protocol", "smp"),
])
@pytest.mark.slow  # 0.41 CPU-s: command lines end to end
def test_a_one_shot_estimate_says_first_it_is_a_simulation_whose_truth_is_not_private(data, capsys, options):
    """the one-shot mode printed the file's exact mean, quantiles (and drew its histogram) beside the
    estimate with no line saying so, no guarantee and no mark of --seed; it now says first what it is (a simulation,
    the "true" values the data's own, not private, not for publication), then the estimate's guarantee and its
    randomness as 'dpdist release' words them."""
    options = tuple(str(data / option) if option == "pages.txt" else option for option in options)
    status, out, err = run(capsys, "estimate", data / "d.csv", *options, "--epsilon", "2", "--seed", "1")
    assert status == 0, err
    estimate_text(out)
    guarantee = out.splitlines()[1]
    assert guarantee == ("guarantee: 2-LDP (local: any two values of one user), of the simulated reports (not of the "
                         '"true" values), seeded generator: NOT for publication (the seed makes the randomization '
                         "reproducible)")
    status, out, err = run(capsys, "estimate", data / "d.csv", *options, "--epsilon", "2")
    assert status == 0, err
    estimate_text(out)
    assert "NOT for publication" not in out.splitlines()[1] and "unseeded generator" in out.splitlines()[1]


def test_a_one_shot_plot_is_marked_as_a_simulation(data, capsys, tmp_path, monkeypatch):
    """The figure of --plot draws the data's truth: a line on it says it is a simulation's, not private."""
    from dpdist import plotting

    drawn = {}
    monkeypatch.setattr(plotting, "save_estimate", lambda estimate, path, **options: drawn.update(options))
    status, out, err = run(capsys, "estimate", data / "d.csv", "--column", "x", "--protocol", "sw", "--epsilon", "1",
                           "--bounds", "-5,15", "--replicates", "0", "--plot", tmp_path / "x.png")
    assert status == 0, err
    assert drawn["truth"] is not None and "not private" in drawn["note"] and "NOT for publication" in drawn["note"]
    assert f"{tmp_path / 'x.png'} (a simulation's: the truth drawn is not private)" in out


def test_a_release_and_a_simulation_word_a_seed_alike(data, capsys):
    """The seed's mark is one string, 'dpdist release''s."""
    from dpdist.cli._arguments import SEEDED

    status, release, err = run(capsys, "release", data / "d.csv", "--column", "x", "--epsilon", "1", "--bounds",
                               "-5,15", "--seed", "1")
    assert status == 0, err
    status, simulation, err = run(capsys, "estimate", data / "d.csv", "--column", "x", "--protocol", "pm",
                                  "--epsilon", "1", "--bounds", "-5,15", "--seed", "1")
    assert status == 0, err
    assert SEEDED in release.splitlines()[0] and SEEDED in simulation.splitlines()[1]


@pytest.mark.parametrize("seed", [None, "3"])
def test_a_seeded_release_plot_says_so_on_the_figure(data, capsys, tmp_path, monkeypatch, seed):
    """A seeded 'dpdist release --plot' figure had no mark, where its text, JSON and table say 'seeded
    generator: NOT for publication'; an unseeded one has none."""
    from dpdist import plotting

    texts = []
    monkeypatch.setattr(plotting, "save_figure", lambda figure, path, **options: texts.extend(
        text.get_text() for text in figure.texts))
    seeding = ("--seed", seed) if seed is not None else ()
    status, out, err = run(capsys, "release", data / "d.csv", "--column", "x", "--epsilon", "1", "--bounds", "-5,15",
                           "--plot", tmp_path / "r.png", *seeding)
    assert status == 0, err
    assert texts == (["seeded generator: NOT for publication"] if seed is not None else []), texts


def test_a_one_shot_estimate_wraps_an_opm_circular_column_as_privatize_and_submit_do(tmp_path, capsys):
    """The one-shot estimate clipped an opm-circular column's values outside --bounds (25 h to 24 h),
    where privatize and submit wrap them (25 h is 01:00); now it wraps and says so, and --no-clip names the wrap."""
    data = tmp_path / "h.csv"
    data.write_text("h\n25\n-1\n3\n")
    base = ("estimate", data, "--column", "h", "--protocol", "opm-circular", "--epsilon", "1", "--bounds", "0,24")
    status, out, err = run(capsys, *base)
    assert status == 0, err
    assert "2 value(s) outside --bounds wrapped around the circle" in out and "(true 1)" in out, out
    status, out, err = run(capsys, *base, "--no-clip")
    assert status == 2 and "without --no-clip they are wrapped around the circle" in err and "25" not in err, err
