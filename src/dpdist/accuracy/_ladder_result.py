"""What :func:`dpdist.explain_ladder` returns: one campaign's rungs, as a text table, JSON and a figure."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..accounting._odds import percent
from ._ladder_rows import LadderRow

__all__ = ["Ladder"]


@dataclass(frozen=True)
class Ladder:
    """The trust ladder of one campaign: every deployment model at one central ``(epsilon, delta)``, replace neighbours.

    Attributes
    ----------
    config : dict
        The campaign's protocol (its epsilon is the central epsilon every row holds).
    n : int
        Devices, one report each.
    epsilon, delta : float
        The stated central guarantee.
    shape : str
        The public data shape of the errors; ``counts`` its item counts at ``n``.
    rows : tuple of LadderRow
    colluding, tokens_each : int
        Devices the collector or server runs or knows, and reports one relay credential admits.
    """

    config: dict
    n: int
    epsilon: float
    delta: float
    shape: str
    counts: tuple
    rows: tuple
    colluding: int = 0
    tokens_each: int = 1

    def row(self, model: str) -> LadderRow:
        """The row of ``model`` (``"local"``, ``"shuffled"``, ``"sample-and-threshold"``, ``"central (discrete
        Laplace)"``, ``"central (Gaussian)"``, ``"secure aggregation"``)."""
        for candidate in self.rows:
            if candidate.model == model:
                return candidate
        raise KeyError(model)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (what ``dpdist explain --ladder --json`` prints)."""
        return {"config": self.config, "n": self.n, "epsilon": self.epsilon, "delta": self.delta, "shape": self.shape,
                "neighbouring": "replace", "counts": list(self.counts),
                "colluding": self.colluding, "tokens_each": self.tokens_each,
                "error": "mean over the items of the squared error of the estimated frequency (mse), its variance "
                         "part, and rmse = sqrt(mse)",
                "rows": [row.to_dict() for row in self.rows]}

    def describe(self) -> str:
        """A text table (model, who runs it, the guarantee it states, whom it holds against, per-item RMSE, x local's
        MSE, how likely that party guesses a device's item under a uniform prior), then each row's assumptions party
        by party, what each party can guess, and its notes."""
        local = self.row("local").mse
        chance = f"guess (1/{len(self.counts)})"
        lines = [f"{self.config['protocol']} over {len(self.counts)} items, n = {self.n:,} devices, data shape "
                 f"{self.shape!r}: every row at central ({self.epsilon:g}, {self.delta:g}), replace neighbours, "
                 f"against {self.colluding} colluding device(s) x {self.tokens_each} report(s) each = "
                 f"{self.colluding * self.tokens_each} known or forged report(s)",
                 "  ".join(["model".ljust(27), "runs".ljust(8), "stated (eps, delta)".ljust(22),
                            "holds against".ljust(18), "per-item RMSE".rjust(13), "MSE / local".rjust(11),
                            chance.rjust(12)])]
        for row in self.rows:
            stated = "not offered" if row.guarantee is None else f"({row.guarantee.epsilon:.4g}, {row.guarantee.delta:g})"
            ratio = row.mse / local if math.isfinite(row.mse) and local > 0 else math.nan
            lines.append("  ".join([row.model.ljust(27), ("dpdist" if row.runs_in_dpdist else "computed").ljust(8),
                                    stated.ljust(22), row.holds_against.ljust(18), _number(row.rmse).rjust(13),
                                    _number(ratio).rjust(11), _guess(row).rjust(12)]))
        for row in self.rows:
            lines.append(f"{row.model}:")
            lines += [f"  - {party}: {text}" for party, text in row.assumptions]
            lines += [f"  ? guesses a device's item: {guess.text()}" for guess in row.guesses]
            lines += [f"  * {note}" for note in row.notes]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Per-item RMSE of each offered row as a point on a log scale (no bar: a log axis has no zero to start one
        from), its value beside it, each row labelled with whom it holds against; computed-only rows as squares."""
        import matplotlib.pyplot as plt  # lazy: loads matplotlib (1-2 s)

        if ax is None:
            _, ax = plt.subplots(figsize=(7.5, 3.6))
        offered = [row for row in self.rows if math.isfinite(row.mse)]
        for position, row in enumerate(offered):
            computed = not row.runs_in_dpdist
            ax.plot([row.rmse], [position], linestyle="none", marker="s" if computed else "o",
                    color="#dd8452" if computed else "#4c72b0")
            ax.annotate(f"{row.rmse:.3g}", (row.rmse, position), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=7)
        ax.set_yticks(list(range(len(offered))), [f"{row.model}\nholds against {row.holds_against}" for row in offered],
                      fontsize=7)
        ax.set_ylim(len(offered) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.margins(x=0.15)
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.set_xlabel("per-item RMSE of the estimated frequency, log scale (squares: computed, not run by dpdist)",
                      fontsize=8)
        ax.set_title(f"{self.config['protocol']}, n = {self.n:,}: each model at central ({self.epsilon:g}, "
                     f"{self.delta:g})", fontsize=9)
        ax.figure.tight_layout()
        return ax


def _guess(row) -> str:
    """The first party's guess under a uniform prior ('<= ' for a bound; '-' for a row not offered)."""
    if not row.guesses or row.guesses[0].uniform is None:
        return "-"
    first = row.guesses[0]
    return f"{'' if first.exact else '<= '}{percent(first.uniform, bound=True)}"


def _number(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.4g}"
