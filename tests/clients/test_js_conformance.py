"""The JavaScript client against Python, protocol by protocol, over the registry (no list of protocols).

For every registered protocol and each of its conformance examples (``tests/conformance/examples_*.py``),
node (``tests/js_conformance_driver.mjs``, one run for all) either refuses the config, naming the
protocol -- the client does not implement it -- or, for a protocol of the client's registry (its
modules, ``clients/js/src/protocols``):

- reads the config back exactly as Python writes it, and accepts the collector's client view (its
  design constants are the client's own derivation);
- states the exact law of every input's report as Python's ``channel()`` does (to 1e-12), and that
  law is epsilon-LDP at the epsilon Python's guarantee states;
- samples that law: ``SAMPLES`` reports of each input (a seeded source), read by Python's report
  format with nothing rejected, follow Python's channel row (Pearson chi-square at level
  ``ALPHA / inputs``, as the conformance kit's sampling check);
- the protocol's own module (``dpdist-client/<name>``) privatizes as the main entry point, and its
  random draws are the same whatever its coins and the value.

So a protocol added to Python and to the client (one module each, design.md "Adding a protocol") is
compared here with nothing to list, and one added to Python only is refused by the client.  The
hand-picked regimes of ``clients/js/test/fixtures/python.json`` (constants at nice epsilons, record
protocols' channels) are the node tests' own.
"""

from __future__ import annotations

import pytest

from client_conformance import check_outcome, run_driver, selected_requests
from conformance._examples import CASES, case_id, make
from dpdist import local
from js_support import DRIVER, ROOT, js_implements, js_registry, node_path

pytestmark = pytest.mark.slow  # one node run over every example (about 20 CPU-s)


@pytest.fixture(scope="module")
def node_results(request) -> dict:
    """The driver's result for every conformance example the session runs, by case id (one node process, shared with
    tests/clients/test_java_conformance.py's comparison of the two clients' records).

    Only the selected examples go to node (``-k krr`` runs one protocol's, as tests/docs/test_design.py
    does, not all of them); each keeps its seed (its place in ``CASES``).
    """
    chosen, requests = selected_requests(request, test_the_client_randomizes_as_python_or_refuses)
    results = run_driver([node_path(), str(DRIVER), "cases"], requests, ROOT)
    return {case_id(case): (spec, outcome) for (_, case), spec, outcome in zip(chosen, requests, results, strict=True)}


def test_the_client_implements_only_registered_protocols():
    registry = js_registry()
    assert set(registry["supported"]) <= set(local.available())
    assert set(registry["attributes"]) <= set(registry["supported"])
    assert {"grr", "sw", "spl"} <= set(registry["supported"])  # not vacuous


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_client_randomizes_as_python_or_refuses(case, node_results, tmp_path):
    protocol = make(case)
    spec, outcome = node_results[case_id(case)]
    check_outcome(protocol, spec, outcome, js_implements(protocol), js_registry()["supported"], "dpdist-client/<name>", tmp_path)
