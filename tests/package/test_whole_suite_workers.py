"""``uv run pytest`` (the whole suite) runs on pytest-xdist workers; every selection runs in one process (tests/conftest.py)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import LONG_TESTS, pytest_collection_modifyitems, pytest_ignore_collect, runs_the_whole_suite


def _config(*, source=pytest.Config.ArgsSource.TESTPATHS, xdist=True, worker=False, **options):
    option = SimpleNamespace(numprocesses=None, markexpr="", keyword="", collectonly=False, usepdb=False)
    for name, value in options.items():
        setattr(option, name, value)
    config = SimpleNamespace(option=option, args_source=source,
                             pluginmanager=SimpleNamespace(hasplugin=lambda name: xdist and name == "xdist"))
    if worker:
        config.workerinput = {}
    return config


def test_the_readmes_command_is_the_whole_suite():
    assert runs_the_whole_suite(_config())


@pytest.mark.parametrize(
    "config",
    [
        _config(source=pytest.Config.ArgsSource.ARGS),  # a file or a directory named
        _config(markexpr="not slow"),  # the fast loop: budgeted in CPU-seconds
        _config(keyword="epsilon"),
        _config(numprocesses=0),  # -n 0: one process asked for
        _config(numprocesses=3),  # -n 3: the user's count stands
        _config(collectonly=True),
        _config(usepdb=True),
        _config(worker=True),  # a worker never starts workers
        _config(xdist=False),  # -p no:xdist
    ],
    ids=["args", "mark", "keyword", "n0", "n3", "collect-only", "pdb", "worker", "no-xdist"],
)
def test_a_selection_or_a_choice_of_its_own_runs_as_asked(config):
    assert not runs_the_whole_suite(config)


def test_this_run_is_not_turned_into_workers_when_it_is_a_selection(pytestconfig):
    """This very run: a worker of the whole suite, or a selection in one process; never a controller left running."""
    assert not runs_the_whole_suite(pytestconfig)


@pytest.mark.parametrize(("cores", "workers"), [(1, 2), (2, 3), (3, 4), (16, 4)])
def test_the_whole_suite_takes_one_worker_per_core_and_one_more_at_most_four(monkeypatch, cores, workers):
    """A worker waiting for its test's server, node or timeout leaves its core to the extra one (docs/reference/benchmarks/test-suite.md,
    "Test suite time": on 2 cores 717 s with 2 workers, 653 s with 3)."""
    from conftest import pytest_xdist_auto_num_workers

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert pytest_xdist_auto_num_workers(None) == workers
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "1")
    assert pytest_xdist_auto_num_workers(None) == 1


def test_every_test_run_first_is_still_a_test_function_of_its_file():
    root = Path(__file__).resolve().parents[2]
    assert len(LONG_TESTS) >= 10
    for name in LONG_TESTS:
        path, _, function = name.partition("::")
        defined = {node.name for node in ast.walk(ast.parse((root / path).read_text()))
                   if isinstance(node, ast.FunctionDef)}
        assert function in defined, f"{name} is in LONG_TESTS but no longer a test of {path}"


@pytest.mark.parametrize("worker", [True, False])
def test_a_worker_runs_the_long_tests_first_and_the_rest_in_their_order(worker):
    long_one = sorted(LONG_TESTS)[0]
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in
             ("tests/a.py::test_1", f"{long_one}[case-2]", "tests/b.py::test_2", long_one, "tests/a.py::test_3")]
    config = SimpleNamespace(workerinput={}) if worker else SimpleNamespace()
    pytest_collection_modifyitems(config, items)
    order = [item.nodeid for item in items]
    expected = ([f"{long_one}[case-2]", long_one, "tests/a.py::test_1", "tests/b.py::test_2", "tests/a.py::test_3"]
                if worker else ["tests/a.py::test_1", f"{long_one}[case-2]", "tests/b.py::test_2", long_one,
                                "tests/a.py::test_3"])
    assert order == expected


def test_a_long_tests_module_moves_whole_so_its_fixtures_are_set_up_once():
    """A long test's module stays contiguous (its fixtures last while its tests follow one another): its long tests,
    then its other tests, before the next module's; the modules in their collected order, the others after them."""
    long_a, long_b = sorted(LONG_TESTS, key=lambda name: name.partition("::")[0])[:2]
    module_a, module_b = long_a.partition("::")[0], long_b.partition("::")[0]
    assert module_a != module_b, "two long tests of different modules"
    nodeids = (f"{module_b}::test_sibling_b", "tests/a.py::test_1", f"{module_a}::test_sibling_a", long_b,
               f"{module_a}::test_other_a", long_a)
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    pytest_collection_modifyitems(SimpleNamespace(workerinput={}), items)
    assert [item.nodeid for item in items] == [long_b, f"{module_b}::test_sibling_b", long_a, f"{module_a}::test_sibling_a",
                                               f"{module_a}::test_other_a", "tests/a.py::test_1"]


@pytest.mark.parametrize(
    ("markexpr", "head", "ignored"),
    [
        ("not slow", "pytestmark = pytest.mark.slow\n", True),
        ("not  slow", "pytestmark = pytest.mark.slow  # a JVM\n", True),
        ("not slow", "pytestmark = [pytest.mark.slow]\n", None),  # not the one spelling: collected, as before
        ("not slow", "    pytestmark = pytest.mark.slow\n", None),  # not at the top level
        ("not slow", "@pytest.mark.slow\ndef test_one(): ...\n", None),  # one slow test among others
        ("", "pytestmark = pytest.mark.slow\n", None),  # the whole suite
        ("slow", "pytestmark = pytest.mark.slow\n", None),
        ("not slow and not docs", "pytestmark = pytest.mark.slow\n", None),
    ],
)
def test_the_fast_loop_does_not_import_a_module_marked_slow_as_a_whole(tmp_path, markexpr, head, ignored):
    module = tmp_path / "test_module.py"
    module.write_text('"""A module."""\n\nimport pytest\n\n' + head)
    assert pytest_ignore_collect(module, _config(markexpr=markexpr)) is ignored


def test_only_test_modules_are_read_for_the_mark(tmp_path):
    helper = tmp_path / "spark_support.py"
    helper.write_text("pytestmark = pytest.mark.slow\n")
    assert pytest_ignore_collect(helper, _config(markexpr="not slow")) is None
    assert pytest_ignore_collect(tmp_path, _config(markexpr="not slow")) is None


def test_every_module_the_fast_loop_skips_holds_only_slow_tests():
    """The modules the hook leaves out under ``-m "not slow"`` are the ones whose top-level mark is ``slow``: the
    suite's own 16 (a module that stopped being slow as a whole would lose its fast tests from the fast loop)."""
    tests = Path(__file__).resolve().parents[1]
    skipped = [path for path in sorted(tests.rglob("test_*.py")) if pytest_ignore_collect(path, _config(markexpr="not slow"))]
    assert len(skipped) >= 10
    for path in skipped:
        tree = ast.parse(path.read_text())
        marks = [node for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets)]
        assert len(marks) == 1 and ast.unparse(marks[0].value) == "pytest.mark.slow", path
