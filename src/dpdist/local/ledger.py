r"""A device's privacy ledger: what each collector has spent on this device, its memos, and its budget.

A collector decides a campaign's config; only the device can bound what the
device spends.  The ledger (Apple's per-device budgets are the
model: "Learning with Privacy at Scale", Apple Differential Privacy Team, 2017)

* keeps the device's memos (permanent responses of memoized protocols) keyed by a
  **scope**: the collector and the config *without its budgets*.  A collector that
  rotates ``epsilon``/``epsilon_1`` (even by 1e-12) cannot make the device draw a
  fresh permanent response: a changed config for a scope the device already
  reports to is refused (:class:`~dpdist.errors.PrivacyBudgetError`); a changed
  domain or protocol is a new scope, charged like any other;
* charges every report before it is drawn, under the ``accounting`` the owner
  chose, and refuses (with the reason and the budget left) a report that would
  spend more than ``budget`` within ``window`` seconds (all time by default);
* never lets the refusal depend on the device's values: every charge is a
  function of public quantities only (the config and how many reports the device
  has sent through the scope), so whether a report is sent reveals nothing;
* answers a question asked *once* per device at most once (``report(..., once=name)``):
  a campaign in rounds (adaptive quantiles, :mod:`dpdist.local.adaptive_quantiles`)
  states epsilon-LDP per user by parallel composition over disjoint groups, which holds
  only if each device answers one round.  Each round has its own config, so without
  this a device asked again in round ``k + 1`` would answer again and spend
  :math:`k\varepsilon`; the ledger refuses the second answer before drawing it;
* keeps the round a device of a campaign in rounds answers (:meth:`PrivacyLedger.round_for`): drawn
  once, at random in proportion to the rounds' sizes and independently of the device's value and of
  when it arrives, so the rounds' groups are the random split the protocol assumes.

Accounting.  ``"history"`` (default) charges the guarantee against *every* other
history of the device's values (the ``"history"`` relation of
:mod:`dpdist.privacy`): one report of a memoryless protocol costs its
:math:`\varepsilon`; the :math:`T`-th report through a memo costs
:math:`\varepsilon_T - \varepsilon_{T-1}` (``epsilon_over_changes``), infinite for
dBitFlipPM beyond one report.  ``"stable"`` charges RAPPOR's relation: each of the first :math:`K`
reports through a memo costs :math:`\varepsilon_\infty` (a memo holds up to K permanent
responses, one per key), later ones nothing; it bounds the loss against histories with the
same pattern of changes, not *when* the value changes, and the owner must choose it
knowingly (a ledger's accounting cannot change once it has charges).  Reports of several scopes compose sequentially (Dwork & Roth 2014,
Thm. 3.16).

The JSON form (``to_dict``) is the one the JavaScript client keeps in
``localStorage`` and ``dpdist privatize/submit --memo FILE`` keeps in FILE.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from decimal import Decimal
from typing import Any, Callable, cast
from urllib.parse import urlsplit

import numpy as np

from .._redact import redacted_url
from .._rng import check_rng
from .._types import ArrayLike, Seed
from .._validation import Described, Interval, Optional, Options, Text, Weights, check_param, validate_params
from ..errors import (
    DPDistError,
    IncompatibleStateError,
    InvalidParameterError,
    PrivacyBudgetError,
)
from .._guarantee import local_guarantee
from ..accounting import MEMO_ASSUMPTION, PrivacyLoss, Statement, check_accountant, sequential, state
from ..accounting._randomized_response import composed_randomized_response, randomized_response_share
from ._protocol import LocalProtocol, from_config
from ._registry import registered_class
from .frequency._memoized import MemoizedProtocol

__all__ = ["PrivacyLedger", "DEFAULT_BUDGET", "LEDGER_FORMAT", "budget_scope"]

LEDGER_FORMAT = "dpdist-ledger"
#: the total epsilon a device spends, over every collector, unless its owner sets another
DEFAULT_BUDGET = 10.0
ACCOUNTINGS = ("history", "stable")
#: what a statement of a ledger under "stable" accounting assumes (PrivacyLedger.statement)
STABLE_ASSUMPTION = ("stable accounting: the charges bound only histories of the device's values with the same pattern "
                     "of changes (RAPPOR's relation), nothing about when a value changes")
#: what a statement of a ledger with no charge in its window states (its epsilon is the smallest it can be, not a loss)
NO_CHARGE_ASSUMPTION = ("nothing charged: no report the statement covers cost any epsilon (none was sent, its charges "
                        "left the window, or stable accounting charges a memo's later reports nothing)")
#: config entries that are budgets: a collector may not change them under a memo the device keeps
_BUDGET_KEYS = ("epsilon", "epsilon_1")


def budget_scope(collector: str, config: dict) -> str:
    """The memo scope of ``config`` at ``collector``: the config without its budgets, canonical JSON.

    Canonical as the JavaScript client writes it too: keys sorted, no spaces, integral floats as
    integers (JavaScript prints 4.0 as 4).
    """
    public = {key: _integral(value) for key, value in config.items() if key not in _BUDGET_KEYS}
    text = json.dumps(public, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{normal_collector(collector)} {text}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


@validate_params({"collector": Text(non_empty=False)}, owner="PrivacyLedger")
def normal_collector(collector: str) -> str:
    """A collector's name as the ledger keeps it: an http(s) URL's origin as a browser writes it (scheme and host
    in lower case, no default port) and its path without trailing slashes, so ``https://C.org:443/`` is
    ``https://c.org``; any other name with its trailing slashes dropped."""
    try:
        parts = urlsplit(collector)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (parts is None or parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc
            or "?" in collector or "#" in collector):  # user info, a query or a fragment: as given
        return collector.rstrip("/") or collector
    scheme, host = parts.scheme.lower(), parts.hostname
    host = f"[{host}]" if ":" in host else host
    origin = f"{scheme}://{host}" + ("" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}")
    return origin + parts.path.rstrip("/")


def _renormalized(key: str) -> str:
    """A ledger key ``"<collector> <rest>"`` written under an earlier normalization, under this one."""
    collector, _, rest = key.partition(" ")
    return f"{normal_collector(collector)} {rest}"


def _integral(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


#: a ledger's settings, kept in its file (restore reads them with the same rules)
_SETTINGS = {
    "budget": Described(Interval(0.0, math.inf, closed="neither"), "a finite epsilon > 0"),
    "window": Optional(Described(Interval(0.0, math.inf, closed="neither"), "seconds > 0 (None: all time)")),
    "accounting": Options(ACCOUNTINGS),
}
#: the name of a question a device answers once
_ONCE = Text()


def _js_number(value: float) -> str:
    """``value`` as JavaScript's ``String(value)`` writes it (the JavaScript ledger states its window in the same words):
    the shortest digits that give the number back, positional from 1e-6 up to 1e21 (an integer past 2**53 padded with
    zeros: 48237702445694130), exponents outside, written ``1e-7``, ``1.5e+21``."""
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    text = repr(number)  # the shortest digits that give the number back, as JavaScript's
    if number.is_integer() and abs(number) < 1e21:
        return format(Decimal(text).quantize(Decimal(1)), "f")  # those digits, then zeros
    if "e" not in text:
        return text
    mantissa, power = text.split("e")
    if -7 < int(power) < 21:
        return format(Decimal(text), "f")  # 1e-05: JavaScript writes 0.00001
    return f"{mantissa}e{'+' if int(power) > 0 else '-'}{abs(int(power))}"


def _summed(statement: Statement, spent: float) -> Statement:
    """A basic composition's statement with the ledger's own sum of the same charges (``math.fsum`` of the charges, as
    :meth:`PrivacyLedger.spent` and the JavaScript ledger sum them; the sum of each report's epsilon could be a bit
    above it)."""
    return dataclasses.replace(statement, epsilon=spent) if statement.accountant == "basic" else statement


def window_assumption(window: float) -> str:
    """What a statement of a ledger with a ``window`` (seconds) covers, in its ``assumptions``."""
    return (f"the charges of the last {_js_number(window)} s only (the ledger's window): a budget per window bounds what the "
            "device spends per window, not in total; earlier charges are not in this statement")


class PrivacyLedger:
    """A device's budget, its memos per scope, and every charge made.

    Parameters
    ----------
    budget : float
        Total :math:`\\varepsilon` the device spends within ``window`` (default :data:`DEFAULT_BUDGET`).
    window : float, optional
        Seconds over which charges count (``None``: all time; 86400: per day, as Apple's budgets).
    accounting : {"history", "stable"}
        The relation the charges are computed under (module docstring).
    """

    @validate_params(_SETTINGS)
    def __init__(self, budget: float = DEFAULT_BUDGET, window: float | None = None, accounting: str = "history"):
        self.budget, self.window, self.accounting = budget, window, accounting
        self._streams: dict[str, dict[str, Any]] = {}  # scope -> {"config", "client", "reports"}
        self._charges: list[dict[str, Any]] = []
        self._answered: dict[str, dict[str, Any]] = {}  # "<collector> <once>" -> {"at", "protocol"}
        self._rounds: dict[str, int] = {}  # "<collector> <once>" -> the round (1-based) this device answers
        #: called with the ledger by :meth:`report` after its charges, before the reports are returned (the
        #: JavaScript client's onChange): a ledger kept in a file (:func:`dpdist.io.open_ledger`) saves itself there
        self.on_change: Callable[[PrivacyLedger], None] | None = None

    # ------------------------------------------------------------------ spending
    def spent(self, now: float | None = None) -> float:
        """Epsilon charged within the window ending ``now`` (default: the clock)."""
        now = time.time() if now is None else now
        since = -math.inf if self.window is None else now - self.window
        return math.fsum(charge["epsilon"] for charge in self._charges if charge["at"] > since)

    def remaining(self, now: float | None = None) -> float:
        """Epsilon left within the window ending ``now``."""
        return max(0.0, self.budget - self.spent(now))

    @validate_params({"delta": Interval(0.0, 1.0, closed="left")})
    def statement(self, delta: float, accountant: str = "tightest", now: float | None = None) -> Statement:
        r"""What the charges within the window spend at ``delta``, by ``accountant`` (:mod:`dpdist.accounting`).

        :meth:`spent` is the pure total (basic composition: exact for pure epsilons at delta 0, and what the
        budget refuses by, here and in the JavaScript client alike); this states the same charges at a delta,
        never above :meth:`spent`.  A charge records its epsilon, protocol, reports and the chance its reports are a
        randomized response (its ``share``: GRR, SS and the unary encodings answer one with that chance and reveal
        nothing otherwise, which is their exact loss), so each fresh report counts as the worst
        :math:`\varepsilon`-LDP randomizer (randomized response) with that chance, as
        :meth:`dpdist.budget.BudgetSession.campaign` charges the same reports, and the charges
        through memos of one protocol at one collector count as *one* mechanism of their summed epsilon (a memo's
        reports share its permanent response: their increments are not fresh mechanisms; gathering several scopes
        into one only overstates).  ``"pld"`` composes those randomized responses on dpdist's lattice
        (:mod:`dpdist.accounting._randomized_response`, which the JavaScript ledger's ``statement`` runs step for
        step: both state the same total for the same charges), ``"tightest"`` is the smaller of it and the sum,
        ``"zcdp"`` and ``"basic"`` as :func:`dpdist.accounting.state` states them.

        A ledger with a ``window`` states the charges of the window ending ``now`` only, and says so in the
        statement's ``assumptions`` (:func:`window_assumption`): a budget per window bounds what a device spends per
        window, not in total (a year of two reports of 0.5 a day, 365 in all, states 1 at its end).  A ledger with no
        charge to state says that too (:data:`NO_CHARGE_ASSUMPTION`).

        Under ``"history"`` accounting the statement holds against any two histories of the device's values
        (``"replace"``, local).  Under ``"stable"`` accounting the charges bound only histories with the same pattern
        of changes (RAPPOR's relation), so the statement says ``neighbouring="stable"`` and assumes it
        (:data:`STABLE_ASSUMPTION`): it bounds nothing about *when* a device's value changes (dBitFlipPM's loss over
        changing values is infinite from its second report), and :func:`dpdist.privacy.convert` refuses it.
        """
        statement = self._statement(delta, accountant, now)
        assumptions = list(statement.assumptions)
        if self.window is not None:
            assumptions.append(window_assumption(self.window))
        if self.accounting == "stable":
            assumptions.append(STABLE_ASSUMPTION)
        return dataclasses.replace(statement, neighbouring="stable" if self.accounting == "stable" else
                                   statement.neighbouring, assumptions=tuple(assumptions))

    def _statement(self, delta: float, accountant: str, now: float | None) -> Statement:
        """:meth:`statement` under the charges' own relation (the ledger's accounting names it)."""
        check_accountant("PrivacyLedger.statement", accountant)
        now = time.time() if now is None else now
        fresh, memos = self._stated_charges(now)
        spent = self.spent(now)  # the pure sum as the budget refuses by (math.fsum of the charges; the JS ledger's too)
        losses = [PrivacyLoss.of_guarantee(local_guarantee(epsilon)) for epsilon, reports, _ in fresh
                  for _ in range(reports)]
        losses += [PrivacyLoss.of_guarantee(local_guarantee(epsilon), f"{protocol} memo at {redacted_url(collector)}")
                   .assuming(MEMO_ASSUMPTION) for (collector, protocol), epsilon in sorted(memos.items())]
        if not losses:
            return state(PrivacyLoss.of_guarantee(local_guarantee(1e-300)).assuming(NO_CHARGE_ASSUMPTION), delta, "basic")
        total = sequential(losses)
        if accountant in ("basic", "zcdp") or (delta == 0 and accountant == "tightest"):  # pure: the sum is exact
            return _summed(state(total, delta, "basic" if accountant == "tightest" else accountant), spent)
        responses = fresh + [(epsilon, 1, 1.0) for epsilon in memos.values()]
        upper = composed_randomized_response(responses, delta)
        basic = spent
        if accountant == "tightest" and basic <= upper * (1 + 1e-9):  # a tie, to the last bits, is the sum
            return _summed(state(total, delta, "basic"), spent)
        lower = composed_randomized_response(responses, delta, rounding="down")
        capped = basic < upper
        return Statement("pld", min(upper, basic), delta, "replace", "local", total.mechanisms, None,
                         0.0 if capped else upper - lower, capped, total.assumptions)

    def _stated_charges(self, now: float | None) -> tuple[list[tuple[float, int, float]], dict[tuple[str, str], float]]:
        """The window's fresh charges as ``(epsilon per report, reports, share)`` and its memos' summed epsilons."""
        now = time.time() if now is None else now
        since = -math.inf if self.window is None else now - self.window
        fresh: list[tuple[float, int, float]] = []
        memos: dict[tuple[str, str], float] = {}
        for charge in self._charges:
            if charge["at"] <= since or charge["epsilon"] <= 0:
                continue
            if _is_memoized(charge["protocol"]):
                key = (charge["collector"], charge["protocol"])
                memos[key] = memos.get(key, 0.0) + charge["epsilon"]
            else:
                fresh.append((charge["epsilon"] / charge["reports"], int(charge["reports"]), charge.get("share", 1.0)))
        return fresh, memos

    def reports_sent(self, protocol: LocalProtocol, collector: str = "local") -> int:
        """How many reports the device has sent through ``protocol``'s scope at ``collector``."""
        stream = self._streams.get(budget_scope(collector, protocol.config()))
        return 0 if stream is None else stream["reports"]

    def cost(self, protocol: LocalProtocol, reports: int = 1, collector: str = "local") -> float:
        """Epsilon the next ``reports`` reports of ``protocol`` at ``collector`` would be charged (public inputs only).

        ``"stable"`` charges :math:`\\varepsilon_\\infty` for each of a scope's first :math:`K` reports (a
        scope holds up to K permanent responses, one per memo key; charging per *new* key would make the
        refusal depend on the values), nothing after; ``"history"`` the increment of
        ``epsilon_over_changes``, infinite once that is.
        """
        if reports <= 0:
            return 0.0
        if not protocol.tags.memoized:
            return reports * protocol.guarantee.epsilon
        protocol = cast(MemoizedProtocol, protocol)  # tags.memoized: it states its guarantees over time
        sent = self.reports_sent(protocol, collector)
        if self.accounting == "stable":
            fresh = max(0, min(sent + reports, protocol.memo_keys) - sent)
            return fresh * protocol.stable_guarantee.epsilon
        after = protocol.epsilon_over_changes(sent + reports)
        if math.isinf(after):
            return math.inf
        return after - (0.0 if sent == 0 else protocol.epsilon_over_changes(sent))

    def charges(self) -> list[dict[str, Any]]:
        """Every charge: ``{"at": unix seconds, "epsilon", "collector", "protocol", "reports"}``, and ``"share"`` when a
        fresh report is a randomized response of its epsilon only with that chance (GRR, SS, OUE, SUE:
        :func:`~dpdist.accounting._randomized_response.randomized_response_share`; absent: 1)."""
        return [dict(charge) for charge in self._charges]

    def answered(self, once: str, collector: str = "local") -> bool:
        """Whether the device has answered the question ``once`` of ``collector`` (see :meth:`report`)."""
        return _once_key(collector, once) in self._answered

    @validate_params({"once": _ONCE})
    def round_for(self, once: str, collector: str, sizes: Any, rng: Seed = None) -> int:
        """The round (1-based) this device answers of the campaign in rounds ``once`` at ``collector``.

        Drawn on first call, round :math:`k` with probability :math:`n_k / \\sum_j n_j` (``sizes``: the
        rounds' group sizes, public), from the CSPRNG (``rng``: a seed, for tests), and kept: saved
        (``on_change``) before it is returned, so the device learns nothing by asking again.  The draw
        depends on nothing private and on nothing about *when* the device arrives, so the rounds'
        groups are a random split of the devices (docs/explanation/adaptive-quantiles.md, "Disjoint groups"),
        whatever order they answer in.
        """
        key = _once_key(collector, once)
        kept = self._rounds.get(key)
        if kept is not None:
            return kept
        weights = check_param("PrivacyLedger.round_for", "sizes", sizes, Weights(
            "the rounds' group sizes, non-negative numbers with a positive sum"))
        generator = check_rng(rng, owner="PrivacyLedger.round_for")  # None: the CSPRNG
        drawn = int(generator.choice(weights.size, p=weights / weights.sum())) + 1
        self._rounds[key] = drawn
        if self.on_change is not None:  # kept before anyone learns whether its round is open
            self.on_change(self)
        return drawn

    # ------------------------------------------------------------------ reporting
    @validate_params({"once": Optional(_ONCE)})
    def report(
        self, protocol: LocalProtocol, values: ArrayLike, collector: str = "local", rng: Seed = None,
        now: float | None = None, once: str | None = None,
    ) -> np.ndarray:
        """Reports of ``values`` (all of this one device), charged first; refused whole if over budget.

        Memoized protocols report through the scope's memo (drawn on first use and kept);
        others draw a fresh report per value.  ``rng``: a seed or generator for reproducible
        research (the memo is then marked seeded and refuses later CSPRNG reports); ``None``,
        the default, draws from the CSPRNG.  ``once``: the name of a question the device
        answers at most once at ``collector``, whatever config asks it (a campaign in rounds:
        its id, for every round); one value, and never a second time.

        Raises
        ------
        PrivacyBudgetError
            The reports would spend more than the budget left, the collector changed the
            budgets of a scope whose memo the device keeps, or the device already answered
            ``once``.
        """
        values = np.asarray(values)
        collector = normal_collector(collector)
        if values.ndim != 1:
            raise InvalidParameterError(f"The 'values' of PrivacyLedger.report must be one-dimensional. Got shape {values.shape}.")
        now = time.time() if now is None else now
        if once is not None:
            self._check_once(once, collector, values.size)
        stream = self._stream(protocol, collector) if protocol.tags.memoized else None
        cost = self.cost(protocol, values.size, collector)
        left = self.budget - self.spent(now)
        if not cost <= left * (1 + 1e-12):  # NaN-safe: anything not clearly within the budget is refused
            window = "" if self.window is None else f" within {self.window:g} s"
            raise PrivacyBudgetError(
                f"Refused: {values.size} report(s) of {protocol.name} to {redacted_url(collector)!r} would spend epsilon "
                f"{cost:.6g}, and this device has {max(left, 0.0):.6g} left of its budget of {self.budget:g}{window} "
                f"({self.accounting} accounting). Nothing was sent; the device's owner may raise the budget.",
                remaining=max(left, 0.0),
            )
        if stream is None:
            reports = protocol.privatize(values, rng=rng)
        else:
            client = stream["client"]
            generator = None if rng is None else _generator(rng)
            drawn = [client.report(value, generator) for value in values.tolist()]
            reports = np.asarray(drawn, dtype=np.result_type(*drawn)) if drawn else protocol.privatize(values[:0])
            stream["reports"] += values.size
        if values.size:
            share = 1.0 if protocol.tags.memoized else randomized_response_share(protocol)
            self._charges.append(
                {"at": float(now), "epsilon": cost, "collector": collector, "protocol": protocol.name,
                 "reports": int(values.size), **({"share": share} if share < 1 else {})}
            )
        if once is not None:
            self._answered[_once_key(collector, once)] = {"at": float(now), "protocol": protocol.name}
        if self.on_change is not None:  # persisted before the reports can leave
            self.on_change(self)
        return reports

    def _check_once(self, once: str, collector: str, size: int) -> None:
        """Refuse a second answer to ``once``, or an answer of more than one value (public inputs only)."""
        if size != 1:
            raise InvalidParameterError(
                f"A question asked once per device ('once'={once!r}) takes one value. Got {size} values."
            )
        earlier = self._answered.get(_once_key(collector, once))
        if earlier is not None:
            raise PrivacyBudgetError(
                f"Refused: this device already answered {once!r} of {redacted_url(collector)!r} (with {earlier['protocol']}). Its "
                "guarantee holds for one answer per device (a campaign in rounds: one round per user, by parallel "
                "composition); a second answer would spend epsilon again. Nothing was sent.",
                remaining=self.remaining(),
            )

    def _stream(self, protocol, collector: str) -> dict[str, Any]:
        config = protocol.config()
        scope = budget_scope(collector, config)
        stream = self._streams.get(scope)
        if stream is None:
            stream = {"config": config, "client": protocol.client(), "reports": 0, "collector": normal_collector(collector)}
            self._streams[scope] = stream
        elif stream["client"].protocol != protocol:
            kept = {key: stream["config"].get(key) for key in _BUDGET_KEYS if key in stream["config"]}
            asked = {key: config.get(key) for key in _BUDGET_KEYS if key in config}
            raise PrivacyBudgetError(
                f"Refused: {redacted_url(collector)!r} now asks for {protocol.name} with {asked}, but this device keeps permanent "
                f"responses drawn for {kept} under the same collector, protocol and domain. A changed privacy "
                "parameter would make the device draw them again (a fresh epsilon_inf each time), so the device "
                "keeps its memo and does not report under the new parameters.",
                remaining=self.remaining(),
            )
        return stream

    # ------------------------------------------------------------------ state
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe state (the JavaScript client's ``localStorage`` entry, the ``--memo`` file)."""
        return {
            "format": LEDGER_FORMAT,
            # version 2 once the device answered a question asked once: readers of version 1 (before rounds
            # campaigns) would drop "answered" and save the ledger without it; they refuse version 2 instead
            "version": 2 if self._answered or self._rounds else 1,
            "budget": self.budget,
            "window": self.window,
            "accounting": self.accounting,
            "streams": {
                scope: {"collector": stream["collector"], "reports": stream["reports"], **stream["client"].to_dict()}
                for scope, stream in sorted(self._streams.items())
            },
            "charges": self.charges(),
            "answered": {key: dict(answer) for key, answer in sorted(self._answered.items())},
            **({"rounds": dict(sorted(self._rounds.items()))} if self._rounds else {}),
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "PrivacyLedger":
        """The ledger of :meth:`to_dict` (checked: a damaged ledger is an ``IncompatibleStateError``)."""

        if not isinstance(state, dict) or state.get("format") != LEDGER_FORMAT or state.get("version") not in (1, 2):
            raise IncompatibleStateError(f"Not a dpdist privacy ledger (format {LEDGER_FORMAT!r}, version 1 or 2).")
        try:
            ledger = cls(**{key: state[key] for key in _SETTINGS if key in state})
        except InvalidParameterError as error:
            raise IncompatibleStateError(f"A privacy ledger's settings are damaged: {error}") from None
        streams, charges = state.get("streams"), state.get("charges")
        if not isinstance(streams, dict) or not isinstance(charges, list):
            raise IncompatibleStateError("A privacy ledger needs 'streams' (an object) and 'charges' (a list).")
        for scope, stream in streams.items():
            if not isinstance(stream, dict) or not isinstance(stream.get("collector"), str):
                raise IncompatibleStateError(f"Ledger stream {scope!r} is damaged: not an object with a 'collector'.")
            reports = stream.get("reports")
            if isinstance(reports, bool) or not isinstance(reports, int) or reports < 0:
                raise IncompatibleStateError(f"Ledger stream {scope!r}: 'reports' must be an int >= 0. Got {reports!r}.")
            try:
                protocol = _memoized(from_config(stream["config"]))
                client = type(protocol.client()).from_dict(
                    {key: value for key, value in stream.items() if key not in ("collector", "reports")}
                )
            except (DPDistError, TypeError, KeyError) as error:
                raise IncompatibleStateError(f"Ledger stream {scope!r}: {error}") from None
            current = budget_scope(stream["collector"], protocol.config())
            if _renormalized(scope) != current:
                raise IncompatibleStateError(f"Ledger stream {scope!r} holds a memo of another scope.")
            kept = ledger._streams.get(current)  # two spellings of one collector (an earlier normalization)
            if kept is not None:  # keep one memo; every report through either counts
                kept["reports"] += reports
                continue
            ledger._streams[current] = {
                "config": protocol.config(), "client": client, "reports": reports,
                "collector": normal_collector(stream["collector"]),
            }
        for charge in charges:
            ledger._charges.append(_checked_charge(charge))
        ledger._answered = _checked_answers(state.get("answered", {}))  # absent in ledgers written before campaigns in rounds
        ledger._rounds = _checked_rounds(state.get("rounds", {}))  # absent before devices drew their round
        return ledger

    @classmethod
    def from_memo(cls, state: dict[str, Any], collector: str = "local", **settings: Any) -> "PrivacyLedger":
        """A ledger holding one memo of the earlier ``--memo`` format (a client's ``to_dict``).

        The reports sent before are not known: the stream starts at 0 reports, and the docs say so.
        """

        ledger = cls(**settings)
        try:
            protocol = _memoized(from_config(state["config"]))
            client = type(protocol.client()).from_dict(state)
        except (DPDistError, TypeError, KeyError, AttributeError) as error:
            raise IncompatibleStateError(f"Not a device memo: {error}") from None
        ledger._streams[budget_scope(collector, protocol.config())] = {
            "config": protocol.config(), "client": client, "reports": 0, "collector": normal_collector(collector),
        }
        return ledger

    @classmethod
    def restore(cls, state: dict[str, Any] | None, source: str, **settings: Any) -> "PrivacyLedger":
        """The ledger of ``state`` (a ledger's or a device memo's JSON; ``None``: a new ledger), read from ``source``.

        ``settings`` (``budget``, ``window``, ``accounting``) apply to a new ledger and, when given,
        replace those of an existing one (the owner's decision); ``source`` names where the state
        was kept in errors (``"The '--memo' file 'device.json'"``).
        """
        chosen = {key: value for key, value in settings.items() if value is not None}
        if state is None:
            return cls(**chosen)
        try:
            if isinstance(state, dict) and state.get("format") == LEDGER_FORMAT:
                ledger = cls.from_dict(state)
            else:
                ledger = cls.from_memo(state)
        except IncompatibleStateError as error:
            raise IncompatibleStateError(f"{source}: {error}") from None
        for key, value in chosen.items():
            value = check_param("PrivacyLedger", key, value, _SETTINGS[key])
            if key == "accounting" and value != ledger.accounting and ledger._charges:
                raise IncompatibleStateError(
                    f"{source} charges under {ledger.accounting!r} accounting; its charges cannot "
                    f"be re-read as {value!r} (they would under- or over-count). Keep the accounting, or start a new ledger."
                )
            setattr(ledger, key, value)
        return ledger




def _is_memoized(name: str) -> bool:
    """Whether the protocol ``name`` reports through a memo (an unknown name counts as one: its charges are then
    gathered into one mechanism, which only overstates)."""
    registered = registered_class(name)
    return True if registered is None else bool(registered.tags.memoized)


def _generator(rng):
    return check_rng(rng, owner="PrivacyLedger.report")


def _memoized(protocol: LocalProtocol) -> MemoizedProtocol:
    """``protocol``, which a device's memo must belong to: one that memoizes (``tags.memoized``)."""
    if not isinstance(protocol, MemoizedProtocol):
        raise IncompatibleStateError(f"A device memo needs a memoized protocol (tags.memoized). Got {protocol.name!r}.")
    return protocol


def _once_key(collector: str, once: str) -> str:
    return f"{normal_collector(collector)} {once}"


def _checked_answers(answered) -> dict[str, dict[str, Any]]:
    """The ledger's ``answered`` map, checked: a damaged one is refused, never dropped (it holds refusals)."""
    if not isinstance(answered, dict):
        raise IncompatibleStateError(f"A privacy ledger's 'answered' must be an object. Got a value of type {type(answered).__name__}.")
    checked = {}
    for key, answer in answered.items():
        if not (isinstance(key, str) and " " in key and isinstance(answer, dict) and set(answer) == {"at", "protocol"}
                and isinstance(answer["protocol"], str) and not isinstance(answer["at"], bool)
                and isinstance(answer["at"], (int, float)) and math.isfinite(answer["at"])):
            raise IncompatibleStateError(f"A privacy ledger's answer {key!r} is damaged: not an object of 'at' and 'protocol'.")
        checked[_renormalized(key)] = {"at": float(answer["at"]), "protocol": answer["protocol"]}
    return checked


def _checked_rounds(rounds) -> dict[str, int]:
    """The ledger's ``rounds`` map (the round each campaign in rounds is answered in), checked: never dropped."""
    if not isinstance(rounds, dict) or not all(
        isinstance(key, str) and " " in key and isinstance(k, int) and not isinstance(k, bool) and k >= 1
        for key, k in rounds.items()
    ):
        raise IncompatibleStateError("A privacy ledger's 'rounds' is damaged: not an object of round numbers.")
    return {_renormalized(key): int(k) for key, k in rounds.items()}


def _checked_charge(charge) -> dict[str, Any]:
    fields: dict[str, type | tuple[type, ...]] = {
        "at": (int, float), "epsilon": (int, float), "collector": str, "protocol": str, "reports": int
    }
    share = charge.get("share", 1.0) if isinstance(charge, dict) else None
    if not isinstance(charge, dict) or set(charge) - {"share"} != set(fields) or any(
        isinstance(charge[key], bool) or not isinstance(charge[key], kind) for key, kind in fields.items()
    ) or not (0 <= charge["epsilon"] < math.inf and math.isfinite(charge["at"]) and charge["reports"] >= 1) or (
        isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1
    ):
        raise IncompatibleStateError("A privacy ledger's charge is damaged: not an object with a time and an epsilon.")
    return {**charge, "at": float(charge["at"]), "epsilon": float(charge["epsilon"])}
