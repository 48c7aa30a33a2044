"""Adding a protocol end to end touches seven files (three of them written by the registry scripts) (docs/how-to/add-a-protocol.md), and everything works with it.

The test follows the walk-through of docs/how-to/add-a-protocol.md in a copy of the source tree (the files git lists, 13 MB,
committed in a scratch repository there): it writes the files of the
page's blocks that name a path, runs its commands, and counts what git sees changed -- the Python module, its
conformance example, the JavaScript module and the Java class and the two clients' regenerated registries, nothing
else.  Then, in the copy (its ``src`` first on ``PYTHONPATH``):

- every test file that reads the registry, its tags or the conformance examples runs its tests for ``krr``
  and its tests of no protocol in particular (the membership, classification and closed-list checks), and the
  JavaScript and Java clients are compared with Python (and with each other) on ``krr``'s conformance example
  (tests/clients/test_js_conformance.py, tests/clients/test_java_conformance.py);
- the node tests of the package (the exports, the generated registry, each module as its entry point) pass;
- ``dpdist serve`` runs a ``krr`` campaign: binary and JSON batches from the Python client, a device of the
  JavaScript client under node and one of the Java client randomizing, encoding and submitting their reports, and
  the estimate of all of them within its standard errors.

Slow: a copy, a scratch repository, three pytest runs, node, the Java client compiled, a server (about 55 CPU-s).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from java_support import java_tools
from js_support import node_path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "how-to" / "add-a-protocol.md"
#: the seven files of the walk-through: the Python module, its conformance example, the JS module, the Java class,
#: and the two clients' registries (the JS client's two generated files: every protocol; the 1-D protocols a
#: record's attribute may use)
#: the registries the walk-through's commands regenerate
GENERATED = {"clients/js/src/protocols/_index.js", "clients/js/src/protocols/_attributes.js",
             "clients/java/src/main/java/org/dpdist/client/protocols/ProtocolIndex.java"}
EXPECTED = {
    "src/dpdist/local/frequency/krr.py",
    "tests/conformance/examples_krr.py",
    "clients/js/src/protocols/krr.js",
    "clients/java/src/main/java/org/dpdist/client/protocols/KRR.java",
    *GENERATED,
}
#: test files that take protocols from the registry, the tags or the conformance examples
REGISTRY_DRIVEN = re.compile(r"local\.available\(|\bCASES\b|\bEXAMPLES\b|registered_class|_registry\._REGISTRY|js_registry|java_registry")

pytestmark = pytest.mark.slow


def walkthrough() -> tuple[dict[str, str], list[str]]:
    """The files (path -> text) and the commands of the guide "Add a protocol" (docs/how-to/add-a-protocol.md)."""
    section = DOC.read_text()
    files = {
        match["path"]: match["body"]
        for match in re.finditer(r"^```\w+[^\n]*\n(?:#|//) (?P<path>[\w./-]+)\n(?P<body>.*?)^```", section, re.M | re.S)
    }
    commands = [
        line.strip()
        for block in re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
        for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    return files, commands


def _git(copy: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=walkthrough", "-c", "user.email=walkthrough@example.invalid", "-C", str(copy), *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def _copy_source_tree(copy: Path) -> None:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source, target = ROOT / name, copy / name
        if not source.exists() and not source.is_symlink():  # deleted in the work tree, not yet committed
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))  # the service's link to clients/js stays relative
        else:
            shutil.copy2(source, target)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-q", "-m", "the source tree")


def _run(copy: Path, command: list[str], environment: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=copy, env=environment, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{shlex.join(command)}\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    return result


#: a pytest plugin (given with -p): keep the tests parametrized for krr and the tests parametrized by nothing
KRR_ONLY = '''
def pytest_collection_modifyitems(config, items):
    kept = [item for item in items if "krr" in item.nodeid or getattr(item, "callspec", None) is None]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
'''

SERVICE = r'''
"""A krr campaign in dpdist serve: binary and JSON batches from Python, a node device, a Java device, the estimate."""
import json, subprocess, sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd() / "tests"))
from java_support import run_device  # noqa: E402 (the copy's Java client, compiled from the copy's sources)
from serve_support import ADMIN_TOKEN, ServerProcess  # noqa: E402

from dpdist.client import AdminClient, Client, json_rows  # noqa: E402

node, script, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
config = {"protocol": "krr", "epsilon": 2.0, "domain_size": 5}
server = ServerProcess(str(folder / "campaigns.sqlite")).start()
try:
    with AdminClient(server.url, admin_token=ADMIN_TOKEN, retries=2) as admin, Client(server.url, retries=2) as python:
        admin.create_campaign("krr", config)
        admin.open_campaign("krr")
        protocol = python.protocol("krr")
        values = np.random.default_rng(1).choice(5, size=6000, p=[0.4, 0.3, 0.15, 0.1, 0.05])
        binary = python.submit_reports("krr", protocol, protocol.privatize(values[:3000], rng=2))
        body = json.dumps({"reports": json_rows(protocol.privatize(values[3000:5000], rng=3))}).encode()
        as_json = python.submit_body("krr", "json-1", body, "application/json")
        device = subprocess.run([node, script, server.url, "krr", json.dumps(values[5000:5500].tolist())],
                                capture_output=True, text=True, timeout=300)
        assert device.returncode == 0, device.stderr
        java = run_device({"server": server.url, "campaign": "krr", "values": values[5500:].tolist(), "batchSize": 250})
        estimate = admin.estimate("krr", replicates=0)["estimate"]
        truth = (np.bincount(values, minlength=5) / values.size).tolist()
        print(json.dumps({"binary": binary, "json": as_json, "node": device.stdout, "java": java, "n": admin.campaign("krr")["n"],
                          "estimate": estimate, "truth": truth}))
finally:
    server.stop()
'''

NODE_DEVICE = '''
// A device of the JavaScript client: the campaign's config from the service, its values randomized (krr.js),
// encoded as binary records and submitted.
import { Client } from 'CLIENT';

const [server, campaign, values] = process.argv.slice(2);
const device = new Client(server, campaign, { memoStorage: null, batchSize: 250 });
const acknowledged = await device.submitMany(JSON.parse(values));
process.stdout.write(JSON.stringify({ protocol: (await device.protocol()).name, acknowledged }));
'''


def test_a_protocol_added_as_the_walkthrough_says_touches_seven_files_and_works_end_to_end(tmp_path):
    node = node_path()
    _, java = java_tools()
    files, commands = walkthrough()
    assert set(files) == EXPECTED - GENERATED, sorted(files)

    copy = tmp_path / "tree"
    _copy_source_tree(copy)
    for path, body in files.items():
        (copy / path).write_text(body)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy / "src"), str(tmp_path)])}
    environment.pop("PYTEST_ADDOPTS", None)
    for command in commands:
        _run(copy, [{"node": node, "java": java}.get(word, word) for word in shlex.split(command)], environment)
    changed = {line[3:] for line in _git(copy, "status", "--porcelain", "--untracked-files=all").splitlines()}
    assert changed == EXPECTED, sorted(changed)

    # the registry-driven tests, for krr and for no protocol in particular
    (tmp_path / "krr_only.py").write_text(KRR_ONLY)
    driven = sorted(
        str(path.relative_to(copy)) for path in (copy / "tests").rglob("test_*.py") if REGISTRY_DRIVEN.search(path.read_text())
    )
    assert "tests/conformance/test_conformance.py" in driven and "tests/conformance/test_protocol_membership.py" in driven
    report = tmp_path / "fast.xml"
    # the JS README's protocol list documents the shipped client: the walk-through's krr is not shipped, so not listed
    shipped_list = "tests/clients/test_npm_package.py::test_the_readme_and_the_package_description_name_every_frequency_oracle_of_the_client"
    _run(copy, [sys.executable, "-m", "pytest", "-q", "-p", "krr_only", "-m", "not slow", "-p", "no:cacheprovider",
                f"--junitxml={report}", "--deselect", shipped_list, *driven], environment)
    cases = [case.get("name") for case in ElementTree.parse(report).iter("testcase")]
    assert len([name for name in cases if "krr" in name]) >= 20, cases  # state invariants, limits, labels, ranges...
    conformance = tmp_path / "conformance.xml"
    _run(copy, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={conformance}",
                "tests/conformance", "tests/clients/test_js_conformance.py", "tests/clients/test_java_conformance.py", "-k", "krr"],
         environment)
    cases = [case.get("classname") for case in ElementTree.parse(conformance).iter("testcase")]
    assert cases.count("tests.conformance.test_conformance") >= 2 * 18, cases  # two examples, every check of the kit
    assert cases.count("tests.clients.test_js_conformance") == 2, cases  # node against Python, on each example
    assert cases.count("tests.clients.test_java_conformance") == 4, cases  # Java against Python, and against node
    _run(copy, [node, "--test", "clients/js/test/package.test.js", "clients/js/test/configs.test.js"], environment)

    # the service and the JavaScript client
    device = tmp_path / "device.mjs"
    device.write_text(NODE_DEVICE.replace("CLIENT", (copy / "clients/js/src/index.js").as_uri()))
    script = tmp_path / "service.py"
    script.write_text(SERVICE)
    (tmp_path / "service").mkdir()
    result = _run(copy, [sys.executable, str(script), node, str(device), str(tmp_path / "service")], environment)
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["binary"]["accepted"] == 3000 and outcome["json"]["accepted"] == 2000
    assert json.loads(outcome["node"])["protocol"] == "krr"
    assert outcome["java"]["status"] == 0 and sum(ack["accepted"] for ack in outcome["java"]["acks"]) == 500
    assert outcome["n"] == 6000  # every report of the three clients counted, none rejected
    estimate = outcome["estimate"]
    frequencies, errors = estimate["frequencies"], estimate["standard_error"]
    for item, truth in enumerate(outcome["truth"]):  # 5 items, each within 5 standard errors
        assert abs(frequencies[item] - truth) < 5 * errors[item], (item, frequencies[item], truth, errors[item])
