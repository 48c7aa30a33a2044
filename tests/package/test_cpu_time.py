"""tests/cpu_time.py shows the slowest tests in CPU-seconds and names the fast ones over their budget."""

from __future__ import annotations

import time

pytest_plugins = ["pytester"]

#: the plugin alone: an inner session that loads no other plugin is cheap
ALONE = ("-p", "no:xdist", "-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:cacheprovider", "-p", "cpu_time")

BUSY_AND_IDLE = """
import time

import pytest


def test_busy():
    end = time.process_time() + 0.08
    while time.process_time() < end:
        pass


def test_idle():
    time.sleep(0.08)  # wall time, no CPU


@pytest.mark.slow
def test_left_out():
    pass
"""


def test_the_slowest_tests_are_ranked_by_cpu_and_fast_ones_over_budget_are_named(pytester):
    pytester.makeini('[pytest]\nmarkers =\n    slow: end-to-end\n')
    pytester.makepyfile(test_sample=BUSY_AND_IDLE)
    result = pytester.runpytest_inprocess(*ALONE, "-m", "not slow", "--cpu-durations=2", "--cpu-budget-per-test=0.05")
    result.assert_outcomes(passed=2, deselected=1)
    lines = result.outlines
    head = lines.index(next(line for line in lines if "slowest 2 tests in CPU-seconds" in line))
    assert "this session:" in lines[head + 1]
    # the busy test first, the idle one (0.08 s of wall time, next to no CPU) second
    assert lines[head + 2].endswith("test_sample.py::test_busy") and lines[head + 3].endswith("test_sample.py::test_idle")
    # os.times() counts clock ticks (10 ms): 0.08 s of CPU reads 0.07-0.09 (0.08 s, not 0.15: the three busy runs of
    # this file are the fast loop's CPU too)
    assert float(lines[head + 2].split("s")[0]) >= 0.06 and float(lines[head + 3].split("s")[0]) < 0.03
    over = lines.index("1 fast test(s) over 0.05 CPU-s each: mark end-to-end tests slow, shrink unit tests "
                       "(docs/reference/benchmarks/test-suite.md)")
    assert lines[over + 1].endswith("test_sample.py::test_busy")


def test_the_report_is_off_at_zero_and_no_budget_is_checked_outside_the_fast_loop(pytester):
    pytester.makeini('[pytest]\nmarkers =\n    slow: end-to-end\n')
    pytester.makepyfile(test_sample=BUSY_AND_IDLE)
    quiet = pytester.runpytest_inprocess(*ALONE, "--cpu-durations=0")
    quiet.assert_outcomes(passed=3)
    assert not any("CPU-seconds" in line for line in quiet.outlines)
    full = pytester.runpytest_inprocess(*ALONE, "--cpu-budget-per-test=0.05")
    assert any("slowest 3 tests in CPU-seconds" in line for line in full.outlines)
    assert not any("over 0.05 CPU-s" in line for line in full.outlines)


def test_a_busy_loop_is_what_process_time_counts():
    # the plugin's clock: CPU of this process (and of reaped children), not the wall
    from cpu_time import _cpu

    start = _cpu()
    time.sleep(0.05)
    assert _cpu() - start < 0.04
