"""The names the claim checks of the ``sw-ems`` reproduction had before they moved to the claims
library of :mod:`dpdist.experiments`: each builds the library's check.  The spec uses the
library directly (docs/how-to/run-experiments.md, "Writing a spec")."""

from __future__ import annotations

from ...experiments import ALPHA, EFFECT, BeatsRivals, MoreVariable  # noqa: F401  (its old import path)

__all__ = ["WithinFactor", "ArgminIs"]


def WithinFactor(metric: str, method: str, reference: tuple, factor: float, match: tuple = ("dataset", "epsilon"),
                 where: dict | None = None, alpha: float = ALPHA, effect: float = EFFECT) -> BeatsRivals:
    """``method``'s mean is at most ``factor`` times every row of ``reference`` (so than the best), per setting."""
    return BeatsRivals(metric, method, tuple(reference), where=dict(where or {}), factor=factor, match=match,
                       alpha=alpha, effect=effect)


def ArgminIs(metric: str, method: str, column: str, expected: object, match: tuple = ("dataset", "epsilon"),
             where: dict | None = None, quorum: float = 1.0, alpha: float = ALPHA,
             effect: float = EFFECT) -> BeatsRivals:
    """``column = expected`` gives ``method`` its lowest mean ``metric`` (in a ``quorum`` of the settings)."""
    return BeatsRivals(metric, expected, column=column, where={**(where or {}), "method": method}, match=match,
                       share=quorum, alpha=alpha, effect=effect)
