"""A pytest plugin that shows where the suite spends CPU: the slowest tests in CPU-seconds, not wall seconds.

The fast loop (``uv run pytest -m "not slow"``) has a budget of 2 CPU-minutes on 2 cores (docs/reference/benchmarks/test-suite.md,
"The test suite").  Wall durations (``--durations``) move 2-5x with the machine's load; CPU-seconds move much less
(10-15 % between load 0.5 and 5 on 2 shared cores), so the budget and its drift are read in CPU-seconds, with the
load beside them.  Each test's figure is the user + system time of the pytest process
*and of the children it reaped* (servers, CLI subprocesses, node) over its setup, call and teardown, so a module
fixture's start is charged to the first test that uses it and its stop to the last.

At the end of a run the plugin prints the session's CPU-seconds (collection and imports included) and the
``--cpu-durations`` (default 20) slowest tests; under ``-m "not slow"`` it also names every test over
``--cpu-budget-per-test`` CPU-seconds (default 2): an end-to-end test to mark ``slow`` or a unit test to shrink.
``--cpu-durations=0`` turns the report off; ``--cpu-durations-json=PATH`` writes every test's figure.  Works with
pytest-xdist (each worker measures its own tests and sends the figure with the report; the controller prints).
"""

from __future__ import annotations

import json
import os

import pytest


def _cpu() -> float:
    """User + system seconds of this process and of every child it has reaped so far (POSIX ``times(2)``)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cpu-time", "CPU-seconds per test (tests/cpu_time.py)")
    group.addoption(
        "--cpu-durations",
        type=int,
        default=20,
        metavar="N",
        help="show the N slowest tests in CPU-seconds (process + reaped children); 0 turns the report off",
    )
    group.addoption(
        "--cpu-budget-per-test",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help='under -m "not slow", name every test over this many CPU-seconds (default 2)',
    )
    group.addoption("--cpu-durations-json", default=None, metavar="PATH", help="write every test's CPU-seconds")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_CPUTime(config), "dpdist-cpu-time")


class _CPUTime:
    """The measurements of one session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.per_test: dict[str, float] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        item.stash[_START] = _cpu()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        if call.when == "teardown" and _START in item.stash:
            # setup + call + teardown; a float attribute survives pytest-xdist's report transport
            outcome.get_result().cpu_seconds = _cpu() - item.stash[_START]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        seconds = getattr(report, "cpu_seconds", None)
        if report.when == "teardown" and seconds is not None:
            self.per_test[report.nodeid] = float(seconds)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        config, per_test = self.config, self.per_test
        path = config.getoption("--cpu-durations-json")
        if path and per_test:
            with open(path, "w") as handle:
                json.dump(per_test, handle, indent=0)
        count = config.getoption("--cpu-durations")
        if count <= 0 or not per_test:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", f"slowest {min(count, len(per_test))} tests in CPU-seconds")
        write(
            f"this session: {_cpu():.1f} CPU-s in this process and its reaped children since it started "
            f"({sum(per_test.values()):.1f} inside {len(per_test)} tests; the rest is start-up, collection and imports)"
        )
        for nodeid, seconds in sorted(per_test.items(), key=lambda kv: -kv[1])[:count]:
            write(f"{seconds:7.2f}s  {nodeid}")
        if (config.getoption("-m") or "").replace(" ", "") == "notslow":
            budget = config.getoption("--cpu-budget-per-test")
            over = sorted(((n, s) for n, s in per_test.items() if s > budget), key=lambda kv: -kv[1])
            if over:
                write(
                    f"{len(over)} fast test(s) over {budget:g} CPU-s each: mark end-to-end tests slow, shrink "
                    "unit tests (docs/reference/benchmarks/test-suite.md)"
                )
                for nodeid, seconds in over:
                    write(f"{seconds:7.2f}s  {nodeid}")


_START = pytest.StashKey[float]()
