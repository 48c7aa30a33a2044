r"""A year of collection, planned: a campaign repeated for a horizon, what each device spends and what it buys.

:func:`plan` takes one campaign (a local protocol's config) repeated every day, every week or per release
over a horizon, and states per device, before any data:

* **repeated**: the campaign as configured, :math:`T` times, its total under each accountant of
  :mod:`dpdist.accounting` at ``delta`` (``basic``: :math:`T\varepsilon`; ``zcdp``; ``pld``: exact for the
  protocol's channel up to the stated discretization error), with one campaign's error;
* **fit to target** (with ``target``): the largest per-campaign :math:`\varepsilon` whose :math:`T` campaigns stay
  within the yearly ``target`` under each accountant, and the error it gives;
* **memoized**: ``l-grr``, ``l-osue`` and ``loloha`` (frequency protocols only) with a permanent response of
  :math:`\varepsilon_\infty` (the target, else the repeated campaign's tightest total) and reports of
  :math:`\varepsilon_1` (the campaign's :math:`\varepsilon`, at most half of :math:`\varepsilon_\infty`): a device whose
  value never changes spends :math:`\varepsilon_\infty` however many reports it sends; one whose value changes
  spends ``epsilon_over_changes(T)`` (any two histories);
* **relayed** (with ``relay_n``): each campaign shuffled through the relay in batches of ``relay_n`` honest
  reports (admitted by an independent issuer; a campaign's batches must hold ``colluding x tokens_each`` more,
  docs/explanation/accounting.md "Accounting"), the :math:`T` rounds composed centrally (:func:`dpdist.amplification.shuffled`;
  the relay does not collude with the collector), with the same reports' error; with ``target``, the largest
  :math:`\varepsilon_0` that fits.  Its ``relay colludes`` total is the same reports' local total (the tightest
  accountant's), what is left if the relay and the collector pool what they see.

Each row says whom its totals hold against (``holds_against``): every row's local totals hold against anyone who
reads the reports; the relayed row's central total only against a collector whose relay is honest.  And how likely
that party guesses a device's unchanged value from all its reports of the horizon (``guess``, under a uniform prior:
:func:`dpdist.accounting.guess_odds`, exact where it can be, else a certified bound; the relayed row's from its
central total).

The error of each row is :func:`dpdist.explain`'s ``interval`` (95% half-width of one item's frequency, or
of the median or mean) of one campaign at ``n`` reports.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, cast

from .. import local
from .._validation import POPULATION, Implies, Integer, Interval, Optional, Options, check_param, validate_params
from ..accounting import ACCOUNTANTS, GuessOdds, cannot_state, guess_bound, guess_odds, protocol_loss, state
from ..accounting._odds import percent
from ..amplification import shuffled
from ..errors import DPDistError
from ._local import protocol_at
from ._plan_bound import surely_above

#: one campaign's error: ``error(protocol, n)``, the 95% half-width :func:`dpdist.explain` predicts
ErrorOf = Callable[[Any, int], float]

__all__ = ["plan", "Plan", "PlanRow", "EVERY", "MEMOIZED"]

#: how often the campaign runs: its period in days (``"release"``: ``releases`` times over the horizon)
EVERY = {"day": 1, "week": 7, "release": None}
#: the memoized alternatives of a frequency campaign
MEMOIZED = ("l-grr", "l-osue", "loloha")


@dataclass(frozen=True)
class PlanRow:
    """One way to run the campaign: its per-campaign epsilon, each device's total per accountant, its error."""

    option: str
    protocol: str
    epsilon: float
    totals: dict[str, float]
    error: float
    notes: tuple[str, ...] = ()
    holds_against: str = "anyone"
    guess: GuessOdds | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"option": self.option, "protocol": self.protocol, "epsilon": self.epsilon,
                "totals": {name: _finite(value) for name, value in self.totals.items()}, "error": _finite(self.error),
                "holds_against": self.holds_against, "notes": list(self.notes),
                "guess": None if self.guess is None else self.guess.to_dict()}


@dataclass(frozen=True)
class Plan:
    """A campaign repeated ``campaigns`` times over ``horizon`` days: one :class:`PlanRow` per way to run it."""

    config: dict
    n: int
    every: str
    horizon: int
    campaigns: int
    delta: float
    target: float | None
    rows: tuple[PlanRow, ...] = field(default=())

    def row(self, option: str) -> PlanRow:
        """The row named ``option`` (``"repeated"``, ``"fit to target"``, ``"memoized l-grr"``, ``"relayed"``, ...)."""
        for candidate in self.rows:
            if candidate.option == option:
                return candidate
        raise KeyError(option)

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config, "n": self.n, "every": self.every, "horizon": self.horizon,
                "campaigns": self.campaigns, "delta": self.delta, "target": self.target,
                "rows": [row.to_dict() for row in self.rows]}

    def describe(self) -> str:
        """A text table: per row its epsilon per campaign, each device's totals, and one campaign's error."""
        names = list(dict.fromkeys(name for row in self.rows for name in row.totals))
        lines = [f"{self.config['protocol']} every {self.every} for {self.horizon} days: {self.campaigns} campaign(s) of "
                 f"n = {self.n:,}; per-device totals at delta {self.delta:g}"
                 + (f", yearly target {self.target:g}" if self.target is not None else ""),
                 "  ".join(["option".ljust(22), "eps/campaign".rjust(12)] + [n.rjust(10) for n in names]
                           + ["error (95% half-width)".rjust(23), "guess (chance)".rjust(20), "holds against"])]
        for row in self.rows:
            cells = [f"{row.totals[n]:.4g}" if n in row.totals else "-" for n in names]
            lines.append("  ".join([row.option.ljust(22), f"{row.epsilon:.4g}".rjust(12)] + [c.rjust(10) for c in cells]
                                   + [f"{row.error:.4g}".rjust(23), _guess(row.guess).rjust(20), row.holds_against]))
        notes = dict.fromkeys(note for row in self.rows for note in row.notes)
        lines += [f"  - {note}" for note in notes]
        guessed = next((row.guess for row in self.rows if row.guess is not None), None)
        if guessed is not None:
            lines.append(f"  - guess: how likely whom the row holds against guesses a device's unchanged value from its "
                         f"{self.campaigns} report(s) ({guessed.target}), under a uniform prior, beside chance; "
                         "'<=' marks a certified bound, the rest are exact")
        return "\n".join(lines)


@validate_params({"every": Options(tuple(EVERY)), "releases": Optional(Integer(low=1))}, relations=(
    Implies("releases", None, "every", ("release",), why="the campaigns over the horizon",
            counterexample={"every": "release"}),
    Implies("releases", (None,), "every", tuple(name for name in EVERY if name != "release"),
            why="it goes with every='release' only", counterexample={"every": "day", "releases": 3}),
), owner="explain_plan")
def plan(config: Any, n: int, error: ErrorOf, *, every: str = "day", horizon: int = 365, releases: int | None = None,
         delta: float = 1e-8, target: float | None = None, relay_n: int | None = None) -> Plan:
    """Plan ``config``'s campaign repeated ``every`` day, week or release over ``horizon`` days (module docstring).

    Parameters
    ----------
    config : LocalProtocol or dict
        One campaign's protocol (its epsilon is one campaign's).
    n : int
        Reports per campaign (its error is at ``n``).
    error : callable
        ``error(protocol, n)``: one campaign's error (:func:`dpdist.accuracy.explain_plan` passes explain's).
    every : {"day", "week", "release"}
    horizon : int
        Days planned (default a year).
    releases : int, optional
        With ``every="release"``: campaigns over the horizon.
    delta : float
        The delta every total is stated at.
    target : float, optional
        A yearly epsilon per device to fit each option into.
    relay_n : int, optional
        Reports per shuffled batch: adds the relayed row.
    """
    owner = "explain_plan"
    protocol = config if isinstance(config, local.LocalProtocol) else local.from_config(dict(config))
    n = check_param(owner, "n", n, POPULATION)
    horizon = check_param(owner, "horizon", horizon, Integer(low=1, high=100 * 365))
    period = EVERY[every]
    campaigns = cast(int, releases) if period is None else max(1, horizon // period)  # given: the table's relation
    delta = check_param(owner, "delta", delta, Interval(0, 1, closed="neither"))
    if target is not None:
        target = check_param(owner, "target", target, Interval(0, math.inf, closed="neither"))
    rows: list[PlanRow | None] = [_repeated(protocol, n, campaigns, delta, error)]
    if target is not None:
        rows.append(_fitted(protocol, n, campaigns, delta, target, error))
    if protocol.tags.kind == "frequency" and not protocol.tags.memoized:
        permanent = target if target is not None else _repeated_total(rows)
        rows += [_memoized(name, protocol, n, campaigns, permanent, error) for name in MEMOIZED]
    if relay_n is not None:
        batch: int = check_param(owner, "relay_n", relay_n, Integer(low=2))
        rows.append(_relayed(protocol, n, campaigns, delta, batch, target, error))
    return Plan(protocol.config(), n, every, horizon, campaigns, delta, target, tuple(row for row in rows if row is not None))


def _repeated_total(rows: list) -> float:
    return rows[0].totals["tightest"]


def _totals(protocol, campaigns: int, delta: float) -> dict[str, float]:
    loss = protocol_loss(protocol, campaigns)
    totals = {name: state(loss, delta, name).epsilon for name in ACCOUNTANTS}
    totals["tightest"] = min(totals.values())
    return totals


def _repeated(protocol, n: int, campaigns: int, delta: float, error: ErrorOf) -> PlanRow:
    loss = protocol_loss(protocol)
    return PlanRow("repeated", protocol.name, protocol.guarantee.epsilon, _totals(protocol, campaigns, delta),
                   error(protocol, n), (f"repeated: {loss.source}; fresh randomness per campaign",),
                   guess=guess_odds(protocol, campaigns))


def _fitted(protocol, n: int, campaigns: int, delta: float, target: float, error: ErrorOf) -> PlanRow:
    """The largest per-campaign epsilon whose campaigns stay within ``target`` under the tightest accountant."""

    def fits(epsilon: float) -> bool:
        candidate = protocol_at(protocol, epsilon, n)
        loss = protocol_loss(candidate, campaigns)
        if (all(state(loss, delta, name).epsilon > target for name in ACCOUNTANTS if name != "pld")
                and cannot_state("pld", loss, delta) is None and surely_above(loss.distribution, delta, target)):
            return False  # what the composition would say (every accountant is above the exact epsilon), without it
        return _totals(candidate, campaigns, delta)["tightest"] <= target

    epsilon = _largest(fits, target / campaigns, target)
    fitted = protocol_at(protocol, epsilon, n)
    return PlanRow("fit to target", protocol.name, epsilon, _totals(fitted, campaigns, delta), error(fitted, n),
                   (f"fit to target: the largest epsilon per campaign (to 0.1%) whose {campaigns} campaigns stay within "
                    f"{target:g} by the tightest accountant (basic alone allows {target / campaigns:.4g})",),
                   guess=guess_odds(fitted, campaigns))


def _largest(fits: Callable[[float], bool], low: float, high: float) -> float:
    """The largest epsilon in ``[low, high]`` with ``fits`` (monotone), to 0.1% (``low`` always fits)."""
    if fits(high):
        return high
    while high - low > 1e-3 * low:
        middle = math.sqrt(low * high)
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


def _memoized(name: str, protocol, n: int, campaigns: int, permanent: float, error: ErrorOf) -> PlanRow:
    per_report = min(protocol.guarantee.epsilon, 0.5 * permanent)
    try:
        memo = local.make(name, epsilon=permanent, epsilon_1=per_report, domain_size=protocol.domain_size)
    except DPDistError as refused:  # e.g. a permanent epsilon above what a local protocol takes: said, not dropped
        return PlanRow(f"memoized {name}", name, per_report, {}, math.nan, (f"memoized {name}: not offered ({refused})",))
    history = cast(Any, memo).epsilon_over_changes(campaigns)  # a memoized protocol (MEMOIZED): its loss over time
    totals = {"unchanged value": min(permanent, history), "changing value": history}
    return PlanRow(f"memoized {name}", name, per_report, totals, error(memo, n),
                   (f"memoized: eps_inf = {permanent:.4g} for any number of reports of an unchanged value, eps_1 = "
                    "per report; 'changing value' is the loss over any two histories (epsilon_over_changes)",),
                   guess=guess_odds(memo, campaigns))


def _relayed(protocol, n: int, campaigns: int, delta: float, relay_n: int, target: float | None,
             error: ErrorOf) -> PlanRow | None:
    if protocol.tags.memoized:
        return None

    def central(epsilon0: float) -> float:
        return shuffled(protocol_at(protocol, epsilon0, n), relay_n, delta, rounds=campaigns).epsilon

    epsilon0 = protocol.guarantee.epsilon
    if target is not None:
        epsilon0 = _largest(lambda e: central(e) <= target, min(target / campaigns, 30.0), 30.0)
    reported = protocol_at(protocol, epsilon0, n)
    totals = {"central": central(epsilon0), "relay colludes": _totals(reported, campaigns, delta)["tightest"]}
    return PlanRow("relayed", protocol.name, epsilon0, totals, error(reported, n),
                   (f"relayed: {campaigns} rounds of batches of {relay_n} shuffled reports, composed centrally (the relay "
                    "does not collude with the collector; one report per device per round; relay_n counts the honest "
                    "reports of a batch: an independent issuer admits them, and a campaign's batches hold relay_n plus "
                    "colluding x tokens_each reports, docs/how-to/run-a-campaign.md 'Accounting'); 'relay colludes': the "
                    "same reports' local total, by the tightest accountant, if the relay pools what it sees with the "
                    "collector",), "the collector, relay honest", _central_guess(reported, campaigns, totals["central"], delta))


def _central_guess(reported, campaigns: int, epsilon: float, delta: float) -> GuessOdds:
    """The relayed row's guess: what the central total bounds (the collector, its relay honest)."""
    local_odds = guess_odds(reported, campaigns)
    bound = guess_bound(epsilon, delta, chance=local_odds.chance)
    return dataclasses.replace(local_odds, probability=(bound,), exact=(False,),
                               sources=(f"bound of the central ({epsilon:.4g}, {delta:g}) total",))


def _guess(odds: GuessOdds | None) -> str:
    if odds is None:
        return "-"
    return f"{'' if odds.exact[-1] else '<= '}{percent(odds.probability[-1], bound=True)} ({percent(odds.chance)})"


def _finite(value: float) -> float | None:
    return None if not math.isfinite(value) else value
