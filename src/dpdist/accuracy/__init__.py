"""What epsilon buys, before any data are touched: the expected error of a release at ``n`` and each epsilon.

>>> from dpdist import local
>>> from dpdist.accuracy import explain
>>> table = explain(local.make("oue", epsilon=1.0, domain_size=64), n=10_000, epsilons=[0.5, 1, 2])
>>> [round(x, 4) for x in table["interval"]]   # 95% half-width of one item's frequency
[0.0401, 0.0211, 0.0121]

``explain(method, n)`` takes a local protocol (an object, its config, or its name
with parameters) or a central release (``dpdist.central.cdf`` or its name:
``"cdf"``, ``"tree"``, ``"histogram"``, ``"adaptive-quantiles"``, ``"polynomial"``,
``"pursuit"``, ``"quantiles"``, with ``bounds=`` and the release's other
parameters), and returns an :class:`Explanation`: a table, a plot and JSON of the
expected errors (:data:`METRICS`) at each epsilon.

Where each number comes from is stated with it:

* **analytic** -- frequency oracles' unbiased estimators (their variance at the data
  shape's item frequencies) and the mean protocols ``pm``/``sr`` (the exact variance of
  the mean): no simulation, any ``n``;
* **simulation** -- everything else: ``repeats`` runs (default 20) on data drawn from a
  stated public shape (:data:`SHAPES`, default ``"normal"``), seeded (``seed``, default 0),
  each measured against its own data; the value is the mean over the runs with its
  standard error.  Simulations take ``n`` up to 10^7.

Results are cached: in memory for the process, and on disk when ``cache`` names a
directory (``dpdist explain`` uses ``$DPDIST_CACHE_DIR/explain``, else
``~/.cache/dpdist/explain``), keyed by everything that decides them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import types
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import __version__, local
from .._io._atomic import atomic_writer
from .._validation import (
    CENTRAL_EPSILON,
    LOCAL_EPSILON,
    POPULATION,
    Described,
    InstanceOf,
    Integer,
    Items,
    Optional,
    Options,
    PathLike as PathRule,
    check_param,
    check_relations,
    validate_params,
)
from ..errors import InvalidParameterError
from ..local import LocalProtocol
from ._central import BOUNDS_GIVEN, central_predictions, check_release_parameters, release_name, release_named
from ._local import _analytic_variance, local_predictions
from ._persons import check_person_model, person_predictions
from ._ladder import ladder
from ._ladder_result import Ladder
from ._ladder_rows import LadderRow
from ._plan import EVERY, MEMOIZED, Plan, PlanRow, plan
from ._result import METRICS, Expected, Explanation, Prediction
from ._shapes import DEFAULT_SHAPE, SHAPE, SHAPES

if TYPE_CHECKING:
    from .._types import ArrayLike, PathLike
    from ..local import LocalProtocol

__all__ = ["explain", "explain_plan", "explain_ladder", "Ladder", "LadderRow", "Plan", "PlanRow", "EVERY", "MEMOIZED", "Explanation", "Prediction", "Expected", "METRICS", "SHAPES", "DEFAULT_EPSILONS", "RELEASES", "simulates"]

#: The epsilons of "what epsilon buys" when none are given (the method's own is added).
DEFAULT_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_REPEATS = 20
#: Simulations draw n values per run: at most this many.
MAX_SIMULATED_N = 10_000_000
#: The bounds on the rows per person a prediction per person compares when none are given.
DEFAULT_BOUNDS = (1, 2, 4, 8, 16, 32)
_SIMULATED = "simulated: each run's release against its own data, mean of the runs ± se"
_MEMORY: OrderedDict = OrderedDict()
_MEMORY_SIZE = 256

from ._central import RELEASES  # noqa: E402  (after the constants it does not use)


#: the ``method`` of explain and simulates: a local protocol, its config or name, or a central release (a function)
_METHOD = InstanceOf((str, dict, LocalProtocol, types.FunctionType, types.MethodType),
                     "a local protocol, its config or name, or a central release (a dpdist.central function or its "
                     "name)", shows_text=True)
#: the ``cache`` parameter of explain and explain_plan (a directory, created when missing)
_CACHE = Optional(Described(PathRule(), "the path of a directory (a non-empty str or os.PathLike)"))


@validate_params({"method": _METHOD, "n": POPULATION, "shape": SHAPE, "repeats": Integer(low=2, high=10_000), "seed": Integer(low=0),
                  "cache": _CACHE})
def explain(method: str | LocalProtocol | dict[str, Any] | Callable[..., Any], n: int, *,
            epsilons: ArrayLike | float | None = None, shape: str = DEFAULT_SHAPE, repeats: int = DEFAULT_REPEATS,
            seed: int = 0, cache: PathLike | None = None, **params: Any) -> Explanation:
    """The expected error of ``method`` at ``n`` users or records and each epsilon, before any data are touched.

    Parameters
    ----------
    method : LocalProtocol, dict, str or callable
        A local protocol, its config, a registered protocol name (``params`` are its parameters), or a
        central release (a ``dpdist.central`` function or its name, ``params`` its arguments: ``bounds``
        and, for ``"polynomial"``, ``delta``).
    n : int
        Users (local) or records (central): 1 to 2**53 (:data:`dpdist._validation.MAX_POPULATION`).
    epsilons : sequence of float, optional
        Default: 0.25, 0.5, 1, 2, 4, 8 and the method's own epsilon.
    shape : str
        The public data shape of the prediction (:data:`SHAPES`).
    repeats : int
        Simulated runs per epsilon (2 to 10,000).
    seed : int
        Root seed of the simulation.
    cache : path, optional
        A directory for an on-disk cache of the results (created when missing); a path to anything
        else (a file) is refused.
    """
    owner = "explain"
    cache = _check_cache(owner, cache)
    chosen = SHAPES[shape]
    target = _target(method, params)
    epsilons = _epsilons(owner, epsilons, target)
    key = json.dumps({"target": target["key"], "n": n, "epsilons": epsilons, "shape": shape, "repeats": repeats,
                      "seed": seed, "version": _version()}, sort_keys=True, default=str)
    cached = _recall(key, cache)
    if cached is not None:
        return cached
    if target["simulated"]:
        check_param(owner, "n", n, Described(Integer(high=MAX_SIMULATED_N), (
            f"at most {MAX_SIMULATED_N:,} for {target['name']}, whose errors are simulated (n values per run)")))
    kind, predictions, notes = target["run"](n, epsilons, chosen, repeats, seed)
    explanation = Explanation(target["name"], target["model"], kind, n, shape, tuple(predictions), target["parameters"],
                              repeats if target["simulated"] else 0, seed, tuple(notes))
    _remember(key, explanation, cache)
    return explanation


@validate_params({"shape": SHAPE, "cache": _CACHE})
def explain_plan(config: LocalProtocol | dict[str, Any], n: int, *, every: str = "day", horizon: int = 365,
                 releases: int | None = None, delta: float = 1e-8, target: float | None = None,
                 relay_n: int | None = None, shape: str = DEFAULT_SHAPE, cache: PathLike | None = None) -> Plan:
    """A year of collection planned: ``config``'s campaign repeated ``every`` day, week or release over ``horizon``
    days; per device, its total under each accountant, the memoized alternatives, the relay's amplified total and
    (with ``target``) the per-campaign epsilon that fits a yearly target, each with one campaign's error
    (:func:`explain`'s ``interval`` at ``n``, on ``shape``).  See :mod:`dpdist.accuracy._plan`.

    >>> from dpdist.accuracy import explain_plan
    >>> year = explain_plan({"protocol": "grr", "epsilon": 0.1, "domain_size": 16}, n=100_000, target=4.0)
    >>> round(year.row("repeated").totals["basic"], 3), year.row("repeated").totals["pld"] < 3.95
    (36.5, True)
    """

    def error(protocol, at: int) -> float:
        explanation = explain(protocol.config(), at, epsilons=[protocol.guarantee.epsilon], shape=shape, cache=cache)
        return float(explanation["interval"][0]) if "interval" in explanation.metrics else math.nan

    return plan(config, n, error, every=every, horizon=horizon, releases=releases, delta=delta, target=target,
                relay_n=relay_n)


def explain_ladder(config: LocalProtocol | dict[str, Any], n: int, *, delta: float, threshold: int = 20,
                   sampling: float | None = None, colluding: int = 0, tokens_each: int = 1,
                   shape: str = DEFAULT_SHAPE) -> Ladder:
    """The trust ladder of one frequency campaign: per deployment model, the per-item error at one central guarantee.

    Every row holds central ``(epsilon, delta)`` under replace neighbours, ``epsilon`` being the config's: local only;
    shuffled through dpdist's relay (``epsilon0`` from the exact shuffle accountant); sample-and-threshold as Brave's
    Nebula runs it (threshold ``K``, sampling ``p``; rare items suppressed); a trusted curator's discrete Laplace and
    Gaussian histograms; secure aggregation (computed, not run by dpdist). Each row says, party by party, what its
    guarantee assumes (:mod:`dpdist.accuracy._ladder_rows`; ``docs/explanation/trust-ladder.md``).

    Parameters
    ----------
    config : LocalProtocol or dict
        A frequency protocol with an analytic variance (its epsilon is the central target).
    n : int
        Devices, one report each (>= 2).
    delta : float
        The central delta, below ``1/n``.
    threshold : int
        Sample-and-threshold's ``K`` (default 20, Nebula's in Brave's P3A).
    sampling : float, optional
        Sample-and-threshold's ``p``; default the largest the exact account allows at the target (a given ``p`` that
        does not meet it is refused).
    colluding : int
        Devices the collector or server runs or knows, each putting in up to ``tokens_each`` reports: one adversary
        for every row (relay: ``colluding x tokens_each`` known reports; sample-and-threshold: as many forged reports,
        each counting towards ``K``; secure aggregation: ``colluding`` shares that add no noise, one per device).
    tokens_each : int
        Reports one relay credential admits (the issuer's published ceiling), the protected device's included: the
        relay's row is stated per device.
    shape : str
        The public data shape of the errors (:data:`SHAPES`).

    >>> from dpdist import explain_ladder
    >>> rungs = explain_ladder({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, n=10_000, delta=1e-8,
    ...                        shape="uniform")
    >>> rungs.row("shuffled").mse < rungs.row("local").mse
    True
    """
    return ladder(config, n, delta=delta, threshold=threshold, sampling=sampling, colluding=colluding,
                  tokens_each=tokens_each, shape=shape)


@validate_params({"method": _METHOD})
def simulates(method: str | LocalProtocol | Callable[..., Any], **params: Any) -> bool:
    """Whether :func:`explain` simulates ``method`` (False: its errors are analytic, for any ``n``)."""
    return _target(method, params)["simulated"]


def _target(method, params: dict) -> dict:
    """How to predict ``method``: its name, model, parameters, cache key, whether it simulates, and the runner."""

    if isinstance(method, str) and method.removeprefix("central.") in RELEASES:
        method = release_named(method.removeprefix("central."))
    elif isinstance(method, str):  # a protocol's name, in any case
        check_param("explain", "method", method.lower(), Described(Options((*local.available(), "auto")), (
            f"a local protocol {local.available()} or a central release {list(RELEASES)}")))
    if callable(method) and not isinstance(method, LocalProtocol) and not isinstance(method, type):
        return _central_target(method, params)
    if isinstance(method, dict):
        protocol = local.from_config(method)
    elif isinstance(method, str):
        protocol = local.make(method, **{"epsilon": 1.0, **params})
    else:  # a LocalProtocol: the tables' rule of 'method'
        protocol = method
    if params and not isinstance(method, str):
        raise InvalidParameterError(f"explain takes parameters by keyword with a protocol's name only. Got {sorted(params)}.")
    if protocol.tags.kind == "multi":
        raise InvalidParameterError(
            f"explain predicts the errors of one-attribute methods; {protocol.display_name} collects records of several "
            "attributes. Compare those analytically, spending no budget, with local.make('multi-auto', ...) or "
            "dpdist.local.multi.auto.compare_multi_protocols."
        )
    config = protocol.config()
    analytic = protocol.tags.kind in ("frequency", "key_value") and _analytic_variance(
        protocol, 1000, SHAPES["uniform"].item_probabilities(int(config["domain_size"]))) is not None
    analytic = analytic or hasattr(protocol, "mean_variance")
    return {"name": protocol.name, "model": "local", "simulated": not analytic, "own_epsilon": protocol.epsilon,
            "parameters": {k: v for k, v in config.items() if k not in ("protocol", "version", "epsilon")},
            "key": config if getattr(protocol, "auto_choice", None) is None else {"config": config, "auto": protocol.auto_choice},
            "run": lambda n, e, s, r, seed: _with_notes(local_predictions(protocol, n, e, s, r, seed),
                                                                        _auto_notes(protocol))}


def _with_notes(result: tuple, notes: list[str]) -> tuple:
    """``(kind, predictions, notes)`` with ``notes`` added."""
    kind, predictions, own = result
    return kind, predictions, [*own, *notes]


def _auto_notes(protocol: object) -> list[str]:
    """What ``auto`` chose and why, and each candidate's variance and report size (none for a protocol named)."""
    choice = getattr(protocol, "auto_choice", None)
    if choice is None:
        return []
    n = choice["expected_reports"]
    lines = [f"auto chose {choice['reason']}", f"candidates (mean variance x n per item at n = {n:,}; report bits):"]
    for row in choice["candidates"]:
        if "variance" not in row:
            lines.append(f"  {row['protocol']}: {row['reason']}")
            continue
        excluded = "" if row["eligible"] else f"; excluded: {row['reason']}"
        lines.append(f"  {row['protocol']}: {row['variance'] * n:.4g}; {row['report_bits']} bits{excluded}")
    return lines


def _central_target(method, params: dict) -> dict:
    """:func:`_target` of a central release; per person (``rows_per_person`` given: explain's model of the table,
    :mod:`dpdist.accuracy._persons`) one prediction per epsilon and ``max_contributions``."""
    name = release_name(method)
    if "rows_per_person" not in params:
        if "max_contributions" in params or "person_correlation" in params or "privacy_id" in params:
            raise InvalidParameterError(
                "explain predicts a release per person from its model of the table: give 'rows_per_person' (and "
                "'max_contributions', the bounds to compare; 'person_correlation'); explain draws the ids itself. "
                f"Got {sorted(set(params) & {'max_contributions', 'person_correlation', 'privacy_id'})} without it.")
        check_release_parameters(method, params)
        return {"name": f"central.{name}", "model": "central", "parameters": params, "simulated": True,
                "key": {"release": name, "params": params}, "own_epsilon": None,
                "run": lambda n, e, s, r, seed: central_predictions(method, n, e, s, r, seed, params)}
    release = {key: value for key, value in params.items()
               if key not in ("rows_per_person", "person_correlation", "max_contributions")}
    model = check_person_model("explain", params["rows_per_person"], params.get("person_correlation", 0.5),
                               params.get("max_contributions", DEFAULT_BOUNDS))
    check_release_parameters(method, release)
    check_relations("explain", release, (BOUNDS_GIVEN,))
    quantiles = name == "quantiles"
    note = (f"per person: n persons with rows_per_person={model.key()['rows_per_person']!r}, values going with the "
            f"number of rows at person_correlation={model.person_correlation:g}; each release keeps max_contributions "
            "rows per person and is measured against all the rows (the bias of dropping rows and the noise of k rows)")

    def run(n, epsilons, shape, repeats, seed):
        predictions = person_predictions(method, n, epsilons, shape, repeats, seed, release, model, name, quantiles)
        return ("quantiles" if quantiles else "numerical"), predictions, [note, _SIMULATED]

    return {"name": f"central.{name}", "model": "central", "parameters": {**release, **model.key()},
            "simulated": True, "key": {"release": name, "params": release, "persons": model.key()},
            "own_epsilon": None, "run": run}


def _epsilons(owner: str, epsilons, target: dict) -> list[float]:
    rule = LOCAL_EPSILON if target["model"] == "local" else CENTRAL_EPSILON
    if epsilons is None:
        chosen = set(DEFAULT_EPSILONS) | ({target["own_epsilon"]} if target["own_epsilon"] else set())
    else:
        if isinstance(epsilons, (int, float)):
            epsilons = [epsilons]
        epsilons = check_param(owner, "epsilons", epsilons, Items(None, "one or more epsilons (a number or a list)",
                                                                  min_length=1))
        chosen = {check_param(owner, "epsilons", float(e) if isinstance(e, (int, float)) else e, rule) for e in epsilons}
    return sorted(float(e) for e in chosen)


def _check_cache(owner: str, cache) -> Path | None:
    """``cache`` (None or a path, as the tables say: :data:`_CACHE`) as a directory path (it may not exist yet)."""
    if cache is None:
        return None
    path = Path(cache)
    existing = next((candidate for candidate in (path, *path.parents) if candidate.exists()), None)
    if existing is not None and not existing.is_dir():
        raise InvalidParameterError(
            f"The 'cache' parameter of {owner} must be the path of a directory (created when missing). Got "
            f"{str(cache)!r}, {'a file' if existing == path else f'under the file {str(existing)!r}'} instead."
        )
    return path


def _version() -> str:
    return __version__


def _recall(key: str, cache) -> Explanation | None:
    if key in _MEMORY:
        _MEMORY.move_to_end(key)
        return _MEMORY[key]
    if cache is None:
        return None
    path = _cache_path(key, cache)
    try:  # a file unreadable, not JSON or not an explanation (a corrupt cache entry) is a miss: computed again
        explanation = Explanation.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None
    _MEMORY[key] = explanation
    return explanation


def _remember(key: str, explanation: Explanation, cache) -> None:
    _MEMORY[key] = explanation
    while len(_MEMORY) > _MEMORY_SIZE:
        _MEMORY.popitem(last=False)
    if cache is None:
        return

    path = _cache_path(key, cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as handle:
        handle.write(json.dumps(explanation.to_dict()).encode())


def _cache_path(key: str, cache) -> Path:
    return Path(cache) / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def default_cache_directory() -> Path:
    """``$DPDIST_CACHE_DIR/explain``, else ``$XDG_CACHE_HOME/dpdist/explain``, else ``~/.cache/dpdist/explain``."""

    if os.environ.get("DPDIST_CACHE_DIR"):
        return Path(os.environ["DPDIST_CACHE_DIR"]) / "explain"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpdist" / "explain"
