r"""The ``cp`` spec: compressive privatization against RR, RAPPOR, SS and HR (paper 004, sec. 5).

Paper 004 (Xiong et al., "Compressive Privatization: Sparse
Distribution Estimation under Locally Differential Privacy", AAAI 2021), sec. 5, Figs. 2-3.

Setting (the paper's): k = 10,000 items, m = 500 measurements, epsilon = 0.5; the
datasets Geo(0.8), Geo(0.6), Unif(10), Unif(25); n in {50,000, 100,000, ..., 1,000,000}
(Fig. 2); an epsilon sweep (Fig. 3; the paper does not say its n, we use n = 500,000, the
middle of Fig. 2's range); l1 error averaged over 10 runs.

Methods.

* ``CP (paper, eps0=eps)`` -- mechanism (2) run at :math:`\varepsilon_0 = \varepsilon`
  (``calibration="none"``), as the paper's experiments do.  Over a random matrix this is
  *not* :math:`\varepsilon`-LDP (Lemma 2.1: :math:`\varepsilon_0 + 2\beta`); the
  ``privacy-loss`` metric records the exact loss of each run's matrix (about 0.587 at
  epsilon = 0.5).
* ``CP (exact eps)`` -- the same with :math:`\varepsilon_0` calibrated so the exact loss is
  :math:`\varepsilon` (``calibration="exact"``, the dpdist default).
* ``CP-high (exact eps)`` -- Fig. 3 only: the Rademacher matrix at every epsilon.
* ``CP (exact eps, s=5/6 on Geo)`` -- ``CP (exact eps)`` with OMP at a larger sparsity on
  the geometric data (:data:`LARGER_SPARSITY`: 5 for Geo(0.8), tail 0.0003; 6 for Geo(0.6),
  tail 0.004; the uniform data keep theirs).  The paper's rule (s, 0.1)-sparse gives
  s = 2/3, with which CP loses to the projected baselines on Geo; with s = 5/6 it wins about
  2x (docs/reproductions/cp.md), so the verdict depends on s and the report shows both.

  The CP methods use the high-privacy regime (sec. 2, :math:`\Pr[A_{ij}=1]=1/2`) for
  :math:`\varepsilon < 1` and the medium regime (sec. 4, eq. 6, :math:`\Pr[A_{ij}=1] =
  e^{-\varepsilon}`, stated for :math:`1 \le \varepsilon \le \log m`) otherwise; a fresh
  public matrix per run (its seed drawn from the run's method stream); OMP at the
  sparsity of :data:`SPARSITY` ("s is chosen such that the distributions are roughly
  (s, 0.1)-sparse ... the value of s is provided to the recovery algorithm").
* ``RR`` (``grr``), ``RAPPOR`` (``sue``), ``SS`` (``ss`` with the ceiling subset size of the paper's baseline code:
  :func:`.methods.paper_subset_selection`), ``HR`` (``hr``): the baselines.

Decoders.  Every method returns its raw estimate (the unbiased estimate of the baselines,
:math:`D'^{-1} f` of OMP for CP); the metrics apply the decoder, so one randomization is
scored with both decoders (paired):

* ``l1-projected`` -- projection onto the simplex: the projected decoder of Kairouz,
  Bonawitz and Ramage (2016) for the baselines, the last step of Algorithm 1 for CP;
* ``l1-normalized`` -- clip negatives and renormalize: the default of the baselines' code
  the paper used (Acharya, Sun and Zhang: ``normalization = 0``, "clip and normalize"),
  i.e. the paper's baselines "without the projected decoder", and the normalized decoder
  of CP in Fig. 3.

The paper's Fig. 2 plots CP with Algorithm 1 (simplex) against the baselines with either
decoder; the claims below compare exactly that (CP ``l1-projected`` against the baselines'
``l1-normalized``), while the figure ``fig2_normalized`` shows every method, CP included,
with the normalized decoder.

The universe size (abstract: "only weakly depends on the size of the universe"): Unif(10) also at
k = 1,000 and 50,000 (``unif-10-k1000``, ``unif-10-k50000``), n = 200,000, eps = 0.5, for the two
CP variants and HR.  Theorem 1.1 is read as what it is, an upper bound for exactly sparse p, on
Unif(10) and Unif(25) only (docs/reproductions/cp.md).

Custom pieces of this paper (``methods.py``): the method ``compressive_privatization``
and the metrics ``decoded_l1`` and ``privacy_loss``; the claims are ratio checks of the
claims library (:class:`~dpdist.experiments.RatioWithin`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .. import PAPER_FILES
from ...experiments import AllOf, Claim, ExperimentSpec, FigureSpec, Quote, RatioContrast, RatioWithin, ScalesAs
from . import methods
from .methods import compressive_privatization, paper_subset_selection

__all__ = ["SPEC", "make_spec", "quick_overrides"]

#: Fig. 2's number of users: 50,000 to 1,000,000 in steps of 50,000.
PAPER_N = list(range(50_000, 1_000_001, 50_000))
#: Fig. 3's epsilons (the paper's values are not in its text; 0.5 .. 5 spans both regimes).
PAPER_EPSILONS = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0]
#: Fig. 3's number of users (not stated in the paper; the middle of Fig. 2's range).
SWEEP_N = 500_000
DEFAULT_EPSILON = 0.5

CP_PAPER = "CP (paper, eps0=eps)"
CP_EXACT = "CP (exact eps)"
CP_HIGH = "CP-high (exact eps)"
CP_LARGER_S = "CP (exact eps, s=5/6 on Geo)"
#: OMP sparsity of :data:`CP_LARGER_S` where it differs from :data:`~.methods.SPARSITY`.
LARGER_SPARSITY = {"geo-0.8": 5, "geo-0.6": 6}
BASELINES = ("RR", "RAPPOR", "SS", "HR")
PROJECTED, NORMALIZED, PRIVACY = "l1-projected", "l1-normalized", "privacy-loss"
#: The paper's datasets (sec. 5, k = 10,000); the exactly sparse ones, where Theorem 1.1 applies.
PAPER_DATASETS = ("geo-0.8", "geo-0.6", "unif-10", "unif-25")
EXACTLY_SPARSE = ("unif-10", "unif-25")
#: Unif(10) in universes of k = 1,000, 10,000 (the paper's) and 50,000 items ("only weakly depends on the
#: size of the universe": abstract, Theorem 1.1's log(k/s)); 50,000 is near the largest matrix CP builds
#: (500 x 67,108 cells).  At n = K_SWEEP_N and eps = 0.5, for the CP variants and HR.
UNIVERSES = {"unif-10-k1000": 1_000, "unif-10": 10_000, "unif-10-k50000": 50_000}
K_SWEEP_N = 200_000
K_SWEEP_METHODS = (CP_PAPER, CP_EXACT, "HR")
_PAPER_DATA = ("the paper's datasets (sec. 5, k = 10,000): Geo(0.8), Geo(0.6) (approximately sparse) and "
               "Unif(10), Unif(25) (exactly sparse)")


def _methods() -> list[dict]:
    baselines = {"RR": "grr", "RAPPOR": "sue", "SS": paper_subset_selection, "HR": "hr"}
    return [
        {"label": CP_PAPER, "method": compressive_privatization, "calibration": "none", "on_privacy_excess": "warn"},
        {"label": CP_EXACT, "method": compressive_privatization, "calibration": "exact"},
        {"label": CP_HIGH, "method": compressive_privatization, "calibration": "exact", "regime": "high"},
        {
            "label": CP_LARGER_S, "method": compressive_privatization, "calibration": "exact",
            "sparsity": dict(LARGER_SPARSITY),
        },
        *({"label": label, "method": name, "postprocess": "none"} for label, name in baselines.items()),
    ]


def _metrics() -> list[dict]:
    decoded = f"{methods.__name__}:decoded_l1"
    return [
        {"name": decoded, "decoder": "simplex", "label": PROJECTED, "kind": "categorical"},
        {"name": decoded, "decoder": "clip-normalize", "label": NORMALIZED, "kind": "categorical"},
        {"name": f"{methods.__name__}:privacy_loss", "label": PRIVACY, "kind": "categorical"},
    ]


def _grid(n_values, epsilons, sweep_n) -> list[dict]:
    fig2_methods = [CP_PAPER, CP_EXACT, CP_LARGER_S, *BASELINES]
    return [
        {"epsilon": [DEFAULT_EPSILON], "n": list(n_values), "methods": fig2_methods, "datasets": PAPER_DATASETS},
        {"epsilon": list(epsilons), "n": [sweep_n], "datasets": PAPER_DATASETS},
        # the universe size k (abstract, Theorem 1.1): Unif(10) at k = 1,000, 10,000, 50,000
        {"epsilon": [DEFAULT_EPSILON], "n": [K_SWEEP_N], "methods": K_SWEEP_METHODS, "datasets": tuple(UNIVERSES)},
    ]


def _figures(sweep_n) -> list[FigureSpec]:
    fig2: dict[str, Any] = {
        "x": "n", "where": {"epsilon": DEFAULT_EPSILON}, "logx": True, "logy": True,
        "methods": (CP_PAPER, CP_EXACT, CP_LARGER_S, *BASELINES), "datasets": PAPER_DATASETS,
    }
    fig3: dict[str, Any] = {"x": "epsilon", "where": {"n": sweep_n}, "logy": True, "datasets": PAPER_DATASETS}
    return [
        FigureSpec(
            name="fig2_projected",
            title="Fig. 2: l1 error, k=10000, m=500, eps=0.5, projected decoder (CP: Algorithm 1)",
            y=PROJECTED, ylabel="l1 error", **fig2,
        ),
        FigureSpec(
            name="fig2_normalized",
            title="Fig. 2: l1 error, k=10000, m=500, eps=0.5, normalized decoder (clip + normalize)",
            y=NORMALIZED, ylabel="l1 error", **fig2,
        ),
        FigureSpec(
            name="fig3_normalized",
            title=f"Fig. 3: l1 error vs eps, k=10000, m=500, n={sweep_n}, normalized decoder",
            y=NORMALIZED, ylabel="l1 error", **fig3,
        ),
        FigureSpec(
            name="fig3_projected",
            title=f"Fig. 3 with the projected decoder, n={sweep_n}",
            y=PROJECTED, ylabel="l1 error", **fig3,
        ),
        FigureSpec(
            name="privacy_loss",
            title="Exact epsilon of each run's randomizer",
            x="epsilon", y=PRIVACY, ylabel="exact epsilon", panels=None, datasets=("geo-0.8",),
            where={"n": sweep_n},
        ),
    ]


def _universe_claims() -> list[Claim]:
    """Paper 004's "only weakly depends on the size of the universe" (abstract, sec. 1; Theorem 1.1's
    log(k/s)): at a fixed n the l1 bound grows as sqrt(log(k/s))."""
    k0 = min(UNIVERSES.values())
    reference = next(name for name, k in UNIVERSES.items() if k == k0)
    sweep = {"epsilon": DEFAULT_EPSILON, "n": K_SWEEP_N}
    data = (f"an exactly sparse p in universes of several sizes k (abstract, Theorem 1.1); stand-in: Unif(10) at "
            f"k = {', '.join(f'{k:,}' for k in UNIVERSES.values())}, n = {K_SWEEP_N:,}, eps = 0.5")
    growth = AllOf(tuple(
        RatioWithin.along(CP_PAPER, PROJECTED, "dataset", reference,
                          high=round(1.25 * math.sqrt(math.log(k / 10) / math.log(k0 / 10)), 3),
                          where={**sweep, "dataset": [reference, name]})
        for name, k in UNIVERSES.items() if k != k0))
    bounds = ", ".join(f"{1.25 * math.sqrt(math.log(k / 10) / math.log(k0 / 10)):.2f} at k = {k:,}"
                       for k in UNIVERSES.values() if k != k0)
    largest = max(UNIVERSES, key=lambda name: UNIVERSES[name])
    return [
        Claim(
            f"CP's sample complexity only weakly depends on the size of the universe (abstract; Theorem 1.1's "
            f"log(k/s)): at n = {K_SWEEP_N:,}, eps = 0.5, CP's l1 error (Algorithm 1) at k over its error at "
            f"k = {k0:,} grows at most as sqrt(log(k/s) / log({k0:,}/s)), within 25% ({bounds})",
            growth, figure=None, data=data),
        Claim(
            f"CP's dependence on k is weaker than a worst-case-optimal baseline's, whose sample complexity grows "
            f"with k (sec. 1, Table 1): HR's l1 error over CP's is larger at k = {UNIVERSES[largest]:,} than at k = {k0:,} (projected "
            f"decoder, n = {K_SWEEP_N:,}, eps = 0.5)",
            RatioContrast(PROJECTED, "HR", CP_PAPER, (largest,), (reference,), where=sweep),
            figure=None, data=data),
    ]


def _claims(sweep_n) -> list[Claim]:
    fig2 = {"epsilon": DEFAULT_EPSILON, "dataset": list(PAPER_DATASETS)}
    fig3 = {"n": sweep_n, "dataset": list(PAPER_DATASETS)}
    claims = [
        Claim(
            "With the projected decoder the performance of all baselines except RR improves significantly: at "
            "eps = 0.5, the l1 error of RAPPOR, SS and HR without it is above 1.25x the error with it (and RR's "
            "within 0.8-1.25x), every n",
            AllOf((*(RatioWithin(b, PROJECTED, (b,), NORMALIZED, low=1.25, where=fig2) for b in BASELINES if b != "RR"),
                   RatioWithin("RR", PROJECTED, ("RR",), NORMALIZED, low=0.8, high=1.25, where=fig2))),
            figure="fig2_projected", data=_PAPER_DATA,
        ),
        Claim(
            "Theorem 1.1 is an upper bound on the sample complexity for exactly s-sparse p (l1: "
            "O(s^2 log(k/s) / (eps^2 alpha^2)) samples for error alpha, i.e. an error at most C s sqrt(log(k/s)) / "
            "(eps sqrt(n))), read as a bound on the data it is stated for: on the exactly sparse Unif(10) and Unif(25) "
            "CP's l1 error (Algorithm 1, eps = 0.5) falls at least as fast as n^(-1/2): every n's error over the "
            "smallest n's at most 1.25 sqrt(n_0/n)",
            ScalesAs(CP_PAPER, PROJECTED, "n", -0.5, low=0.0, high=1.25,
                     where={"epsilon": DEFAULT_EPSILON, "dataset": list(EXACTLY_SPARSE)}),
            figure="fig2_projected",
            data="exactly s-sparse distributions (Theorem 1.1); stand-ins Unif(10), Unif(25) at k = 10,000. Not read "
                 "on Geo(0.8), Geo(0.6): they are only approximately sparse, where Theorem 3.6 bounds the error by the "
                 "tail outside the s largest items (a floor), not by n^(-1/2)",
        ),
    ]
    for cp in (CP_PAPER, CP_EXACT, CP_LARGER_S):
        claims += [
            Claim(
                f"{cp}: at eps = 0.5, CP's l1 error (Algorithm 1) is 2-10 times lower than every baseline's "
                "without the projected decoder (the paper's range [2, 10]; 'lower', so 10 is its favourable end: "
                "holds when every ratio is significantly above 2, holds and understated when one is also "
                "significantly above 10)",
                RatioWithin(cp, PROJECTED, BASELINES, NORMALIZED, low=2.0, high=10.0, where=fig2, favourable="high"),
                figure="fig2_normalized", data=_PAPER_DATA,
            ),
            Claim(
                f"{cp}: at eps = 0.5, with the projected decoder the baselines are comparable to or worse than CP "
                "(CP's l1 error at most 1.25x every baseline's)",
                RatioWithin(cp, PROJECTED, BASELINES, PROJECTED, low=0.8, where=fig2),
                figure="fig2_projected", data=_PAPER_DATA,
            ),
            Claim(
                f"{cp}: with the normalized decoder, CP has a lower l1 error than every baseline at every eps "
                "(Fig. 3: 'our method can always achieve good performance for different eps')",
                RatioWithin(cp, NORMALIZED, BASELINES, NORMALIZED, low=1.0, where=fig3),
                figure="fig3_normalized", data=_PAPER_DATA,
            ),
            Claim(
                f"{cp}: the decoder has little effect on CP (normalized l1 within 0.8-1.25x of projected, every eps)",
                RatioWithin(cp, PROJECTED, (cp,), NORMALIZED, low=0.8, high=1.25, where=fig3),
                figure="fig3_normalized", data=_PAPER_DATA,
            ),
        ]
    return claims + _universe_claims()


#: The datasets of the spec: the paper's, then the universes of the k-scaling claims.
_SPEC_DATASETS: tuple[str, ...] = (*PAPER_DATASETS, *[u for u in UNIVERSES if u not in PAPER_DATASETS])


def make_spec(
    *,
    n_values: Sequence[int] = PAPER_N,
    epsilons: Sequence[float] = PAPER_EPSILONS,
    sweep_n: int = SWEEP_N,
    datasets: Sequence[str] = _SPEC_DATASETS,
    repeats: int = 10,
    quick: dict | None = None,
) -> ExperimentSpec:
    """The ``cp`` spec at the given grid (Fig. 2's ``n_values`` at eps = 0.5, Fig. 3's ``epsilons`` at ``sweep_n``)."""
    return ExperimentSpec(
        name="cp",
        title="Compressive privatization (paper 004)",
        paper=PAPER_FILES["004"],
        description=_description(sweep_n),
        datasets=list(datasets),
        methods=_methods(),
        grid=_grid(n_values, epsilons, sweep_n),
        metrics=_metrics(),
        repeats=repeats,
        seed=2021,
        figures=_figures(sweep_n),
        claims=_claims(sweep_n),
        quick=quick or {},
        quotes=_quotes(sweep_n),
    )


def _description(sweep_n: int) -> str:
    return ("CP (m = 500; as the paper runs it, eps0 = eps, and calibrated to exact eps-LDP) against RR, RAPPOR "
            "(SUE), SS and HR with the normalized (clip + normalize) and the projected (simplex) decoder, on "
            "Geo(0.8), Geo(0.6), Unif(10), Unif(25) over k = 10,000 items. Fig. 2: l1 error vs n at eps = 0.5; "
            f"Fig. 3: l1 error vs eps at n = {sweep_n}. Metric privacy-loss: the exact epsilon of each run's "
            "randomizer.")


def _quotes(sweep_n: int) -> tuple:
    """The summary values docs/reproductions/cp.md quotes (listed in its generated block)."""
    largest = {"epsilon": 0.5, "n": 1_000_000}
    return (
        Quote("the exact epsilon of the paper's setting", PRIVACY, {"dataset": "geo-0.8", "n": sweep_n}, (CP_PAPER,)),
        Quote("the baselines without the projected decoder", NORMALIZED, {**largest, "dataset": "geo-0.8"},
              ("RR", "RAPPOR", "SS", "HR", CP_PAPER)),
        Quote("CP's truncation floor on the geometric data", PROJECTED, {**largest, "dataset": ["geo-0.8", "geo-0.6"]},
              (CP_PAPER, CP_LARGER_S, "SS")),
        Quote("calibrating CP to exact eps", PROJECTED, {"epsilon": 0.5, "dataset": "unif-10", "n": [sweep_n, 1_000_000]},
              (CP_PAPER, CP_EXACT)),
        Quote("the Rademacher matrix at every eps", NORMALIZED, {"dataset": "unif-25", "epsilon": 2.0, "n": sweep_n},
              (CP_HIGH, CP_EXACT)),
    )


def quick_overrides(*, n_values: Sequence[int], epsilons: Sequence[float], sweep_n: int, repeats: int) -> dict:
    """``--quick`` overrides: a smaller grid, its Fig. 3 ``sweep_n`` in the figures, claims, description and
    quotes, fewer repeats."""
    return {
        "repeats": repeats,
        "grid": _grid(n_values, epsilons, sweep_n),
        "figures": tuple(_figures(sweep_n)),
        "claims": tuple(_claims(sweep_n)),
        "description": _description(sweep_n),
        "quotes": _quotes(sweep_n),
    }


# --quick: SS has no exact aggregate sampler at k = 10^4 (17-38 us of CPU per user), so the
# quick grid takes Fig. 2's first points and its far end, n = 10^6 (the size-sensitive
# end in the main grid): about 9 CPU-minutes in all (the full grid: about 3 CPU-hours).
SPEC = make_spec(
    quick=quick_overrides(
        n_values=[50_000, 100_000, 200_000, 1_000_000], epsilons=[0.5, 1.0, 2.0, 4.0], sweep_n=200_000, repeats=3
    ),
)
