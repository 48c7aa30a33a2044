"""Running the ``dpdist`` command line in a test: its status and output, and what ``dpdist list`` lists."""

from __future__ import annotations

import functools

import pytest

from dpdist.cli import _main, main


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def listed(capsys) -> list[tuple[str, str]]:
    assert main(["list"]) == 0
    return [tuple(line.split()[:2]) for line in capsys.readouterr().out.splitlines()]


def estimate_text(out: str) -> str:
    """A one-shot estimate's output after its two first lines: a simulation (its truth not private), the guarantee."""
    simulation, guarantee, rest = out.split("\n", 2)
    assert simulation.startswith("simulation: ") and "not private" in simulation and "NOT for publication" in simulation
    assert guarantee.startswith("guarantee: ") and "-LDP" in guarantee
    return rest


#: main's parser of each first word, built once for the tests that run many refusals or answers through ``main``
#: (building it was 1.5-3 of each run's 2-8 ms of CPU): parsing does not change a parser, and the one environment
#: variable read when it is built (DPDIST_SERVER, the default of --server) is not set by those tests
_BUILT_ONCE = functools.cache(_main.build_parser)


@pytest.fixture
def parsers_built_once(monkeypatch):
    """``main`` takes its parser from :data:`_BUILT_ONCE` (a test module imports this fixture and uses it by name)."""
    monkeypatch.setattr(_main, "build_parser", _BUILT_ONCE)
