"""Categorical data by label: a public label domain in the config."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli import main
from dpdist.errors import InvalidParameterError, OutOfDomainError

PAGES = ["home", "cart", "checkout", "help"]


def _page_views(n, seed):
    return np.random.default_rng(seed).choice(PAGES, size=n, p=[0.5, 0.25, 0.15, 0.10])


@pytest.mark.parametrize("name", local.available("frequency"))
def test_every_frequency_protocol_takes_labels_and_the_config_carries_them(name):
    from conformance._examples import EXAMPLES

    example = next(e for e in EXAMPLES[name] if "domain_size" in e)
    params = {k: v for k, v in example.items() if k != "domain_size"}
    labels = [f"page-{i}" for i in range(example["domain_size"])]
    proto = local.make(name, **params, labels=labels)
    config = json.loads(json.dumps(proto.config()))
    assert config["labels"] == labels and config["domain_size"] == len(labels)
    assert local.from_config(config) == proto
    assert proto.labels == tuple(labels)


def test_privatize_estimate_and_estimates_work_with_labels():
    proto = local.make("oue", epsilon=2.0, labels=PAGES)
    values = _page_views(20_000, 0)
    by_label = proto.estimate(proto.privatize(values, rng=1)).by_label()
    assert list(by_label) == PAGES
    truth = {page: float(np.mean(values == page)) for page in PAGES}
    se = np.sqrt(proto.variance(values.size, list(truth.values())))
    for (page, share), error in zip(by_label.items(), se):
        assert abs(share - truth[page]) < 5.5 * error  # 5.5 sigma: two-sided 4e-8 per item
    simulated = proto.estimate(proto.simulate(values, rng=2))
    assert simulated.labels == tuple(PAGES)
    assert simulated.top_labels(1)[0][0] == "home"
    # items still work (a client that sends indices), and give the same reports
    assert np.array_equal(proto.privatize(proto.encode(values), rng=5), proto.privatize(values, rng=5))


def test_unknown_labels_are_rejected_and_counted():
    proto = local.make("grr", epsilon=1.0, labels=PAGES)
    with pytest.raises(OutOfDomainError, match=r"Got 1 value\(s\) that are no label, the first at position 1 \(not shown") as refused:
        proto.privatize(["home", "basket"], rng=0)
    assert "basket" not in str(refused.value)  # a person's answer, not shown
    assert proto.encode(["home", "basket", "help", "x"], on_unknown="drop").tolist() == [0, 3]
    with pytest.raises(InvalidParameterError, match="on_unknown"):
        proto.encode(["home"], on_unknown="ignore")
    with pytest.raises(InvalidParameterError, match="label domain"):
        local.make("grr", epsilon=1.0, domain_size=4).encode(["home"])


@pytest.mark.parametrize(
    "labels", [["only"], ["a", "a"], [1, 2], ["a", ""], "ab", ["a", "b", "c"]], ids=str
)
def test_bad_label_domains_are_refused(labels):
    with pytest.raises(InvalidParameterError, match="labels"):
        local.make("grr", epsilon=1.0, domain_size=4, labels=labels)


def test_auto_takes_its_domain_size_from_the_labels():
    assert local.make("auto", epsilon=1.0, labels=PAGES).name == "grr"
    chosen = local.make("auto", epsilon=1.0, labels=[str(i) for i in range(40)])
    assert chosen.name == "rws" and chosen.domain_size == 40  # 16 bits at SS's variance (within 1 %), not SS's 40


def test_configs_without_labels_are_unchanged():
    assert local.make("oue", epsilon=1.0, domain_size=4).config() == {
        "protocol": "oue", "version": 1, "epsilon": 1.0, "domain_size": 4
    }


def test_cli_privatize_aggregate_estimate_with_a_label_file(tmp_path, capsys):
    values = _page_views(3_000, 3)
    values[::100] = "basket"  # 30 values outside the domain
    (tmp_path / "views.csv").write_text("page\n" + "\n".join(values) + "\n")
    (tmp_path / "pages.txt").write_text("\n".join(PAGES) + "\n")
    (tmp_path / "proto.json").write_text(json.dumps({"protocol": "oue", "epsilon": 1.0, "domain_size": 4}))
    assert main(["privatize", "--config", str(tmp_path / "proto.json"), "--labels", str(tmp_path / "pages.txt"),
                 "--column", "page", str(tmp_path / "views.csv"), "--out", str(tmp_path / "r.bin"),
                 "--seed", "1", "--no-progress"]) == 0
    assert "30 value(s) outside the label domain rejected" in capsys.readouterr().out
    assert main(["aggregate", str(tmp_path / "r.bin"), "--state", str(tmp_path / "s.bin"), "--no-progress"]) == 0
    assert main(["estimate", "--state", str(tmp_path / "s.bin"), "--out", str(tmp_path / "e.csv")]) == 0
    lines = (tmp_path / "e.csv").read_text().splitlines()
    # the table of any estimate (FrequencyEstimate.table(): its 95% interval too, as without labels)
    assert lines[0] == "item,label,frequency,standard_error,low,high"
    assert [line.split(",")[1] for line in lines[1:]] == PAGES
    proto = local.make("oue", epsilon=1.0, labels=PAGES)
    state = io.load_state(tmp_path / "s.bin", journal=False).aggregator
    assert state.protocol == proto and state.n == 2_970


def test_cli_one_shot_estimate_with_labels(tmp_path, capsys):
    values = _page_views(2_000, 4)
    values[:7] = "basket"
    (tmp_path / "views.csv").write_text("page\n" + "\n".join(values) + "\n")
    (tmp_path / "pages.txt").write_text("\n".join(PAGES))
    assert main(["estimate", str(tmp_path / "views.csv"), "--column", "page", "--protocol", "grr",
                 "--epsilon", "2", "--labels", str(tmp_path / "pages.txt"), "--seed", "0",
                 "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "7 value(s) outside the label domain" in out and "checkout" in out
    assert (tmp_path / "p.png").stat().st_size > 0


def test_cli_label_file_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "one.txt").write_text("home\nhome\n")
    (tmp_path / "proto.json").write_text(json.dumps({"protocol": "oue", "epsilon": 1.0, "domain_size": 4}))
    (tmp_path / "v.csv").write_text("page\nhome\n")
    for labels in ("one.txt", "missing.txt"):
        assert main(["privatize", "--config", str(tmp_path / "proto.json"), "--labels", str(tmp_path / labels),
                     "--column", "page", str(tmp_path / "v.csv"), "--out", str(tmp_path / "r.bin")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "'--labels'" in err


@pytest.mark.parametrize("kind", ["array", "series", "index"])
@pytest.mark.parametrize("name", ["grr", "oue", "auto"])
def test_an_array_or_a_series_of_labels_is_taken_as_the_list(name, kind):
    """``labels=np.array(["a", "b"])`` (or a Series) said "GRR needs the parameter(s)
    ['domain_size']" while ``labels=["a", "b"]`` worked."""
    pandas = pytest.importorskip("pandas")
    given = {"array": np.array(["a", "b", "c"]), "series": pandas.Series(["a", "b", "c"]),
             "index": pandas.Index(["a", "b", "c"])}[kind]
    protocol = local.make(name, epsilon=2, labels=given)
    assert protocol.labels == ("a", "b", "c") and protocol.domain_size == 3
    assert all(type(label) is str for label in protocol.labels)
    assert protocol.config()["labels"] == ["a", "b", "c"] and json.dumps(protocol.config())


@pytest.mark.parametrize("labels", ["ab", np.array([["a", "b"]]), {"a": 1, "b": 2}])
def test_labels_that_are_no_list_are_named_not_a_missing_domain_size(labels):
    with pytest.raises(InvalidParameterError, match=r"^The 'labels' parameter of GRR must be a list of at least 2"):
        local.make("grr", epsilon=2, labels=labels)
