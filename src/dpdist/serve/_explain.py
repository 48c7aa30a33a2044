"""``GET /api/campaigns/{campaign}/explain``: what a campaign's epsilon buys (for the dashboard and participate page).

The prediction reads the campaign's public config only (:func:`dpdist.accuracy.explain`),
so the route is public like the config.  It is bounded like every public route: ``n``
is rounded to the 1-2-5 grid (10 to 10^9; simulated protocols at most 2 x 10^4), the
epsilons are the campaign's own times 1/4, 1/2, 1, 2 and 4, the simulation runs 10
times per epsilon, one prediction is computed at a time, and every result is cached
for the process, so a page load costs a lookup once the first one has run.

The document also says what an attacker can learn (``attacker``, from the config alone, cached per config): how
likely someone who sees a device's reports guesses its value after 1, 7, 30 and 365 reports of an unchanged value,
fresh and kept (:func:`dpdist.accounting.guess_odds`), and the trade-off curves of a test between two values of one
device, from one report and from a year of daily reports (:func:`dpdist.accounting.tradeoff` of their losses), which
the dashboard draws; ``sentence`` and ``words`` say them as the dashboard shows them (every attacker's figure rounded
up: :func:`dpdist.accounting._odds.percent`).
"""

from __future__ import annotations

import functools
import json
import math
import threading
from typing import Any, cast

import numpy as np

from .. import local
from .._validation import LOCAL_EPSILON
from ..accounting import FPRS, GuessOdds, TradeOff, guess_odds, protocol_loss, tradeoff
from ..accounting._odds import percent
from ..accuracy import SHAPES, explain, simulates
from ..errors import InvalidParameterError
from ._explain_words import plain_words
from .._guard._refusals import InvalidRequest

__all__ = ["explain_json", "SERVICE_REPEATS", "SERVICE_MAX_SIMULATED_N"]

#: Simulated runs per epsilon for the service's predictions (their standard errors say how precise).
SERVICE_REPEATS = 10
#: Largest n of a simulated prediction of the service (analytic ones take any n up to 10^9).
SERVICE_MAX_SIMULATED_N = 20_000
_DEFAULT_N = 10_000
_ONE_AT_A_TIME = threading.Lock()


def grid_n(n: int) -> int:
    """The nearest value of the 1-2-5 grid (10, 20, 50, 100, ...) to ``n`` on a log scale."""
    exponent = math.floor(math.log10(n))
    candidates = [m * 10**e for e in (exponent - 1, exponent, exponent + 1) for m in (1, 2, 5)]
    return min(candidates, key=lambda c: abs(math.log(c) - math.log(n)))


def _query_n(text: str | None, campaign) -> int:
    if text is None:  # the campaign's cap when it has one, else its reports so far (at least 100), else 10,000
        n = campaign.max_reports or (max(campaign.n, 100) if campaign.n else _DEFAULT_N)
    else:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if not 10 <= n <= 10**9:
            raise InvalidRequest("invalid_query", f"The 'n' query parameter must be an integer in [10, 10^9]. Got {text!r}.")
    return grid_n(n)


#: The epsilons of the service's predictions: the campaign's own times these factors.
FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


def _epsilons(config: dict) -> list[float]:
    own = float(config["epsilon"])
    return [own * factor for factor in FACTORS if LOCAL_EPSILON.low <= own * factor <= LOCAL_EPSILON.high]


def explain_json(campaign, n_text: str | None, shape: str | None) -> dict[str, Any]:
    """The campaign's predicted errors (:meth:`dpdist.accuracy.Explanation.to_dict`) with what was asked and used,
    and ``plain``: the same in sentences for the pages (:func:`._explain_words.plain_words`)."""
    n = _query_n(n_text, campaign)
    if shape is not None and shape not in SHAPES:
        raise InvalidRequest("invalid_query", f"The 'shape' query parameter must be one of {list(SHAPES)}. Got {shape!r}.")
    with _ONE_AT_A_TIME:
        try:
            if simulates(campaign.config):
                n = min(n, SERVICE_MAX_SIMULATED_N)
            explanation = explain(campaign.config, n, epsilons=_epsilons(campaign.config), shape=shape or "normal",
                                  repeats=SERVICE_REPEATS)
        except InvalidParameterError as error:  # a bad shape, or a protocol explain does not cover (pem, multi-attribute)
            raise InvalidRequest("invalid_query", str(error)) from None
    document = explanation.to_dict()
    document.update({"campaign": campaign.id, "epsilon": campaign.config.get("epsilon"),
                     "n_requested": _query_n(n_text, campaign)})
    document["plain"] = plain_words(document)
    document["attacker"] = attacker(json.dumps(campaign.config, sort_keys=True))
    return document


#: the numbers of reports of one unchanged value whose odds a campaign's document states (a day, a week, a month, a year)
REPORTS = (1, 7, 30, 365)
#: false-positive rates of the trade-off curve the dashboard draws
CURVE = tuple(float(x) for x in np.linspace(0.0, 1.0, 51))


@functools.lru_cache(maxsize=256)
def attacker(config: str) -> dict[str, Any] | None:
    """What an attacker can learn from a device's reports under ``config`` (its canonical JSON; module docstring),
    or None for a protocol whose odds cannot be stated (no domain to guess in)."""
    protocol = local.from_config(json.loads(config))
    try:
        fresh = guess_odds(protocol, REPORTS)
    except InvalidParameterError:
        return None
    memoized = protocol.tags.memoized
    one = protocol_loss(protocol)  # one report's exact loss (its channel's worst pair), or its epsilon's worst case
    year = cast(Any, protocol).stable_guarantee if memoized else protocol_loss(protocol, REPORTS[-1])  # a memo's
    kept = None if memoized else guess_odds(protocol, REPORTS, over="kept")
    test = tradeoff(one, FPRS)
    return {"guess": fresh.to_dict(), "kept": None if kept is None else kept.to_dict(), "tradeoff": test.to_dict(),
            "sentence": fresh.sentence(), "words": f"{_year(fresh, kept)} {_test(test)}",
            "curves": [{"label": "one report", **tradeoff(one, CURVE).to_dict()},
                       {"label": f"{REPORTS[-1]} reports of one value" + (" through its memo" if memoized else ""),
                        **tradeoff(year, CURVE).to_dict()}]}


def _year(fresh: GuessOdds, kept: GuessOdds | None) -> str:
    """The odds after the last of :data:`REPORTS` daily reports, fresh (or through the memo) and kept, in words."""
    how = "through its memo" if fresh.over == "memo" else "each drawn afresh"
    said = [f"{how}: {'' if fresh.exact[-1] else 'at most '}{percent(fresh.probability[-1], bound=True)}"]
    if kept is not None:
        said.append(f"one report kept and sent again: {'' if kept.exact[-1] else 'at most '}"
                    f"{percent(kept.probability[-1], bound=True)}")
    return f"After {fresh.reports[-1]} daily reports of one unchanged value, {'; '.join(said)}."


def _test(test: TradeOff) -> str:
    """A test's true-positive rates at its false-positive rates, in words."""
    rates = ", ".join(percent(value) for value in test.fpr)
    powers = ", ".join(percent(value, bound=True) for value in test.tpr)
    return (f"A test of {test.test} from one report, wrong on {rates} of the others, is right on "
            f"{'' if test.exact else 'at most '}{powers} of them (a blind guess: as often as it is wrong).")
