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


#: tests that take 8 s or more each in the whole suite (docs/reference/benchmarks/test-suite.md, "Test suite time"), run first by every
#: pytest-xdist worker's collection: a long test started last holds the suite's end while the other workers sit idle
#: (longest first: the work-stealing scheduler then fills the end with short tests)
LONG_TESTS = frozenset({
    "tests/package/test_types.py::test_pyright_finds_no_error_in_the_package",
    "tests/package/test_types.py::test_mypy_finds_no_error_in_the_package",
    "tests/audit/test_audit.py::test_no_false_violation_in_200_seeded_audits",
    "tests/clients/test_js_client.py::test_node_test_suite_passes",
    "tests/clients/test_java_client.py::test_the_junit_tests_pass",
    "tests/package/test_release.py::test_the_wheel_installs_with_every_extra_and_its_commands_run",
    "tests/package/test_release.py::test_the_wheel_without_extras_is_the_library_and_command_line",
    "tests/docs/test_design.py::test_a_protocol_added_as_the_walkthrough_says_touches_seven_files_and_works_end_to_end",
    "tests/docs/test_docs.py::test_the_documentation_builds_without_warnings",
    "tests/cli/test_relay.py::test_sigkill_of_relay_and_collector_loses_nothing_and_counts_nothing_twice",
    "tests/cli/test_relay.py::test_dpdist_submit_and_the_node_client_send_through_the_relay",
    "tests/cli/test_relay.py::test_the_participate_page_in_chromium_sends_through_the_relay",
    "tests/cli/test_release.py::test_both_ends_of_the_epsilon_range_are_released",
    "tests/budget/test_session.py::test_365_separate_daily_campaigns_are_charged_as_one_composition",
    "tests/docs/test_audit.py::test_a_dev_environment_row_comes_out_as_saved",
    "tests/test_uncertainty.py::test_bands_of_projected_linear_estimates_cover_at_their_level",
    "tests/local/test_heavy_hitters.py::test_the_standard_errors_match_the_spread_over_repeated_collections",
    "tests/cli/test_basic.py::test_demo_writes_its_tables_and_plots_and_errors_fall_with_epsilon",
    "tests/audit/test_central.py::test_deciles_per_person_pass_the_audit_on_person_neighbours_where_deciles_per_row_are_flagged",
    "tests/clients/test_java_serve.py::test_java_python_and_node_devices_are_counted_once_through_server_kills",
})


def pytest_collection_modifyitems(config, items):
    """On a pytest-xdist worker, the modules of :data:`LONG_TESTS` first, each whole, in their order and with its long
    tests first, the rest in their order (a stable sort: every worker collects the same order, as pytest-xdist requires).

    Whole: pytest tears a module's fixtures down when the next test is another module's, so a long test moved to the
    front alone had its module's fixtures set up twice on a worker, once for it and once for the module's other tests
    further on (tests/cli/test_relay.py's collector, relay and issuer: 5 CPU-s; tests/package/test_release.py's
    ``uv build``: 3 CPU-s)."""
    if hasattr(config, "workerinput"):
        modules = {name.partition("::")[0] for name in LONG_TESTS}
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            first.setdefault(item.nodeid.partition("::")[0], index)

        def place(item) -> tuple:
            module = item.nodeid.partition("::")[0]
            if module not in modules:
                return (1, 0, False)
            return (0, first[module], item.nodeid.partition("[")[0] not in LONG_TESTS)

        items.sort(key=place)


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
    registers after the plugin: first among tryfirst)."""
    if runs_the_whole_suite(config):
        config.option.numprocesses = "auto"
        config.option.dist = "worksteal"


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
