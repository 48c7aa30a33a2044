"""The Java client against Python and against the JavaScript client, protocol by protocol, over the registry.

For every registered protocol and each of its conformance examples (``tests/conformance/examples_*.py``), the Java
client (``tests/JavaConformanceDriver.java``, one JVM for all) either refuses the config, naming the protocol -- it does
not implement it -- or, for a protocol of its registry (its protocol classes, ``clients/java/src/main/java/org/dpdist/
client/protocols``), passes the checks the JavaScript client passes (``client_conformance.check_outcome``): the config
read back exactly as Python writes it, the collector's client view accepted, the exact law of every input's report equal
to Python's ``channel()`` (to 1e-12) and epsilon-LDP at Python's epsilon, ``SAMPLES`` seeded reports of each input read
by Python with nothing rejected and following Python's channel row (chi-square), the protocol's own ``EntryPoint``
privatizing as ``DpDist``, draws that do not depend on the coins or the value, and a record that is byte for byte
what Python's ``io.encode_record`` writes of its reports.

And the two device clients draw alike: given the same seeded word stream (xoshiro128**, the same in both drivers),
the Java client's record of every example both implement is byte for byte the JavaScript client's: the same draws
(rejection sampling, exact Bernoulli, 53-bit uniforms) consumed in the same order, the same reports, the same header.
"""

from __future__ import annotations

import base64

import pytest

from client_conformance import check_outcome, run_driver, selected_requests
from conformance._examples import CASES, case_id, make
from dpdist import io, local
from java_support import ROOT, classpath, java_implements, java_registry, java_tools
from js_support import DRIVER as JS_DRIVER
from js_support import js_implements, node_path

pytestmark = pytest.mark.slow  # one JVM over every example, and node over the same examples


def _java_command() -> list[str]:
    _, java = java_tools()
    return [java, "-cp", classpath(), "JavaConformanceDriver", "cases"]


@pytest.fixture(scope="module")
def java_results(request) -> dict:
    """The Java driver's result for every conformance example the session runs, by case id (one JVM)."""
    chosen, requests = selected_requests(request, test_the_client_randomizes_as_python_or_refuses)
    results = run_driver(_java_command(), requests, ROOT)
    return {case_id(case): (spec, outcome) for (_, case), spec, outcome in zip(chosen, requests, results, strict=True)}


@pytest.fixture(scope="module")
def both_results(request) -> dict:
    """Both drivers' results for the examples the comparison runs, by case id (the node run shared with
    tests/clients/test_js_conformance.py when the session selects the same examples)."""
    chosen, requests = selected_requests(request, test_the_java_client_draws_as_the_javascript_client)
    java = run_driver(_java_command(), requests, ROOT)
    node = run_driver([node_path(), str(JS_DRIVER), "cases"], requests, ROOT)
    return {case_id(case): (outcome, other) for (_, case), outcome, other in zip(chosen, java, node, strict=True)}


def test_the_client_implements_only_registered_protocols():
    registry = java_registry()
    assert set(registry["supported"]) <= set(local.available())
    assert set(registry["attributes"]) <= set(registry["supported"])
    assert {"grr", "sw"} <= set(registry["supported"])  # not vacuous


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_client_randomizes_as_python_or_refuses(case, java_results, tmp_path):
    protocol = make(case)
    spec, outcome = java_results[case_id(case)]
    check_outcome(protocol, spec, outcome, java_implements(protocol), java_registry()["supported"], "EntryPoint.of", tmp_path)
    if java_implements(protocol):  # the record is byte for byte what Python's writer makes of its reports
        record = base64.b64decode(outcome["record"])
        path = tmp_path / "again.bin"
        path.write_bytes(record)
        assert io.encode_record(protocol, io.read_reports(path, protocol).reports) == record


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_java_client_draws_as_the_javascript_client(case, both_results):
    protocol = make(case)
    java, node = both_results[case_id(case)]
    assert java_implements(protocol) == js_implements(protocol), "the two device clients implement different protocols"
    if not java_implements(protocol):
        return
    assert java["config"] == node["config"]
    assert java["record"] == node["record"], "the same words give the Java client other reports (or another header)"
