"""Iterative Bayesian update: dpdist ``estimator="ibu"`` against multi-freq-ldpy's ``*_Aggregator_IBU``.

Data as in ``bench_estimators.py``: ``n`` users drawn from Zipf(1.1) or Geometric(0.8)
(truncated to ``d`` items), generator seed 0, in the order d, data, eps; the truth is the
empirical frequency vector.  Reports: dpdist ``privatize(values, rng=1)``, handed to the
peer in its own format (GRR: the list of ints; OUE: the unpacked ``n x d`` bits, as
``int32`` because the peer sums the rows with Python's ``sum``).  For SS and OLH the two
libraries' reports differ (multi-freq-ldpy's SS uses ``round(d/(e^eps+1))`` items, dpdist
the floor or ceiling of least variance; its LH hashes with xxhash32), so the peer runs its own client on the same values
(``numpy.random.seed(1)``).

Estimators and stopping rules:

* dpdist ``ibu`` (GRR only: dpdist offers IBU where the aggregate is the histogram of channel
  outputs, grr/hr/flh/cp): EM on the exact likelihood, SQUAREM, stops when the Frank-Wolfe
  duality gap certifies ``max L - L(f) < 1`` nat, at most 10^4 iterations;
* the same with ``tolerance=1e-6`` (a certified gap of 1e-6 nat), to see it reach the MLE;
* dpdist ``mle`` (GRR): the closed-form maximum likelihood -- the fixed point both IBUs target;
* dpdist ``unbiased`` and ``unbiased+simplex`` (its Euclidean projection onto the simplex);
* multi-freq-ldpy ``IBU`` (its defaults): plain EM from the uniform start, stops when
  ``max_v |f_t - f_{t-1}| < 1e-12`` or after 10^4 iterations.  For UE, SS and LH its matrix
  ``A`` (``p`` on the diagonal, ``q`` elsewhere) is applied to the normalized *support
  counts* ``c``.  On the simplex ``(A f)_y = q + (p - q) f_y`` and ``A`` is symmetric, so the
  EM step keeps ``sum f = 1`` and increases ``sum_y c_y log(f_y + kappa)``, ``kappa = q/(p-q)``:
  a composite likelihood whose maximizer is GRR's closed form (water filling,
  ``dpdist.local.frequency._exact_channel.grr_maximum_likelihood`` on the peer's ``p, q`` and
  counts).  That is its fixed point, reported as ``|f - fixed point|``; for GRR it is the MLE.

Times: dpdist's ``estimate`` (median of 3); the peer's whole ``*_Aggregator_IBU`` call (its
Python counting loop included) and, separately, its numba ``IBU`` kernel alone (the module's
``IBU`` is wrapped with a timer; compiled before timing).  ``cap`` says whether the peer's
EM ran to ``nb_iter``: one more EM step from its output still moves some coordinate by
``>= tol``.

Usage::

    uv run --extra bench python benchmarks/bench_ibu_peers.py           # d 64, 1024; eps 1, 4; n 1e5
    uv run --extra bench python benchmarks/bench_ibu_peers.py --quick   # d 64, n 2e4 (< 1 min)

Writes the page's two tables to stdout and the raw records to ``benchmarks/results/ibu_peers*.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_estimators import distribution  # noqa: E402  (same data as the estimator comparison)

from dpdist import local, metrics  # noqa: E402
from dpdist.local.frequency._exact_channel import grr_maximum_likelihood  # noqa: E402

PROTOCOLS = ["grr", "oue", "ss", "olh"]
PEER_TOLERANCE = 1e-12
#: a tight duality-gap tolerance (nats) for dpdist's IBU, to check it reaches the MLE
TIGHT = 1e-6


class _KernelTimer:
    """Wraps a multi-freq-ldpy module's ``IBU``: times each call and keeps its inputs and output."""

    def __init__(self, module):
        self.module, self.original = module, module.IBU
        self.calls = []

    def __call__(self, k, A, obs_freq, nb_iter, tol, err_func):
        started = time.perf_counter()
        result = self.original(k, A, obs_freq, nb_iter, tol, err_func)
        self.calls.append({"seconds": time.perf_counter() - started, "A": A, "obs": obs_freq, "f": result})
        return result

    def __enter__(self):
        self.module.IBU = self
        return self

    def __exit__(self, *exc):
        self.module.IBU = self.original


def _compile_peer_kernel():
    from multi_freq_ldpy.estimators.Histogram_estimator import IBU

    IBU(4, np.full((4, 4), 0.25), np.full(4, 0.25), 10, PEER_TOLERANCE, "max_abs")


def _scores(estimate, truth) -> dict:
    return {"mse": metrics.mse(estimate, truth), "l1": metrics.l1(estimate, truth)}


def _timed(function, runs=3):
    seconds, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - started)
    return result, float(np.median(seconds))


def _loglikelihood(protocol, counts, f) -> float:
    probabilities = protocol.channel_operator().matvec(np.asarray(f, dtype=np.float64))
    mask = counts > 0
    return float(np.sum(counts[mask] * np.log(probabilities[mask])))


def peer_ibu(protocol_name, values, reports, d, epsilon) -> dict:
    """Run multi-freq-ldpy's IBU aggregator; return its estimate, times and fixed-point diagnostics."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    module = {"grr": GRR, "oue": UE, "ss": SS, "olh": LH}[protocol_name]
    if protocol_name == "grr":
        peer_reports, call = reports.tolist(), lambda r: GRR.GRR_Aggregator_IBU(r, d, epsilon)
    elif protocol_name == "oue":
        peer_reports = np.unpackbits(reports, axis=1, count=d).astype(np.int32)
        call = lambda r: UE.UE_Aggregator_IBU(r, d, epsilon, True)  # noqa: E731
    else:
        np.random.seed(1)
        if protocol_name == "ss":
            peer_reports = [SS.SS_Client(v, d, epsilon) for v in values.tolist()]
            call = lambda r: SS.SS_Aggregator_IBU(r, d, epsilon)  # noqa: E731
        else:
            peer_reports = [LH.LH_Client(v, d, epsilon, True) for v in values.tolist()]
            call = lambda r: LH.LH_Aggregator_IBU(r, d, epsilon, True)  # noqa: E731
    with _KernelTimer(module) as timer:
        started = time.perf_counter()
        estimate = np.asarray(call(peer_reports), dtype=np.float64)
        total = time.perf_counter() - started
    kernel = timer.calls[-1]
    A, obs = kernel["A"], kernel["obs"]
    p, q = float(A[0, 0]), float(A[0, 1])
    fixed_point = grr_maximum_likelihood(obs, p, q)
    next_step = estimate * (A @ (obs / (A @ estimate)))
    return {
        "estimate": estimate,
        "seconds_total": total,
        "seconds_kernel": kernel["seconds"],
        "fixed_point": fixed_point,
        "distance_to_fixed_point": float(np.max(np.abs(estimate - fixed_point))),
        "cap": bool(np.max(np.abs(next_step - estimate)) >= PEER_TOLERANCE),
    }


def run_cell(protocol_name, values, truth, d, epsilon) -> dict:
    protocol = local.make(protocol_name, epsilon=epsilon, domain_size=d)
    reports = protocol.privatize(values, rng=1)
    aggregator = protocol.aggregator()
    aggregator.add(reports)
    record = {"protocol": protocol_name, "d": d, "epsilon": epsilon, "n": int(values.size)}
    unbiased, record["dpdist_unbiased_s"] = _timed(lambda: protocol.estimate(aggregator).frequencies)
    simplex = protocol.estimate(aggregator, postprocess="simplex").frequencies
    record["dpdist_unbiased"] = _scores(unbiased, truth)
    record["dpdist_simplex"] = _scores(simplex, truth)
    peer = peer_ibu(protocol_name, values, reports, d, epsilon)
    record["peer_ibu"] = {**_scores(peer["estimate"], truth),
                          **{k: v for k, v in peer.items() if k not in ("estimate", "fixed_point")}}
    record["peer_minus_simplex_max_abs"] = float(np.max(np.abs(peer["estimate"] - simplex)))
    if protocol_name == "grr":
        counts = np.asarray(aggregator.statistic, dtype=np.float64)
        result, seconds = _timed(lambda: protocol.estimate(aggregator, estimator="ibu"))
        mle, mle_seconds = _timed(lambda: protocol.estimate(aggregator, estimator="mle").frequencies)
        ibu = result.frequencies
        best = _loglikelihood(protocol, counts, mle)
        record["dpdist_ibu"] = {
            **_scores(ibu, truth), "seconds": seconds, "iterations": result.details["iterations"],
            "converged": result.details["converged"],
            "distance_to_mle": float(np.max(np.abs(ibu - mle))),
            "loglik_gap_to_mle": best - _loglikelihood(protocol, counts, ibu),
            "distance_to_peer": float(np.max(np.abs(ibu - peer["estimate"]))),
        }
        tight, tight_seconds = _timed(lambda: protocol.estimate(aggregator, estimator="ibu", tolerance=TIGHT), runs=1)
        record["dpdist_ibu_tight"] = {
            "tolerance": TIGHT, "seconds": tight_seconds, "iterations": tight.details["iterations"],
            "converged": tight.details["converged"], "distance_to_mle": float(np.max(np.abs(tight.frequencies - mle))),
        }
        record["dpdist_mle"] = {**_scores(mle, truth), "seconds": mle_seconds}
        record["peer_ibu"]["loglik_gap_to_mle"] = best - _loglikelihood(protocol, counts, peer["estimate"])
        record["peer_ibu"]["fixed_point_is_mle"] = float(np.max(np.abs(peer["fixed_point"] - mle)))
    return record


def format_grr(records) -> str:
    """The GRR table of docs/reference/benchmarks/frequency.md."""
    lines = [
        "| d | data | ε | dpdist ibu: s (it.) | peer kernel: s | peer at cap | dpdist mle: s | MSE: ibu / peer / mle "
        "| ℓ1: ibu / peer / mle | max abs to MLE: dpdist / peer | L gap (nats): dpdist / peer "
        "| dpdist, gap < 1e-6: s (it.), max abs to MLE |",
        "|---|---|---|---:|---:|---|---:|---|---|---|---|---|",
    ]
    for r in (r for r in records if r["protocol"] == "grr"):
        mine, peer, tight, mle = r["dpdist_ibu"], r["peer_ibu"], r["dpdist_ibu_tight"], r["dpdist_mle"]
        gap = "<1e-8" if peer["loglik_gap_to_mle"] < 1e-8 else f"{peer['loglik_gap_to_mle']:.2g}"
        lines.append(
            f"| {r['d']} | {r['data']} | {r['epsilon']:g} | {mine['seconds']:.2g} ({mine['iterations']}) "
            f"| {peer['seconds_kernel']:.2g} | {'yes' if peer['cap'] else 'no'} | {mle['seconds']:.1g} "
            f"| {mine['mse']:.3g} / {peer['mse']:.3g} / {mle['mse']:.3g} | {mine['l1']:.3g} / {peer['l1']:.3g} / {mle['l1']:.3g} "
            f"| {mine['distance_to_mle']:.1e} / {peer['distance_to_fixed_point']:.1e} "
            f"| {mine['loglik_gap_to_mle']:.2g} / {gap} "
            f"| {tight['seconds']:.2g} ({tight['iterations']}{'' if tight['converged'] else ', cap'}), "
            f"{tight['distance_to_mle']:.1e} |"
        )
    return "\n".join(lines)


def format_support(records) -> str:
    """The OUE, SS and OLH table of docs/reference/benchmarks/frequency.md."""
    lines = [
        "| protocol | d | data | ε | peer kernel: s | peer at cap | max abs peer − its fixed point "
        "| MSE: peer IBU / dpdist unbiased / dpdist simplex | ℓ1: peer IBU / dpdist unbiased / dpdist simplex |",
        "|---|---|---|---|---:|---|---:|---|---|",
    ]
    order = {name: i for i, name in enumerate(PROTOCOLS)}
    rows = sorted((r for r in records if r["protocol"] != "grr"),
                  key=lambda r: (order[r["protocol"]], r["d"], r["data"], r["epsilon"]))
    for r in rows:
        peer, raw, simplex = r["peer_ibu"], r["dpdist_unbiased"], r["dpdist_simplex"]
        lines.append(
            f"| {r['protocol'].upper()} | {r['d']} | {r['data']} | {r['epsilon']:g} | {peer['seconds_kernel']:.2g} "
            f"| {'yes' if peer['cap'] else 'no'} | {peer['distance_to_fixed_point']:.1e} "
            f"| {peer['mse']:.3g} / {raw['mse']:.3g} / {simplex['mse']:.3g} "
            f"| {peer['l1']:.3g} / {raw['l1']:.3g} / {simplex['l1']:.3g} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dims", default="64,1024")
    parser.add_argument("--epsilons", default="1,4")
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--olh-max-d", type=int, default=64,
                        help="the peer's LH aggregator hashes every report against every item in Python: O(n d)")
    parser.add_argument("--quick", action="store_true", help="d = 64, n = 2 * 10^4")
    args = parser.parse_args(argv)
    dims = [64] if args.quick else [int(d) for d in args.dims.split(",")]
    n = 20_000 if args.quick else args.users
    _compile_peer_kernel()
    rng = np.random.default_rng(0)
    records = []
    for d in dims:
        for data in ("zipf", "geometric"):
            for epsilon in [float(e) for e in args.epsilons.split(",")]:
                values = rng.choice(d, size=n, p=distribution(data, d))
                truth = np.bincount(values, minlength=d) / n
                for protocol_name in args.protocols.split(","):
                    if protocol_name == "olh" and d > args.olh_max_d:
                        continue
                    record = {"data": data, **run_cell(protocol_name, values, truth, d, epsilon)}
                    records.append(record)
                    print(json.dumps(record), file=sys.stderr, flush=True)
    print(f"GRR: exact IBU, n = {n:,}")
    print(format_grr(records))
    print(f"\nSupport-count protocols: the peer's IBU against dpdist's unbiased estimates, n = {n:,}")
    print(format_support(records))
    output = Path(__file__).parent / "results" / ("ibu_peers-quick.json" if args.quick else "ibu_peers.json")
    output.parent.mkdir(exist_ok=True)
    output.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
