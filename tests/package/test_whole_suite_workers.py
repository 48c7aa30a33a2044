"""``uv run pytest`` (the whole suite) runs on pytest-xdist workers; every selection runs in one process (tests/conftest.py)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import conftest
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
    defined: dict[str, set[str]] = {}  # a file of several long tests parsed once
    for name in LONG_TESTS:
        path, _, function = name.partition("::")
        if path not in defined:
            defined[path] = {node.name for node in ast.walk(ast.parse((root / path).read_text()))
                             if isinstance(node, ast.FunctionDef)}
        assert function in defined[path], f"{name} is in LONG_TESTS but no longer a test of {path}"


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


def test_the_long_modules_are_dealt_whole_to_the_workers_shares_costliest_first(monkeypatch):
    """Each long module stays contiguous (its fixtures last while its tests follow one another), its long tests first;
    the costliest goes to the first share, the next to the share with the fewest long seconds so far, and each share of
    ``--dist worksteal``'s first hand-out (pytest-xdist's ``check_schedule``: 3 of 6 tests each here) starts with its
    long modules, filled up by the other tests in their order."""
    monkeypatch.setattr(conftest, "LONG_TESTS", {"tests/x.py::test_long": 300.0, "tests/y.py::test_long": 200.0,
                                                "tests/z.py::test_long": 90.0})
    nodeids = ("tests/a.py::test_1", "tests/x.py::test_sibling", "tests/y.py::test_long", "tests/a.py::test_2",
               "tests/x.py::test_long", "tests/z.py::test_long", "tests/a.py::test_3", "tests/a.py::test_4")
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    pytest_collection_modifyitems(SimpleNamespace(workerinput={"workercount": 2}), items)
    assert [item.nodeid for item in items] == [
        "tests/x.py::test_long", "tests/x.py::test_sibling", "tests/a.py::test_1", "tests/a.py::test_2",  # 300 s
        "tests/y.py::test_long", "tests/z.py::test_long", "tests/a.py::test_3", "tests/a.py::test_4",  # 200 + 90 s
    ]


def test_the_modules_of_one_shared_start_are_dealt_to_one_share(monkeypatch, tmp_path):
    """Modules that import tests/spark_support.py (a JVM per pytest process) go to one share, with the long ones: a short
    module among them too, and a module that only names the file does not."""
    for name, text in {"s1.py": "from spark_support import spark_session\n",
                       "s2.py": "def test():\n    from spark_support import spark_session\n",
                       "n.py": 'helper = "spark_support.py"\n'}.items():
        (tmp_path / "tests").mkdir(exist_ok=True)
        (tmp_path / "tests" / name).write_text(text)
    monkeypatch.setattr(conftest, "ROOT", tmp_path)
    monkeypatch.setattr(conftest, "LONG_TESTS", {"tests/x.py::test_long": 300.0, "tests/s1.py::test_long": 200.0})
    nodeids = ("tests/a.py::test_1", "tests/s2.py::test", "tests/x.py::test_long", "tests/n.py::test",
               "tests/s1.py::test_long", "tests/a.py::test_2")
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    pytest_collection_modifyitems(SimpleNamespace(workerinput={"workercount": 2}), items)
    assert [item.nodeid for item in items] == [
        "tests/x.py::test_long", "tests/a.py::test_1", "tests/n.py::test",  # 300 s
        "tests/s2.py::test", "tests/s1.py::test_long", "tests/a.py::test_2",  # 200 s: the shared start's modules
    ]


def test_worksteal_hands_out_the_shares_the_order_is_made_for():
    """The shares :func:`conftest._shares` assumes are the ones pytest-xdist's work-stealing scheduler first sends."""
    from conftest import _shares
    from xdist.scheduler.worksteal import WorkStealingScheduling

    sent: dict[str, list[int]] = {}

    class Node:  # a worker as the scheduler sees one (hashable)
        def __init__(self, index: int) -> None:
            self.gateway, self.shutting_down = SimpleNamespace(id=f"gw{index}"), False

        def send_runtest_some(self, indices) -> None:
            sent.setdefault(self.gateway.id, list(indices))

    nodes = [Node(index) for index in range(3)]
    scheduler = WorkStealingScheduling(SimpleNamespace(getvalue=lambda name: ["3*popen"], option=SimpleNamespace()))
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, [f"tests/a.py::test_{index}" for index in range(3_001)])
    scheduler.schedule()
    assert [len(sent[f"gw{index}"]) for index in range(3)] == _shares(3_001, 3)
    assert sent["gw0"][0] == 0 and sent["gw1"][0] == _shares(3_001, 3)[0]


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
