"""What the conformance tests of the device clients share (``tests/clients/test_js_conformance.py``, JavaScript under
node, and ``tests/clients/test_java_conformance.py``, Java): the cases sent to a client's driver, one driver run per
selection (cached, so that the two clients' tests and the comparison of their records share it), and the checks of one
outcome against Python.

A client's driver (``tests/js_conformance_driver.mjs``, ``tests/JavaConformanceDriver.java``) takes a JSON list of
cases ``{config, view, inputs, samples, seed}`` and answers each with the refusal of a protocol it does not implement,
or with the config as it normalizes it, whether it accepts the client view, the exact law of each input's report, a
binary record of ``samples`` reports of each input from a seeded source (the same word stream in both clients), whether
the protocol's own entry point privatizes as the main one, and whether its draws depend on its coins or the value.
"""

from __future__ import annotations

import base64
import functools
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from conformance._examples import CASES, case_id
from dpdist import io, local
from dpdist.testing import ALPHA, channel_inputs, chi_square_pvalue

SAMPLES = 20_000  # reports of each input (the exact law is compared to 1e-12; a GRR keeping 5% too often fails here)
SLACK = 1e-9  # relative rounding allowed in the epsilon bound of a client's law (the kit's exact check allows 1e-9)


def as_json(protocol, inputs: np.ndarray) -> list:
    """The inputs as JSON: a key-value protocol's sets (rows NaN where a key is not held) as lists of [key, value]."""
    if protocol.tags.kind != "key_value":
        return inputs.tolist()
    return [[[int(key), float(row[key])] for key in np.flatnonzero(~np.isnan(row))] for row in inputs]


def case_request(index: int, name: str, params: dict) -> dict:
    """What a driver gets for the conformance example ``CASES[index]`` (its seed is its place in ``CASES``)."""
    protocol = local.make(name, **params)
    return {
        "config": protocol.config(),
        "view": protocol.client_view(),  # read only by a client that implements the protocol
        "inputs": as_json(protocol, channel_inputs(protocol)),
        "samples": SAMPLES,
        "seed": 7 + index,
    }


def selected_requests(request, test_function) -> tuple[list, list]:
    """``(chosen, requests)``: the examples whose ``test_function`` items the session runs (``-k krr`` runs one
    protocol's), as ``(index, case)`` pairs in ``CASES`` order, and their requests."""
    selected = {item.callspec.id for item in request.session.items if getattr(item, "function", None) is test_function}
    chosen = [(index, case) for index, case in enumerate(CASES) if case_id(case) in selected]
    return chosen, [case_request(index, name, params) for index, (name, params) in chosen]


@functools.cache
def _run(command: tuple, cases_text: str, cwd: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cases.json"
        path.write_text(cases_text)
        result = subprocess.run([*command, str(path)], capture_output=True, text=True, timeout=900, cwd=cwd)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def run_driver(command: list[str], requests: list, cwd: Path) -> list:
    """The driver's results for ``requests``: ``command`` (the driver and ``cases``) run with the cases file, once per
    session for the same command and cases (the JavaScript and Java tests share the node run)."""
    return json.loads(_run(tuple(command), json.dumps(requests), str(cwd)))


def check_outcome(protocol, spec: dict, outcome: dict, implements: bool, supported: list, client: str, tmp_path) -> None:
    """One client's outcome for one example against Python: the refusal of a protocol it does not implement, else the
    config read back, the view accepted, its own entry point, draws independent of coins and value, the reports read
    by Python with nothing rejected, the exact law equal to Python's channel and epsilon-LDP at Python's epsilon, and
    the sampled reports following Python's channel row (chi-square at ALPHA / inputs)."""
    if not implements:
        assert outcome.get("refused"), f"the client takes a config it does not implement: {outcome}"
        if protocol.name not in supported:
            assert f"does not implement protocol '{protocol.name}'" in outcome["refused"], outcome
        return
    assert "refused" not in outcome, outcome["refused"]
    assert outcome["config"] == json.loads(json.dumps(protocol.config())), "the client normalizes the config otherwise"
    assert outcome["viewRefused"] is None, outcome["viewRefused"]
    assert outcome["moduleAsMain"], f"{client}: the protocol's own entry point privatizes otherwise than the client's"
    assert outcome["drawsAlike"], "the client's draws depend on its coins or the value (a timing channel)"

    inputs = channel_inputs(protocol)  # as the request sent them (a key-value protocol's sets as pairs)
    path = tmp_path / "reports.bin"
    path.write_bytes(base64.b64decode(outcome["record"]))
    batch = io.read_reports(path, protocol)
    assert batch.n_read == batch.n_valid == len(inputs) * spec["samples"] and batch.rejected == {}
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
    columns = np.asarray(protocol.report_index(batch.reports)).reshape(len(inputs), spec["samples"])
    for row, observed in enumerate(columns):
        counts = np.bincount(observed, minlength=channel.shape[1])
        p = chi_square_pvalue(counts, channel[row])
        assert p > ALPHA / len(inputs), f"input {spec['inputs'][row]}: the client's reports follow another law (p = {p:.2e})"
