"""The ``cp`` reproduction's methods and metrics (``dpdist.reproductions.cp.methods``)."""

import numpy as np
import pytest

from dpdist import local, metrics, postprocess
from dpdist.datasets import get as get_dataset
from dpdist.errors import InvalidParameterError
from dpdist.reproductions.cp import methods as paper_methods


def test_sparsity_makes_geometric_data_0_1_sparse():
    # the smallest s with ||p - [p]_s||_1 <= 0.1 (sec. 5); Geo's tail after s items is (1 - lambda)^s
    for lam in (0.8, 0.6):
        p = lam * (1 - lam) ** np.arange(10_000)
        tails = 1 - np.cumsum(np.sort(p)[::-1])
        assert paper_methods.SPARSITY[f"geo-{lam:g}"] == int(np.argmax(tails <= 0.1)) + 1
    assert paper_methods.SPARSITY["unif-10"] == 10 and paper_methods.SPARSITY["unif-25"] == 25

def test_method_is_cp_with_the_raw_omp_estimate_and_metrics_decode_it():
    dataset = get_dataset("unif-10")
    values = dataset.load(20_000, rng=0)
    truth = np.bincount(values, minlength=dataset.domain_size) / values.size
    params = {"epsilon": 0.5, "calibration": "exact", "matrix_seed": 7}
    raw = paper_methods.compressive_privatization(values, dataset, params, np.random.default_rng(1))
    assert raw.postprocess == "none" and raw.details["sparsity"] == 10
    # the same protocol estimated with postprocess="simplex" is what decoded_l1 scores
    proto = local.make("cp", epsilon=0.5, domain_size=10_000, measurements=500, matrix_seed=7)
    # with matrix_seed given, the method's rng goes to simulate only
    direct = proto.estimate(proto.simulate(values, rng=np.random.default_rng(1)), sparsity=10)
    assert paper_methods.decoded_l1(raw, truth, decoder="simplex") == pytest.approx(metrics.l1(direct, truth))
    assert paper_methods.decoded_l1(raw, truth, decoder="clip-normalize") == pytest.approx(
        metrics.l1(postprocess.clip_normalize(raw.frequencies), truth)
    )
    with pytest.raises(InvalidParameterError, match="sparsity"):
        paper_methods.compressive_privatization(values, get_dataset("zipf-1.1"), params, 0)

@pytest.mark.slow  # 0.38 CPU-s: a reproduction's method end to end
def test_privacy_loss_records_the_papers_excess_and_the_calibrated_guarantee():
    dataset = get_dataset("geo-0.8")
    values = dataset.load(1_000, rng=0)
    losses = {}
    for calibration in ("none", "exact"):
        params = {"epsilon": 0.5, "calibration": calibration, "on_privacy_excess": "warn", "matrix_seed": 0}
        estimate = paper_methods.compressive_privatization(values, dataset, params, np.random.default_rng(0))
        losses[calibration] = paper_methods.privacy_loss(estimate, None)
    # k = 10000, m = 500, matrix seed 0: beta = 0.188 and eps0 = eps is 0.587-LDP (docs/explanation/frequency-estimators.md)
    assert losses["none"] == pytest.approx(0.587, abs=0.001)
    assert losses["exact"] <= 0.5 * (1 + 1e-9)
    # the high regime is used below eps = 1, the medium one (Pr[+1] = e^-eps) from 1 on
    high = paper_methods.compressive_privatization(values, dataset, {"epsilon": 2.0, "regime": "high", "matrix_seed": 0}, 0)
    auto = paper_methods.compressive_privatization(values, dataset, {"epsilon": 2.0, "matrix_seed": 0}, 0)
    assert high.epsilon <= 2.0 + 1e-9 and auto.epsilon <= 2.0 + 1e-9
    assert local.make("cp", epsilon=2.0, domain_size=10_000, regime="medium").mechanism_epsilon == pytest.approx(
        auto.details["mechanism_epsilon"]
    )
