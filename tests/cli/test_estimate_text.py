"""``dpdist campaign estimate`` as text: values by label, the fixed-n and anytime intervals side
by side, what each means and the stop readout; from the same document the service serves (no server here: the
service's own ``served_estimate`` builds it; tests/cli/test_serve.py runs the command end to end)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("starlette")

from dpdist import local
from dpdist.cli._estimate_text import estimate_lines
from dpdist.serve._uncertainty import served_estimate

WEATHER = ["drizzle", "fog", "rain", "snow", "sun"]


def _document(protocol, aggregate, *, width=None, replicates=0):
    return served_estimate(protocol, aggregate, protocol.estimate(aggregate), level=0.95, width=width,
                           replicates=replicates, target_n=10_000, options={})


def test_a_labelled_frequency_campaign_prints_labels_and_both_intervals():
    protocol = local.make("grr", epsilon=2.0, labels=WEATHER)
    aggregate = protocol.simulate(np.random.default_rng(0).choice(5, 4000, p=[0.1, 0.05, 0.3, 0.05, 0.5]), rng=1)
    lines = estimate_lines(_document(protocol, aggregate, width=0.05))
    header = lines[0].split()
    assert header[:3] == ["value", "estimate", "fixed-n"] and "anytime" in header
    rows = [line.split() for line in lines[1:6]]
    assert [row[0] for row in rows[:3]] == ["sun", "rain", "drizzle"] and {row[0] for row in rows} == set(WEATHER)
    assert not any("item" in line for line in lines)
    for row in rows:  # [low, high] of both, around one estimate: the anytime one is the wider
        fixed = (float(row[2].strip("[,")), float(row[3].strip("]")))
        anytime = (float(row[4].strip("[,")), float(row[5].strip("]")))
        assert anytime[0] <= max(fixed[0], 0.0) + 1e-9 and anytime[1] >= min(fixed[1], 1.0) - 1e-9
    assert any(line.startswith("stop: width") and "n =" in line for line in lines)


def test_a_distribution_prints_the_mean_and_quantiles_with_both_intervals():
    protocol = local.make("hh", epsilon=2.0, bins=64, bounds=(0.0, 100.0))
    aggregate = protocol.simulate(100 * np.random.default_rng(2).beta(2, 5, 5000), rng=3)
    lines = estimate_lines(_document(protocol, aggregate, replicates=40))
    names = [line.split()[0] + (" " + line.split()[1] if line.startswith("quantile") else "") for line in lines[1:7]]
    assert names == ["mean"] + [f"quantile {q}" for q in ("0.1", "0.25", "0.5", "0.75", "0.9")]
    assert all(line.count("[") == 2 for line in lines[1:7])
    assert any(line.startswith("CDF band, widest: fixed-n") and "anytime" in line for line in lines)


def test_a_protocol_without_a_sequence_says_why():
    protocol = local.make("cms", epsilon=2.0, domain_size=8)
    aggregate = protocol.simulate(np.random.default_rng(4).integers(0, 8, 3000), rng=5)
    lines = estimate_lines(_document(protocol, aggregate))
    assert any(line.startswith("anytime: none, CMS") and "hash family" in line for line in lines)
    assert estimate_lines(None) == ["no report yet"]


def test_an_estimate_note_is_printed_and_served():
    # CP's uniform estimate of sparsity 0 says so in the service's document and the CLI's text
    protocol = local.make("cp", epsilon=1.0, domain_size=64)
    aggregate = protocol.simulate(np.random.default_rng(0).integers(0, 64, 2000), rng=1)
    document = _document(protocol, aggregate)
    assert len(document["notes"]) == 1 and "no item stands out of the noise" in document["notes"][0]
    assert any(line.startswith("note: no item stands out of the noise") for line in estimate_lines(document))
