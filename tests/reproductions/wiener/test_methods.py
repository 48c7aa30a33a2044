"""The ``wiener`` reproduction's methods and metrics (``dpdist.reproductions.wiener.methods``)."""

import numpy as np
import pytest

from dpdist import local
from dpdist.datasets import get as get_dataset
from dpdist.reproductions.wiener import methods as paper_methods


def test_noise_power_ratio_is_one_for_oue_and_zero_at_dc_for_krr():
    dataset = get_dataset("flights-departure", bins=64)
    values = dataset.load(20_000, rng=0)
    truth = np.bincount(values, minlength=64) / values.size
    ratios = {"grr": [], "oue": []}
    for repeat in range(200):
        for protocol in ratios:
            estimate = paper_methods.noise_probe(values, dataset, {"protocol": protocol, "epsilon": 2.0}, repeat)
            ratios[protocol].append([paper_methods.noise_power_ratio(estimate, truth, band) for band in (0, 6)])
    grr, oue = np.array(ratios["grr"]), np.array(ratios["oue"])
    assert np.all(np.abs(grr[:, 0]) < 1e-9)  # KRR: the support counts sum to n exactly, P_0 = 0
    # band 6 averages |N_k|^2 over k = 32 (one frequency, Nyquist: a chi-square with 1 dof, sd sqrt(2));
    # 200 repeats: SE = sqrt(2 / 200) = 0.1, tolerance 5 SE.  Band 0 of OUE likewise.
    for column in (oue[:, 0], oue[:, 1], grr[:, 1]):
        assert abs(column.mean() - 1) < 0.5
    assert paper_methods.noise_power_ratio(estimate, truth, None) is None

def test_mse_at_iteration_reads_the_iiw_path_and_zero_is_dw():
    proto = local.make("oue", epsilon=3.0, domain_size=50)
    items = np.repeat(np.arange(50), 40)
    aggregator = proto.simulate(items, rng=3)
    truth = np.bincount(items, minlength=50) / items.size
    path = proto.estimate(aggregator, deconvolve="iiw", iterations=5, keep_path=True)
    dw = proto.estimate(aggregator, deconvolve="dw")
    assert paper_methods.mse_at_iteration(path, truth, 0) == pytest.approx(np.mean((dw.frequencies - truth) ** 2))
    assert paper_methods.mse_at_iteration(path, truth, 5) == pytest.approx(np.mean((path.frequencies - truth) ** 2))
    assert paper_methods.mse_at_iteration(path, truth, 6) is None
    assert paper_methods.mse_at_iteration(dw, truth, 0) is None
    assert paper_methods.top_k_mse(dw, truth) is None and paper_methods.detections(dw, truth) is None
