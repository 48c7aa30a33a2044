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

import base64
import json
import subprocess

import numpy as np
import pytest

from conformance._examples import CASES, case_id, make
from dpdist import io, local
from dpdist.testing import ALPHA, channel_inputs, chi_square_pvalue
from js_support import DRIVER, ROOT, js_implements, js_registry, node_path

SAMPLES = 20_000  # reports of each input (the exact law is compared to 1e-12; a GRR keeping 5% too often fails here)
SLACK = 1e-9  # relative rounding allowed in the epsilon bound of the JS law (the kit's exact check allows 1e-9)

pytestmark = pytest.mark.slow  # one node run over every example (about 20 CPU-s)


def _as_json(protocol, inputs: np.ndarray) -> list:
    """The inputs as JSON: a key-value protocol's sets (rows NaN where a key is not held) as lists of [key, value]."""
    if protocol.tags.kind != "key_value":
        return inputs.tolist()
    return [[[int(key), float(row[key])] for key in np.flatnonzero(~np.isnan(row))] for row in inputs]


def _case(index: int, name: str, params: dict) -> dict:
    protocol = local.make(name, **params)
    inputs = channel_inputs(protocol)
    return {
        "config": protocol.config(),
        "view": protocol.client_view() if js_implements(protocol) else None,
        "inputs": _as_json(protocol, inputs),
        "samples": SAMPLES,
        "seed": 7 + index,
    }


@pytest.fixture(scope="module")
def node_results(request, tmp_path_factory) -> dict:
    """The driver's result for every conformance example the session runs, by case id (one node process).

    Only the selected examples go to node (``-k krr`` runs one protocol's, as tests/docs/test_design.py
    does, not all of them); each keeps its seed (its place in ``CASES``).
    """
    selected = {item.callspec.id for item in request.session.items
                if getattr(item, "function", None) is test_the_client_randomizes_as_python_or_refuses}
    chosen = [(index, case) for index, case in enumerate(CASES) if case_id(case) in selected]
    cases = [_case(index, name, params) for index, (name, params) in chosen]
    path = tmp_path_factory.mktemp("js") / "cases.json"
    path.write_text(json.dumps(cases))
    result = subprocess.run([node_path(), str(DRIVER), "cases", str(path)], capture_output=True, text=True,
                            timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    results = json.loads(result.stdout)
    return {case_id(case): (spec, outcome) for (_, case), spec, outcome in zip(chosen, cases, results, strict=True)}


def test_the_client_implements_only_registered_protocols():
    registry = js_registry()
    assert set(registry["supported"]) <= set(local.available())
    assert set(registry["attributes"]) <= set(registry["supported"])
    assert {"grr", "sw", "spl"} <= set(registry["supported"])  # not vacuous


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_client_randomizes_as_python_or_refuses(case, node_results, tmp_path):
    protocol = make(case)
    spec, outcome = node_results[case_id(case)]
    if not js_implements(protocol):
        assert outcome.get("refused"), f"the client takes a config it does not implement: {outcome}"
        if protocol.name not in js_registry()["supported"]:
            assert f"does not implement protocol '{protocol.name}'" in outcome["refused"], outcome
        return
    assert "refused" not in outcome, outcome["refused"]
    assert outcome["config"] == json.loads(json.dumps(protocol.config())), "the client normalizes the config otherwise"
    assert outcome["viewRefused"] is None, outcome["viewRefused"]
    assert outcome["moduleAsMain"], f"dpdist-client/{protocol.name} privatizes otherwise than dpdist-client"
    assert outcome["drawsAlike"], "the client's draws depend on its coins or the value (a timing channel)"

    inputs = channel_inputs(protocol)  # as _case sent them (a key-value protocol's sets as pairs)
    path = tmp_path / "reports.bin"
    path.write_bytes(base64.b64decode(outcome["record"]))
    batch = io.read_reports(path, protocol)
    assert batch.n_read == batch.n_valid == len(inputs) * SAMPLES and batch.rejected == {}
    if not protocol.tags.finite_channel:
        return
    channel = protocol.channel(inputs)
    if outcome["channel"] is not None:
        law = np.array(outcome["channel"])
        assert law.shape == channel.shape
        np.testing.assert_allclose(law, channel, rtol=0, atol=1e-12)
        assert np.allclose(law.sum(axis=1), 1.0, atol=1e-9)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.log(law.max(axis=0)) - np.log(law.min(axis=0))
        loss = float(np.max(ratios[law.max(axis=0) > 0]))
        epsilon = protocol.guarantee.epsilon
        assert loss <= epsilon * (1 + SLACK) + SLACK, f"the client's law loses {loss} > epsilon {epsilon}"
    columns = np.asarray(protocol.report_index(batch.reports)).reshape(len(inputs), SAMPLES)
    for row, observed in enumerate(columns):
        counts = np.bincount(observed, minlength=channel.shape[1])
        p = chi_square_pvalue(counts, channel[row])
        assert p > ALPHA / len(inputs), f"input {spec['inputs'][row]}: the client's reports follow another law (p = {p:.2e})"
