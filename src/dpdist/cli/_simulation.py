"""What the one-shot ``dpdist estimate FILE`` (a simulation) says before its numbers, and under its plot.

The one-shot mode randomizes a column of a file here, as each user's device would, estimates from those reports and
prints the file's exact statistics beside the estimate ("(true 40.0116)"); its ``--plot`` draws that truth too.
That is the point of a simulation (how close does this protocol get on data like these?), and it is not private:
the first lines say so, then the estimate's own guarantee and its randomness, as ``dpdist release`` states them
(``--seed``: "seeded generator: NOT for publication").  A release of a file's column is ``dpdist release``.
"""

from __future__ import annotations

from ._arguments import SEEDED

__all__ = ["simulation_lines", "PLOT_NOTE"]

#: the first line of every one-shot estimate
SIMULATION = ('simulation: this file\'s values are randomized here as each device would, then estimated; the "true" '
              "values printed and the truth a --plot draws are the file's own exact statistics, not private: "
              "NOT for publication (a central-DP release of a column: 'dpdist release')")

#: written under the figure of ``--plot``
PLOT_NOTE = "simulation: the truth drawn is the data's own, not private: NOT for publication"


def simulation_lines(estimate, seed: int | None) -> list[str]:
    """The first lines of a one-shot estimate: what it is, then the estimate's guarantee and its randomness."""
    guarantee = estimate.guarantee  # every result states its guarantee (None: none given)
    stated = "none stated" if guarantee is None else guarantee.describe()
    randomness = (f"{SEEDED} (the seed makes the randomization reproducible)" if seed is not None else
                  "an unseeded generator (a simulation's, not the OS CSPRNG a device or 'dpdist release' uses)")
    return [SIMULATION, f'guarantee: {stated}, of the simulated reports (not of the "true" values), {randomness}']
