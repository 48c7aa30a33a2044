"""Run an :class:`ExperimentSpec`: cells in parallel processes, cached on disk, tidy tables.

Every finished cell is written to ``OUT/cells/<key>.json`` (``key`` a hash of the cell's
content: dataset, method, parameters, repeat, root seed and metrics, plus the dpdist
version and the SHA-256 of a file dataset's bytes), atomically, by the main process;
temporary files left by a killed run are removed when the next run starts.  A run skips the cells whose file exists, so an interrupted run resumes
where it stopped and a finished one is not recomputed.  A cell that raises is reported
and not cached (it runs again next time).

Worker processes are started with the ``spawn`` method; the work function and
everything it receives are plain picklable data (dataset references by name, methods by
registry name or top-level callable).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import math
import signal
import threading
import time
import traceback
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import dpdist

from .. import metrics as metric_module
from ..errors import DatasetUnavailableError, InvalidParameterError
from .._validation import Implies, Integer, NamedInstanceOf, OneOf, Optional, Text, validate_params
from ._blas import loaded_numerics, pinned_environment, target_numerics
from .._io._atomic import remove_stale_temporaries, write_text_atomically
from ._methods import resolve_method
from ._runlog import source_commit
from ._spec import (
    DATASET_PREFIX,
    METRIC_PREFIX,
    Cell,
    ExperimentSpec,
    MetricSpec,
    canonical_numbers,
    cell_seeds,
    stable_id,
)
from ._table import ResultsTable, summarize

__all__ = ["run_spec", "RunResult", "cell_key", "cell_numerics"]


@dataclass
class RunResult:
    """What :func:`run_spec` produced."""

    spec: ExperimentSpec
    raw: ResultsTable
    summary: ResultsTable
    computed: int
    reused: int
    failures: list = field(default_factory=list)
    seconds: float = 0.0
    files: dict = field(default_factory=dict)
    claims: list = field(default_factory=list)  # set by reproduce: [{"text", "figure", "outcome", "explanation"}]
    # {"<BLAS kernel>+<numpy SIMD target>": cells computed with them} (each cell file records its own)
    numerics: dict = field(default_factory=dict)
    commits: dict = field(default_factory=dict)  # {commit that computed the cells (None: not recorded): cells}


def cell_key(cell: Cell, spec: ExperimentSpec, file_digests: dict | None = None, numerics: str | None = None) -> str:
    """Hash of everything that determines a cell's numbers.

    That is the cell's content (numbers canonical, so ``1.0`` and ``1`` are one value), the
    root seed, the metrics, the dpdist version, the numerics that compute it (``numerics``: the
    BLAS kernel and numpy's SIMD target, default the ones :func:`run_spec` uses, :func:`cell_numerics`;
    they round differently, see :mod:`~dpdist.experiments._blas`) and, for a dataset read from a
    file, the SHA-256 of the
    file's bytes: ``file_digests`` maps the file to it (computed once per run by
    :func:`run_spec`); without it the file is read here.
    """

    dataset = asdict(cell.dataset)
    if dataset.get("spread") is None:  # only when set, so the keys of existing runs do not change
        dataset.pop("spread", None)
    content = {
        "dataset": dataset,
        "method": [cell.method.label, cell.method.reference, sorted(cell.method.params.items())],
        "params": list(cell.params),
        "repeat": cell.repeat,
        "seed": spec.seed,
        "metrics": [[m.name, sorted(m.params.items()), m.key, m.kind] for m in spec.metrics],
        "dpdist": dpdist.__version__,  # read at each call: the version of the code that runs
        "numerics": numerics if numerics is not None else cell_numerics(),
    }
    if cell.method.metrics:  # only when set, so the keys of existing runs do not change
        content["method_metrics"] = sorted(cell.method.metrics)
    if cell.dataset.file is not None:
        file = cell.dataset.file
        content["file_sha256"] = file_digests[file] if file_digests and file in file_digests else _file_digest(file)
    text = json.dumps(canonical_numbers(content), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def cell_numerics(pin_numerics: bool = True) -> str:
    """The numerics the cells of a local run are computed with: the pinned ones
    (:func:`~dpdist.experiments._blas.target_numerics`) when ``pin_numerics`` and there are, else
    those of this process."""
    return (target_numerics() if pin_numerics else None) or loaded_numerics()


def _file_digest(file: str) -> str | None:
    """SHA-256 of a file's bytes, read in 1 MiB chunks; None when it cannot be read (the cell
    then fails with the reader's error, and is not cached)."""
    digest = hashlib.sha256()
    try:
        with open(file, "rb") as handle:
            for chunk in iter(lambda: handle.read(2**20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


@functools.lru_cache(maxsize=32)
def _dataset(reference):
    return reference.resolve()


#: Users drawn per (dataset, n, data stream), kept read-only in each worker: every method and
#: epsilon of a repeat sees the same users, so a worker draws them once (bounded by bytes).
_USERS: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
#: The same users sorted, for the distribution metrics of numerical datasets (sorted once, not once per metric)
_SORTED_USERS: dict[tuple, np.ndarray] = {}
_USERS_BYTES = 768 * 2**20


def _users(reference, n, data_seed: tuple) -> np.ndarray:
    key = (reference, n, data_seed)
    if key in _USERS:
        _USERS.move_to_end(key)
        return _USERS[key]
    values = _dataset(reference).load(n, rng=np.random.default_rng(list(data_seed)))
    values.flags.writeable = False  # shared by later cells: a method must not modify it
    _USERS[key] = values
    _evict_users()
    return values


def _sorted_users(reference, n, data_seed: tuple) -> np.ndarray:
    """:func:`_users` sorted (read-only, kept while they are)."""
    key = (reference, n, data_seed)
    values = _users(reference, n, data_seed)
    if key not in _SORTED_USERS:
        _SORTED_USERS[key] = np.sort(values)
        _SORTED_USERS[key].flags.writeable = False
        _evict_users()
    return _SORTED_USERS[key]


def _evict_users() -> None:
    """Drop the least recently used users (and their sorted copy) while more than one set exceeds the bytes."""
    while len(_USERS) > 1 and sum(v.nbytes for v in [*_USERS.values(), *_SORTED_USERS.values()]) > _USERS_BYTES:
        _SORTED_USERS.pop(_USERS.popitem(last=False)[0], None)


def check_datasets(spec_name: str, cells) -> None:
    """Load every dataset the ``cells`` use once, before any cell runs.

    A dataset that cannot be loaded (a missing optional package, a missing file)
    raises :class:`~dpdist.errors.DatasetUnavailableError` naming the spec and the
    dataset, instead of failing every cell of it one by one.
    """
    for reference in dict.fromkeys(cell.dataset for cell in cells):
        try:
            _dataset(reference).load(1, rng=np.random.default_rng(0))
        except DatasetUnavailableError as error:
            raise DatasetUnavailableError(
                f"Experiment {spec_name!r} needs the dataset {reference.key!r}, which cannot be loaded; "
                f"no cell was run. {error}"
            ) from None
        except OSError as error:
            raise DatasetUnavailableError(
                f"Experiment {spec_name!r} needs the dataset {reference.key!r}, which cannot be read "
                f"({error.strerror or error}: {getattr(error, 'filename', '')}); no cell was run."
            ) from None


def _ignore_interrupts() -> None:
    """Worker initializer: Ctrl-C is handled by the main process alone (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _forget_file_datasets() -> None:
    """Drop the datasets and users read from files by earlier runs in this process."""
    _dataset.cache_clear()
    for key in [key for key in _USERS if key[0].file is not None]:
        del _USERS[key]
        _SORTED_USERS.pop(key, None)


def _metric_function(name: str):
    """A function of :mod:`dpdist.metrics` by name, or any top-level function as ``"module:function"``."""

    if ":" in name:
        module_name, _, function_name = name.partition(":")
        try:
            function = getattr(importlib.import_module(module_name), function_name, None)
        except ImportError as error:
            raise InvalidParameterError(f"The metric {name!r} cannot be imported: {error}") from None
        if function is None or not callable(function):
            raise InvalidParameterError(f"The metric {name!r} is not a function of module {module_name!r}.")
        return function
    function = getattr(metric_module, name, None)
    if function is None or not callable(function):
        raise InvalidParameterError(
            f"The metric {name!r} is not in dpdist.metrics (or a 'module:function' reference); available: "
            f"{sorted(n for n in getattr(metric_module, '__all__', []) if n[0].islower())}."
        )
    return function


def _metric_values(metric: MetricSpec, estimate, truth, rng, grid_options=None) -> dict[str, float]:
    function = _metric_function(metric.name)
    kwargs = dict(metric.params)
    accepted = inspect.signature(function).parameters
    for name, value in (grid_options or {}).items():
        if name in accepted:  # a metric_<name> grid parameter, for the metrics that take it
            kwargs[name] = value
    if "rng" in accepted and "rng" not in kwargs:
        kwargs["rng"] = rng
    result: Any = function(estimate, truth, **kwargs)  # a float, a named tuple of counts, or None
    if result is None:  # the metric does not apply to this estimate
        return {}
    if hasattr(result, "_asdict"):  # a named tuple of counts, e.g. true/false positives
        return {f"{metric.key}.{name}": float(value) for name, value in result._asdict().items()}
    return {metric.key: float(result)}


def execute_cell(cell: Cell, root_seed: int, metrics: Sequence[Any]) -> dict:
    """Run one cell; return ``{"metrics": {key: value}, "seconds": t}`` (top level: spawn-safe)."""
    start = time.perf_counter()
    seeds = cell_seeds(cell, root_seed)
    params = cell.param_dict
    metric_options = {k[len(METRIC_PREFIX) :]: params.pop(k) for k in list(params) if k.startswith(METRIC_PREFIX)}
    overrides = {k[len(DATASET_PREFIX) :]: params.pop(k) for k in list(params) if k.startswith(DATASET_PREFIX)}
    # only bins and permute: the grid's rule (experiments._spec.SWEEP), when the spec was built
    # the data stream stays keyed by the reference's key: the same users for every override
    reference = replace(cell.dataset, **overrides) if overrides else cell.dataset
    dataset = _dataset(reference)
    n = params.pop("n", None)
    values = _users(reference, n, tuple(seeds["data"]))
    method = resolve_method(cell.method.method)
    estimate = method(values, dataset, {**cell.method.params, **params}, np.random.default_rng(seeds["method"]))
    if dataset.kind == "categorical":
        truth = np.bincount(values, minlength=dataset.domain_size) / values.size
    else:  # sorted: the distribution metrics read them as an empirical CDF
        truth = _sorted_users(reference, n, tuple(seeds["data"]))
    results = {}
    for metric in metrics:
        if metric.kind != dataset.kind or (cell.method.metrics and metric.key not in cell.method.metrics):
            continue
        metric_rng = np.random.default_rng(seeds["metric"] + [stable_id("metric", metric.key)])
        results.update(_metric_values(metric, estimate, truth, metric_rng, metric_options))
    return {"metrics": results, "seconds": time.perf_counter() - start, "numerics": loaded_numerics()}


def _execute_safely(cell: Cell, root_seed: int, metrics: Sequence[Any]) -> dict:
    try:
        return execute_cell(cell, root_seed, metrics)
    except Exception as error:  # reported by the runner, never cached
        return {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}


def _write_atomically(path: Path, payload: dict) -> None:
    write_text_atomically(path, json.dumps(payload, sort_keys=True, default=str))


@validate_params({"jobs": Integer(low=1),
                  "scheduler": Optional(OneOf((Text(), NamedInstanceOf("distributed", ("Client",), "a distributed.Client")),
                                              "a Dask scheduler address such as 'tcp://host:8786' or a "
                                              "distributed.Client"))},
                 relations=(Implies("jobs", (1,), "scheduler", None, why="the cells run on the Dask cluster's workers, "
                                    "not in local worker processes", counterexample={"jobs": 2, "scheduler": "tcp://host:8786"}),))
def run_spec(
    spec: ExperimentSpec,
    out: str | Path,
    *,
    jobs: int = 1,
    progress: bool = True,
    cells: list[Cell] | None = None,
    scheduler: Any = None,
    pin_numerics: bool = True,
) -> RunResult:
    """Run the cells of ``spec`` not yet cached under ``out`` and build the results tables.

    Parameters
    ----------
    spec : ExperimentSpec
    out : path
        Output folder; cells go to ``out/cells``, tables to ``out/results``.
    jobs : int
        Worker processes (1 runs in this process).
    progress : bool
        Show a tqdm progress bar with an ETA on stderr.
    cells : list of Cell, optional
        Run only these cells (the tables then hold only them); default all.
    scheduler : str or distributed.Client, optional
        Run the cells on a Dask cluster instead (the ``dask`` extra): the address of its
        scheduler (``"tcp://host:8786"``) or a connected client.  The cells and their
        seeds are the same, so the numbers are those of a local run; this process writes
        the cache as results arrive, so an interrupted run resumes on any machine.
    pin_numerics : bool
        Compute the cells with pinned numerics, the OpenBLAS kernel and numpy's SIMD dispatch
        (:mod:`~dpdist.experiments._blas`; docs/explanation/verdicts.md, "Determinism"), so the numbers do
        not depend on the CPU: worker processes start with them, and with ``jobs=1`` the cells
        run in one such worker unless this process has them already.  False runs ``jobs=1`` in
        this process with the numerics it has (e.g. for methods defined in a notebook, which a
        worker cannot import); the numerics are part of every cell's key either way.
    """
    out = Path(out)
    cache = out / "cells"
    cache.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(cache)  # left by a run killed between writing and renaming a cell
    all_cells = spec.cells() if cells is None else list(cells)
    file_digests = _file_digests(all_cells)
    isolate, numerics = _numerics_plan(pin_numerics, jobs, scheduler)
    keys = [cell_key(cell, spec, file_digests, numerics) for cell in all_cells]
    pending = [(cell, key) for cell, key in zip(all_cells, keys) if not (cache / f"{key}.json").exists()]
    check_datasets(spec.name, [cell for cell, _ in pending])
    reused = len(all_cells) - len(pending)
    commit = source_commit()  # recorded in each cell this run computes (a page names every commit of its cells)
    failures = []
    start = time.perf_counter()

    from tqdm.auto import tqdm  # lazy: tqdm loads when a progress bar is shown

    bar = tqdm(total=len(all_cells), initial=reused, disable=not progress, desc=spec.name, unit="cell", smoothing=0.05)

    def finish(cell, key, result):
        if "error" in result:
            failures.append({"cell": _describe(cell), "error": result["error"], "traceback": result["traceback"]})
        else:
            payload = {"key": key, "cell": _describe(cell), **result, "commit": commit}
            _write_atomically(cache / f"{key}.json", payload)
        bar.update(1)

    try:
        _execute_pending(pending, spec, jobs, isolate, scheduler, finish)
    finally:
        bar.close()

    raw, used, commits = _raw_table(spec, all_cells, keys, cache)
    summary = summarize(raw, ["dataset", "method", *spec.parameter_names(), "metric"])
    return RunResult(spec=spec, raw=raw, summary=summary, computed=len(pending) - len(failures), reused=reused,
                     failures=failures, seconds=time.perf_counter() - start, numerics=used, commits=commits)


def _file_digests(cells: list[Cell]) -> dict:
    """``{file: SHA-256}`` of the datasets read from files (part of their cells' keys); forgets the
    file datasets this process loaded before, which may hold an older content of a file."""
    files = sorted({cell.dataset.file for cell in cells if cell.dataset.file is not None})
    if files:
        _forget_file_datasets()
    return {file: _file_digest(file) for file in files}


def _numerics_plan(pin_numerics: bool, jobs: int, scheduler) -> tuple[bool, str]:
    """``(isolate, numerics)``: whether the cells run in worker processes (several jobs, or pinned
    numerics this process does not have) and the numerics that compute them (part of their keys)."""
    target = target_numerics() if pin_numerics else None
    isolate = scheduler is None and (jobs > 1 or (target is not None and loaded_numerics() != target))
    return isolate, (target or loaded_numerics()) if isolate or scheduler is not None else loaded_numerics()


def _execute_pending(pending: list, spec: ExperimentSpec, jobs: int, isolate: bool, scheduler, finish) -> None:
    """Compute the ``pending`` ``(cell, key)`` pairs on a Dask cluster, in this process or in ``jobs``
    pinned worker processes (``isolate``), and ``finish`` each as it completes (see :func:`run_spec`)."""
    if scheduler is not None:
        _run_on_dask(scheduler, pending, spec, finish)
    elif not isolate or not pending:
        for cell, key in pending:
            finish(cell, key, _execute_safely(cell, spec.seed, spec.metrics))
    else:
        _run_in_workers(pending, spec, jobs, finish)


def _run_in_workers(pending: list, spec: ExperimentSpec, jobs: int, finish) -> None:
    """The pending cells in ``jobs`` spawned worker processes with the pinned numerics."""
    with pinned_environment(), ProcessPoolExecutor(
        max_workers=min(jobs, len(pending)), mp_context=get_context("spawn"), initializer=_ignore_interrupts
    ) as pool:
        # workers start while Ctrl-C is ignored, so they inherit SIGINT ignored (a
        # spawned Python keeps an ignored SIGINT) and only this process handles it
        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main_thread else None
        try:
            futures = {
                pool.submit(_execute_safely, cell, spec.seed, spec.metrics): (cell, key)
                for cell, key in pending
            }
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, previous)
        try:
            for future in as_completed(futures):
                cell, key = futures[future]
                finish(cell, key, future.result())
        except BaseException:
            # cells in flight would otherwise run to the end after Ctrl-C; their results are
            # not cached, so stopping them loses nothing (taken before shutdown, which forgets them)
            in_flight = list((pool._processes or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in in_flight:
                process.terminate()
            raise


def _run_on_dask(scheduler, pending, spec, finish) -> None:
    """Submit every pending cell to a Dask cluster; ``finish`` each as it completes (see :func:`run_spec`)."""
    try:
        import distributed  # lazy: optional extra dpdist[dask]
    except ImportError:  # pragma: no cover - the dask extra is installed in the test environment
        raise InvalidParameterError(
            "Running cells on a Dask cluster needs the 'distributed' package: pip install 'dpdist[dask]'."
        ) from None
    client = scheduler if isinstance(scheduler, distributed.Client) else None
    if client is None:  # an address (run_spec's table)
        try:
            client = distributed.Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as error:
            raise InvalidParameterError(f"Cannot connect to the Dask scheduler {scheduler!r}: {error}") from None
    try:
        futures = {
            client.submit(_execute_safely, cell, spec.seed, spec.metrics, pure=False, key=f"dpdist-cell-{key}"): (cell, key)
            for cell, key in pending
        }
        try:
            for future in distributed.as_completed(futures):
                cell, key = futures[future]
                finish(cell, key, future.result())
        except BaseException:
            client.cancel(list(futures))
            raise
    finally:
        if client is not scheduler:
            client.close()


def _describe(cell: Cell) -> dict:
    return {
        "dataset": cell.dataset.key,
        "method": cell.method.label,
        "params": dict(cell.params),
        "repeat": cell.repeat,
    }


def _raw_table(spec, cells, keys, cache: Path) -> tuple[ResultsTable, dict[str, int], dict[str | None, int]]:
    """One row per cell and metric (a failed cell gets a NaN row for each metric it would have
    given, which :func:`summarize` counts in the ``failed`` column), ``{numerics: cells}`` and
    ``{commit that computed them: cells}`` (None: a cell written before cells recorded their commit)."""
    parameters = spec.parameter_names()
    stored: dict[str, dict] = {}
    numerics: dict[str, int] = {}
    commits: dict[str | None, int] = {}
    for key in keys:
        path = cache / f"{key}.json"
        if path.exists():
            payload = json.loads(path.read_text())
            stored[key] = payload["metrics"]
            used = payload.get("numerics", "not recorded")
            numerics[used] = numerics.get(used, 0) + 1
            commits[payload.get("commit")] = commits.get(payload.get("commit"), 0) + 1
    produced: dict[tuple, list] = {}  # metric keys given by the finished cells of a dataset / method
    for cell, key in zip(cells, keys):
        for group in ((cell.dataset.key, cell.method.label), (cell.dataset.key,)):
            names = produced.setdefault(group, [])
            names.extend(name for name in stored.get(key, ()) if name not in names)
    rows = []
    for cell, key in zip(cells, keys):
        base = {"dataset": cell.dataset.key, "method": cell.method.label}
        params = cell.param_dict
        base.update({name: params.get(name) for name in parameters})
        base["repeat"] = cell.repeat
        metrics = stored[key] if key in stored else dict.fromkeys(_expected_metrics(cell, spec, produced), math.nan)
        for metric, value in metrics.items():
            rows.append({**base, "metric": metric, "value": float(value) if value is not None else math.nan})
    return ResultsTable(rows, ["dataset", "method", *parameters, "repeat", "metric", "value"]), numerics, commits


def _expected_metrics(cell: Cell, spec: ExperimentSpec, produced: dict) -> list[str]:
    """The metric keys of a failed cell: those of the same dataset and method in other cells,
    else those of the dataset, else the spec's metrics of the dataset's kind; limited to the
    method's metrics."""
    names = produced.get((cell.dataset.key, cell.method.label)) or produced.get((cell.dataset.key,))
    if not names:
        try:
            kind = _dataset(cell.dataset).kind
        except Exception:  # the dataset itself is broken: every metric may be the missing one
            kind = None
        names = [metric.key for metric in spec.metrics if kind in (None, metric.kind)]
    only = cell.method.metrics
    if only:  # a key "m.part" comes from a metric "m" that returns a named tuple
        names = [name for name in names if any(name == key or name.startswith(key + ".") for key in only)]
    return names
