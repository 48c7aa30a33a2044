"""Running the ``dpdist`` command line in a test: its status and output, and what ``dpdist list`` lists."""

from __future__ import annotations


from dpdist.cli import main


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
