"""Fixtures shared by several test files."""

from __future__ import annotations

import gc
import itertools
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path

from bytecode_cache import keep_bytecode
from pinned_numerics import pin_numerics

# before the suite imports its heavy modules: this process and every process it starts keep their compiled bytecode
# (an environment with PYTHONDONTWRITEBYTECODE=1 compiles every imported module again in every server, command line
# and worker the tests start: tests/bytecode_cache.py)
keep_bytecode()

# before anything imports numpy: every test computes the same numbers on any AVX2 CPU, and run_spec
# computes jobs=1 cells in this process (a worker would not see the methods a test registers) with
# the numbers of its pinned workers
pin_numerics()

# before anything imports hypothesis: its entry-point plugins stay unloaded; the one installed is trio's (trio comes
# with selenium), and loading it imported trio, 0.3-0.4 CPU-s, in every pytest process whose tests use hypothesis
# (with -p no:anyio in pyproject.toml, no fast test imports trio)
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")

# argparse looks up each of its words through gettext on every parser built (the in-process command lines of the tests
# build ~22,000): under LANG=C.UTF-8 each lookup expands the locale's names and looks for catalogs, 65 us (with LANGUAGE=C,
# 4 us: 1.3 CPU-s of the fast loop).  dpdist ships no translation and the tests read argparse's English messages; only
# gettext reads LANGUAGE (the locale of numbers and dates stays LANG's); set for this process and those it starts.
os.environ.setdefault("LANGUAGE", "C")

import pytest  # noqa: E402 - after keep_bytecode and pin_numerics (above)
from session_reaper import start_reaper  # noqa: E402

# the slowest tests in CPU-seconds at the end of every run (tests/cpu_time.py)
pytest_plugins = ["cpu_time"]


def pytest_configure(config):
    """In the run's first process (not a pytest-xdist worker): what the tests start dies with the run, also when the run
    is killed (tests/session_reaper.py)."""
    if not hasattr(config, "workerinput"):
        start_reaper()


@pytest.fixture
def no_network(monkeypatch):
    """Fail any attempt to open a network connection (datasets must come from packages or the repo)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a dataset tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


#: the cyclic garbage collector's first threshold once the tests run (Python's default: 700 allocations)
GC_THRESHOLD = 7_000


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collect with the cyclic garbage collector off, then freeze what collection left (``gc.freeze``) and run the
    tests with a 10x larger first threshold.

    Collection imports ~2,700 modules and builds ~7,500 items: 370,000 objects the collector would walk again in each
    of its full collections for the rest of the session (15 of them in the fast loop, ~0.25 s each), besides the
    0.7 CPU-s it spent on them during collection.  Frozen objects are never walked nor freed (the garbage among them,
    ~30 MB, lives until the process ends); the larger threshold makes the young collections 10x rarer, so the full
    ones are too (the fast loop: 5.0 CPU-s of collector -> 2.3).  Objects are still freed by their reference counts
    as they were, and cycles by the collector, later."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
        gc.enable()


#: the variable that names dpdist's cache directory, and the directory under which each test gets its own
CACHE_VARIABLE = "DPDIST_CACHE_DIR"
_cache_root: list[str] = []
_caches = itertools.count()


#: the tests of 50 s or more of wall time (their parameters together) in a whole-suite run on 3 workers at load 11
#: (docs/reference/benchmarks/test-suite.md, "The whole suite"), with those seconds: weights of one against another, dealt
#: to the pytest-xdist workers' first shares so that each worker starts with its part of them.  A test made cheaper since
#: has its seconds scaled by its CPU-seconds after over before, measured apart (the node suite, the node devices through
#: the relay: the JavaScript client's masking patterns; the claims library's checks: their rows' statistics)
LONG_TESTS: dict[str, float] = {
    "tests/package/test_benchmarks.py::test_benchmark_runs_at_its_smallest_case": 590,
    "tests/experiments/test_pagecheck.py::test_the_stratified_sample_recomputes_to_the_recorded_values": 556,
    "tests/clients/test_js_client.py::test_node_test_suite_passes": 425,
    "tests/audit/test_audit.py::test_no_false_violation_in_200_seeded_audits": 405,
    "tests/package/test_release.py::test_the_wheel_installs_with_every_extra_and_its_commands_run": 396,
    "tests/package/test_types.py::test_pyright_finds_no_error_in_the_package": 330,
    "tests/package/test_types.py::test_mypy_finds_no_error_in_the_package": 268,
    "tests/docs/test_audit.py::test_a_dev_environment_row_comes_out_as_saved": 258,
    "tests/clients/test_java_client.py::test_the_junit_tests_pass": 250,
    "tests/test_uncertainty.py::test_bands_of_projected_linear_estimates_cover_at_their_level": 229,
    "tests/audit/test_central.py::test_deciles_per_person_pass_the_audit_on_person_neighbours_where_deciles_per_row_are_flagged": 219,
    "tests/cli/test_release.py::test_both_ends_of_the_epsilon_range_are_released": 207,
    "tests/docs/test_docs.py::test_the_documentation_builds_without_warnings": 187,
    "tests/queries/test_scale.py::test_a_spark_frame_releases_what_pandas_releases_for_the_same_seed": 177,
    "tests/cli/test_relay.py::test_dpdist_submit_and_the_node_client_send_through_the_relay": 175,
    "tests/docs/test_design.py::test_a_protocol_added_as_the_walkthrough_says_touches_seven_files_and_works_end_to_end": 150,
    "tests/conformance/test_conformance.py::test_protocol_conforms": 141,
    "tests/package/test_release.py::test_the_wheel_without_extras_is_the_library_and_command_line": 125,
    "tests/experiments/test_blas.py::test_a_run_computes_its_cells_with_the_pinned_numerics_whatever_the_cpu_picks": 122,
    "tests/test_documents.py::test_every_field_dropped_retyped_or_edited_is_refused_by_name_or_restated": 121,
    "tests/serve/test_serve_crash.py::test_sigkill_under_one_report_per_request_loses_no_acknowledged_report": 114,
    "tests/cli/test_basic.py::test_demo_writes_its_tables_and_plots_and_errors_fall_with_epsilon": 109,
    "tests/cli/test_relay.py::test_sigkill_of_relay_and_collector_loses_nothing_and_counts_nothing_twice": 103,
    "tests/local/frequency/test_rue.py::test_empirical_variance_matches_the_analytic_mean_mse": 100,
    "tests/docs/test_doc_snippets.py::test_snippets_run_as_written": 100,
    "tests/clients/test_java_conformance.py::test_the_client_randomizes_as_python_or_refuses": 92,
    "tests/clients/test_java_conformance.py::test_the_java_client_draws_as_the_javascript_client": 89,
    "tests/audit/test_floats.py::test_correct_counts_are_never_flagged_at_the_central_defaults": 82,
    "tests/serve/test_serve_crash.py::test_submitters_finish_on_their_first_run_across_restarts": 80,
    "tests/cli/test_serve.py::test_cli_campaign_and_submit": 73,
    "tests/docs/test_tutorials.py::test_the_simulated_collection_runs_as_written": 73,
    "tests/distributed/test_spark.py::test_simulate_equals_one_process_and_dask": 73,
    "tests/wire/test_binding.py::test_tokens_a_lying_relay_moves_onto_its_own_reports_are_refused_and_the_devices_reports_count_once": 71,
    "tests/conformance/test_memory_limit.py::test_a_protocol_at_the_limit_works_within_it": 70,
    "tests/docs/test_tutorials.py::test_the_anonymous_campaign_runs_as_written": 70,
    "tests/docs/test_docs.py::test_the_site_reads_in_a_browser_at_desktop_and_phone_widths": 69,
    "tests/docs/test_tutorials.py::test_the_first_campaign_runs_as_written": 67,
    "tests/cli/test_relay.py::test_java_reports_through_the_relay_lose_nothing_when_the_relay_is_sigkilled": 66,
    "tests/distributed/test_spark.py::test_simulate_a_dataframe_column_block_per_partition": 65,
    "tests/local/test_heavy_hitters.py::test_the_standard_errors_match_the_spread_over_repeated_collections": 62,
    "tests/serve/test_serve_crash.py::test_sigkill_loses_nothing_and_counts_nothing_twice": 62,
    "tests/serve/test_serve_abuse.py::test_the_poisoning_tests_p_values_are_valid_on_the_boundary_of_the_honest_region": 61,
    "tests/experiments/checks/test_checks.py::test_lowest_of_and_all_of_on_ties_over_rivals_and_settings": 60,
    "tests/serve/test_serve_abuse.py::test_the_limits_and_bound_reports_guides_commands_run": 59,
    "tests/test_uncertainty.py::test_bands_of_smoothed_em_are_conservative": 56,
    "tests/reproductions/sw_ems/test_spec.py::test_tiny_run_writes_report_figures_tables_and_evaluates_every_claim": 55,
    "tests/estimates/test_coverage.py::test_hh_simultaneous_band_covers_real_spiky_data": 54,
    "tests/serve/test_multi_deploy.py::test_a_service_campaign_estimates_what_the_reports_give_locally": 53,
    "tests/serve/test_operations.py::test_a_postgresql_outage_is_503_a_few_log_lines_and_heals_by_itself": 52,
    "tests/io/test_shuffle.py::test_the_shuffle_draws_every_order_equally_often": 52,
    "tests/clients/test_java_serve.py::test_java_python_and_node_devices_are_counted_once_through_server_kills": 51,
    "tests/cli/test_relay.py::test_dpdist_submit_and_the_node_client_send_rfc9458_requests_through_the_relay": 50,
}


def _shares(count: int, workers: int) -> list[int]:
    """The sizes of the consecutive shares of a collection of ``count`` tests that ``--dist worksteal`` first hands its
    ``workers`` idle workers: each the tests left over the workers left (pytest-xdist's ``check_schedule``)."""
    sizes = []
    for left in range(workers, 0, -1):
        sizes.append((count - sum(sizes)) // left)
    return sizes


#: what a test module's source says when its tests share a start that each pytest process makes once: the modules that
#: say it are dealt together, to one share, so that one worker makes it (tests/spark_support.py's SparkSession: a JVM of
#: 17 CPU-s to start and warm up, which each worker running a Spark test started on its own)
SHARED_STARTS = re.compile(r"^\s*(?:from spark_support import|import spark_support)\b", re.MULTILINE)


#: the checkout, which the collection's module paths are relative to
ROOT = Path(__file__).resolve().parents[1]


def _units(modules) -> dict[str, list[str]]:
    """The modules of the collection in the units dealt whole: each module alone, but those whose source names a shared
    start (:data:`SHARED_STARTS`), together under its name."""
    units: dict[str, list[str]] = {}
    for module in modules:
        path = ROOT / module
        shared = SHARED_STARTS.search(path.read_text(errors="replace")) if path.is_file() else None
        units.setdefault(shared.group(0).split()[1] if shared else module, []).append(module)
    return units


def pytest_collection_modifyitems(config, items):
    """On a pytest-xdist worker, the modules of :data:`LONG_TESTS` dealt to the workers' first shares, each whole (with
    the modules of its shared start, :func:`_units`), the costliest first to the share with the fewest long seconds so
    far; each share starts with its long modules (each with its long tests first), then the other tests in their order
    fill it (a stable order: every worker collects the same one, as pytest-xdist requires).

    ``--dist worksteal`` hands each worker a consecutive share of the collection (:func:`_shares`), then moves tests
    from the end of the longest queue to a worker that ran out: a long test stays where its share put it, and the end of
    the run is made of short ones.  All the long modules at the front, as they were, fell in the first worker's share,
    which ran them one after another while the other workers took its short tests.  Whole: pytest tears a module's
    fixtures down when the next test is another module's, so a module split over two places set its fixtures up twice
    (tests/cli/test_relay.py's collector, relay and issuer: 5 CPU-s; tests/package/test_release.py's ``uv build``: 3)."""
    if not hasattr(config, "workerinput"):
        return
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.partition("::")[0], []).append(item)
    units = _units(modules)
    cost = {unit: sum(seconds for name, seconds in LONG_TESTS.items() if name.partition("::")[0] in members)
            for unit, members in units.items()}
    workers = max(1, int(config.workerinput.get("workercount", 1)))
    dealt: list[list[str]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for unit in sorted((unit for unit in units if cost[unit] or len(units[unit]) > 1), key=lambda unit: -cost[unit]):
        share = load.index(min(load))
        dealt[share] += units[unit]
        load[share] += cost[unit]
    kept = {module for share in dealt for module in share}
    rest = [item for item in items if item.nodeid.partition("::")[0] not in kept]
    ordered: list = []
    for share, size in zip(dealt, _shares(len(items), workers)):
        head = [item for module in share for item in
                sorted(modules[module], key=lambda item: item.nodeid.partition("[")[0] not in LONG_TESTS)]
        ordered += head + rest[: max(0, size - len(head))]
        del rest[: max(0, size - len(head))]
    items[:] = ordered + rest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test's own cache directory, from before its fixtures to after its teardown: `dpdist submit --column` keeps
    its journals there (never in ~/.cache).

    Named, not made: dpdist makes its cache directories when it first writes (a directory per test cost a mkdir
    and a symlink in each of 5,000 tests).  A hook, not an autouse fixture with ``monkeypatch``: the fixture's
    setup and teardown cost 0.15 ms in each of the fast loop's 6,700 tests (1 CPU-s; a test's own ``monkeypatch``
    of the variable is undone at its teardown, before this restores the value of the session)."""
    if not _cache_root:
        _cache_root.append(tempfile.mkdtemp(prefix="dpdist-test-cache-"))
        item.config.add_cleanup(lambda: shutil.rmtree(_cache_root[0], ignore_errors=True))
    previous = os.environ.get(CACHE_VARIABLE)
    os.environ[CACHE_VARIABLE] = os.path.join(_cache_root[0], str(next(_caches)))
    try:
        return (yield)
    finally:
        if previous is None:
            os.environ.pop(CACHE_VARIABLE, None)
        else:
            os.environ[CACHE_VARIABLE] = previous


#: the service's group-commit threads (dpdist.serve._committer) alive when the running test started
_COMMITTERS_BEFORE: list = []


def _group_committers() -> list:
    return [thread for thread in threading.enumerate() if thread.name == "dpdist-group-commit"]


def pytest_runtest_logstart(nodeid, location):
    _COMMITTERS_BEFORE[:] = _group_committers()


def pytest_runtest_logfinish(nodeid, location):
    """A service's group committer runs until its app's lifespan ends; an app asked through Starlette's TestClient
    without ``with`` (no lifespan) left it running for the rest of the session, waking 20 times a second when idle
    (~170,000 wake-ups and about 5 CPU-s in the fast loop, counted against whichever test ran).  The committers a test
    started are stopped when it ends, after its teardown, as the lifespan's end stops them (what waits is committed,
    the log folded); a writer stopped starts again with its next item (dpdist._io._single_writer)."""
    for thread in _group_committers():
        if thread not in _COMMITTERS_BEFORE:
            writer = getattr(getattr(thread, "_target", None), "__self__", None)  # SingleWriter._run, bound
            if writer is not None:
                writer.stop()


def pytest_sessionfinish(session):
    """The servers' zygote (tests/server_zygote.py), if a test started it, ends and is reaped before the CPU-seconds of
    the session are summed (tests/cpu_time.py), so that its imports count in them."""
    zygote = sys.modules.get("server_zygote")
    if zygote is not None:
        zygote.end()


#: a test module marked slow as a whole: a line ``pytestmark = pytest.mark.slow`` (and a comment) at its top level
_WHOLLY_SLOW = re.compile(rb"^pytestmark = pytest\.mark\.slow( *#.*)?$", re.MULTILINE)


def pytest_ignore_collect(collection_path, config):
    """Under ``-m "not slow"``, a test module marked slow as a whole is not imported: each of its tests would be
    deselected, and importing it loaded what only its tests use (Spark, Dask, Arrow, browsers' drivers: 1-2 CPU-s of
    the fast loop, more with cold bytecode).  Any other selection collects it as before."""
    if not (collection_path.name.startswith("test_") and collection_path.suffix == ".py"):
        return None
    if (config.option.markexpr or "").replace(" ", "") != "notslow":
        return None
    return True if _WHOLLY_SLOW.search(collection_path.read_bytes()) else None


def runs_the_whole_suite(config) -> bool:
    """Whether this run is ``uv run pytest`` as the README and CI give it: the configured test paths, no ``-m``/``-k``
    selection, no ``-n`` of its own, not a pytest-xdist worker, not collection only, not under ``--pdb``."""
    option = config.option
    return (
        not hasattr(config, "workerinput")
        and getattr(option, "numprocesses", None) is None  # no -n given (None also when pytest-xdist is not loaded)
        and config.pluginmanager.hasplugin("xdist")
        and config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and not option.markexpr
        and not option.keyword
        and not option.collectonly
        and not option.usepdb
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The whole suite runs on pytest-xdist workers, one per core and one more (at most 4; ``-n 0`` for one
    process): its ~1,000 CPU-seconds need both cores of a 2-core machine busy to finish within the ~10 minutes the
    project sets, and a worker waiting for its test's server, node or timeout leaves its core idle unless a third
    worker takes it (docs/reference/benchmarks/test-suite.md, "Test suite time": 717 s with 2 workers, 653 s with 3).  A selection (a
    file, ``-m "not slow"``, ``-k``) runs in this one process: the fast loop is budgeted in CPU-seconds, which a
    second worker's collection only adds to.  Called before pytest-xdist's own ``pytest_cmdline_main`` (a conftest
    registers after the plugin: first among tryfirst).

    A run in one process times its tests out with SIGALRM (pytest-timeout's ``signal`` method: a timer set and cleared
    per test) unless a method is given: the ``thread`` method of pyproject.toml, which pytest-xdist's workers keep so
    that a test hung in C code still ends its worker, starts and joins a timer thread per test, 0.2 ms each (2.5 CPU-s of the
    fast loop's ~12,000 tests)."""
    if runs_the_whole_suite(config):
        config.option.numprocesses = "auto"
        config.option.dist = "worksteal"
    elif (not hasattr(config, "workerinput") and not getattr(config.option, "numprocesses", None)
          and getattr(config.option, "timeout_method", "") is None):
        config.option.timeout_method = "signal"


def pytest_xdist_auto_num_workers(config):
    """Workers of ``uv run pytest -n auto``: one per core this process may use and one more, at most 4 (the servers,
    PostgreSQL clusters and browsers of the end-to-end tests run beside them; the extra worker fills the time a
    worker spends waiting for them); PYTEST_XDIST_AUTO_NUM_WORKERS wins."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores + 1, 4))


@pytest.fixture(scope="session", autouse=True)
def _no_estimator_process_outlives_the_session():
    """Stop the estimator process in-process apps started (one per process, shared by every app of the process:
    ``dpdist.serve._estimate_cache``; 1.7 CPU-s to start, so it is shared like a session's server) when the session
    ends, also after failures: an app served by a ``TestClient`` without its lifespan never stops it, and the child
    outlived the tests (the fast loop ended with "subprocess ... is still running" and unclosed pipes)."""
    yield
    module = sys.modules.get("dpdist.serve._estimate_cache")
    if module is not None:
        module.stop_estimator()
