"""The JavaScript client (clients/js): its node tests, and the cross-language proofs.

- ``node --test clients/js/test/`` runs from here, so ``uv run pytest`` covers the JS tests
  (exact channels, epsilon bounds, chi-square sampling against Python's ``channel()``).
- The fixture those tests read is rebuilt from Python and must equal the committed one.
- The node command ``clients/js/bin/privatize.js`` privatizes known values; ``dpdist aggregate``
  and the Python estimators read its report file: nothing rejected, records byte for byte as
  Python writes them, estimates unbiased within tolerances from the protocol's variance.

Without node the tests skip, except under CI (``CI=true``), where a missing node fails.
The node runs are marked slow (about a minute in all); ``-m "not slow"`` keeps one end-to-end
check (``dpdist aggregate`` of a node-written file) and the fixture check.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conformance._examples import CASES
from dpdist import io, local
from dpdist.cli import main
from dpdist.testing import ALPHA, chi_square_pvalue, population
from js_support import js_implements, js_registry, node_path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "js"
CLI = CLIENT / "bin" / "privatize.js"


def _node() -> str:
    return node_path()


def _privatize_with_node(tmp_path, protocol, values, name="reports.bin", extra=()):
    config = tmp_path / "proto.json"
    config.write_text(json.dumps(protocol.config()))
    text = tmp_path / "values.txt"
    text.write_text("".join(f"{value!r}\n" if isinstance(value, float) else f"{value}\n" for value in values.tolist()))
    out = tmp_path / name
    with text.open() as stdin:
        result = subprocess.run(
            [_node(), str(CLI), "--config", str(config), "--out", str(out), *extra],
            stdin=stdin, capture_output=True, text=True, timeout=300,
        )
    return result, out


@pytest.mark.slow
def test_node_test_suite_passes():
    result = subprocess.run(
        [_node(), "--test", str(CLIENT / "test")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout


@pytest.mark.slow  # 0.65 CPU-s: regenerates the clients' fixture
def test_the_committed_fixture_is_what_python_writes_now():
    spec = importlib.util.spec_from_file_location("make_fixture", CLIENT / "test" / "make_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render(module.build_fixture())
    assert (CLIENT / "test" / "fixtures" / "python.json").read_text() == expected, (
        "clients/js/test/fixtures/python.json is stale: run `uv run python clients/js/test/make_fixture.py`"
    )


FREQUENCY_CASES = [
    ("grr", {"epsilon": 1.0, "domain_size": 10}),
    ("oue", {"epsilon": 1.0, "domain_size": 20}),
    ("sue", {"epsilon": 2.0, "domain_size": 9}),
    ("olh", {"epsilon": 1.5, "domain_size": 10}),
    ("hr", {"epsilon": 1.0, "domain_size": 10}),
    ("hr", {"epsilon": 4.0, "domain_size": 40}),  # several blocks
    ("ss", {"epsilon": 1.0, "domain_size": 10}),
    ("l-grr", {"epsilon": 3.0, "epsilon_1": 1.5, "domain_size": 10}),
    ("l-osue", {"epsilon": 3.0, "epsilon_1": 1.5, "domain_size": 12}),
    ("loloha", {"epsilon": 3.0, "epsilon_1": 1.5, "domain_size": 10}),
    ("dbitflippm", {"epsilon": 2.0, "domain_size": 10, "sampled_bits": 4}),
    ("cms", {"epsilon": 2.0, "domain_size": 10, "hash_count": 64, "width": 256}),  # fixed-family bias ~3e-3 << limit
    ("hcms", {"epsilon": 2.0, "domain_size": 10, "hash_count": 64, "width": 256}),
]
N_USERS = 20_000


@pytest.mark.slow
@pytest.mark.parametrize("name, params", FREQUENCY_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_node_reports_are_accepted_and_estimate_without_bias(tmp_path, name, params):
    protocol = local.make(name, **params)
    values = population(protocol, N_USERS, rng=11)
    result, out = _privatize_with_node(tmp_path, protocol, values)
    assert result.returncode == 0, result.stderr
    batch = io.read_reports(out, protocol)
    assert batch.n_read == batch.n_valid == N_USERS and batch.rejected == {}
    aggregator = batch.add_to(protocol.aggregator())
    estimate = protocol.estimate(aggregator).frequencies
    truth = np.bincount(values, minlength=protocol.domain_size) / N_USERS
    limit = stats.norm.isf(ALPHA / (2 * protocol.domain_size)) * np.sqrt(protocol.variance(N_USERS, truth))
    assert np.all(np.abs(estimate - truth) < limit), (estimate - truth) / limit


NUMERICAL_CASES = [
    ("sw", {"epsilon": 1.0, "bins": 32}),
    ("sw", {"epsilon": 2.0, "bins": 20, "discrete": True, "bounds": (-5.0, 5.0)}),
    ("gw", {"epsilon": 1.0, "bins": 16, "output_bins": 24, "shape": "triangle"}),
    ("opm", {"epsilon": 1.0, "bins": 32}),
    ("opm-circular", {"epsilon": 2.0, "bins": 24, "bounds": (0.0, 1440.0)}),
    ("threshold", {"epsilon": 1.0, "grid_size": 64, "cuts": [8, 20, 40, 60], "bounds": (-5.0, 5.0), "round": 2}),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, params", NUMERICAL_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_node_numerical_reports_are_accepted_and_follow_the_channel(tmp_path, name, params):
    """Bucket counts against the sum of the users' channel rows (Pearson, conservative for a
    sum of independent non-identical categorical draws)."""
    protocol = local.make(name, **params)
    values = population(protocol, N_USERS, rng=12)
    result, out = _privatize_with_node(tmp_path, protocol, values)
    assert result.returncode == 0, result.stderr
    batch = io.read_reports(out, protocol)
    assert batch.n_read == batch.n_valid == N_USERS and batch.rejected == {}
    counts = batch.add_to(protocol.aggregator()).statistic
    expected = protocol.channel(values).mean(axis=0)
    assert chi_square_pvalue(counts, expected) > ALPHA


@pytest.mark.slow  # three node runs; the fast loop keeps test_the_committed_fixture_is_what_python_writes_now
def test_dpdist_aggregate_accepts_the_node_file_and_records_are_byte_identical(tmp_path):
    protocol = local.make("oue", epsilon=1.0, domain_size=1024)
    values = population(protocol, 5000, rng=3)
    result, out = _privatize_with_node(tmp_path, protocol, values, extra=("--batch-rows", "2000"))
    assert result.returncode == 0, result.stderr
    state = tmp_path / "state.bin"
    assert main(["aggregate", "--config", str(tmp_path / "proto.json"), str(out), "--state", str(state), "--no-progress"]) == 0
    aggregator = io.load_state(state).aggregator
    assert aggregator.n == 5000 and aggregator.rejected == {}
    # three records (2000 + 2000 + 1000 rows) with one file id, each exactly what Python's writer
    # makes of its rows
    [identity] = io.file_identities(out)
    file_id = identity.removeprefix("id:")
    written = out.read_bytes()
    rebuilt = b"".join(
        io.encode_record(protocol, batch.reports, file_id) for batch in io.iter_report_batches(out, protocol)
    )
    assert rebuilt == written
    # a second node run is a different file (fresh id); re-running with --file-id is the same file
    _, second = _privatize_with_node(tmp_path, protocol, values, name="second.bin")
    _, again = _privatize_with_node(tmp_path, protocol, values, name="again.bin", extra=("--file-id", file_id))
    assert io.file_identities(second) != [identity] and io.file_identities(again) == [identity]
    assert main(["aggregate", str(second), "--state", str(state), "--no-progress"]) == 0
    assert main(["aggregate", str(again), "--state", str(state), "--no-progress"]) != 0  # counted once
    assert io.load_state(state).aggregator.n == 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name, params", [*FREQUENCY_CASES, *NUMERICAL_CASES], ids=lambda v: v if isinstance(v, str) else "")
def test_every_protocols_record_is_byte_identical_to_pythons(tmp_path, name, params):
    protocol = local.make(name, **params)
    values = population(protocol, 300, rng=5)
    result, out = _privatize_with_node(tmp_path, protocol, values)
    assert result.returncode == 0, result.stderr
    reports = io.read_reports(out, protocol).reports
    [identity] = io.file_identities(out)
    assert io.encode_record(protocol, reports, identity.removeprefix("id:")) == out.read_bytes()


@pytest.mark.slow
def test_node_refuses_every_registered_protocol_it_does_not_implement(tmp_path):
    """Live over the registry: a protocol added to Python later is refused clearly, not mis-read."""
    supported = js_registry()["supported"]
    unsupported = [(name, params) for name, params in CASES if name not in supported]
    assert {name for name, _ in unsupported} == set(local.available()) - set(supported)
    for name, params in unsupported:
        protocol = local.make(name, **params)
        values = population(protocol, 3)
        result, out = _privatize_with_node(tmp_path, protocol, values)
        assert result.returncode == 2 and not out.exists(), (name, result.stderr)
        assert result.stderr.count("\n") == 1 and "option --config" in result.stderr
        assert f"does not implement protocol '{name}'" in result.stderr


@pytest.mark.slow  # eight node runs each
@pytest.mark.parametrize("config", [
    {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8},
    {"protocol": "loloha", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8},
    {"protocol": "dbitflippm", "epsilon": 2.0, "domain_size": 8, "sampled_bits": 2},
], ids=lambda c: c["protocol"])
def test_node_cli_memo_is_one_device_over_rounds_and_shared_with_python(config, tmp_path, capsys):
    """`privatize.js --memo` keeps the device's ledger (memo, charges); `dpdist privatize --memo` continues it."""
    from dpdist.local.ledger import PrivacyLedger

    protocol = local.from_config(config)
    memo = tmp_path / "device.json"
    owner = ("--budget", "1000", *(("--accounting", "stable") if config["protocol"] == "dbitflippm" else ()))

    def stream(state):
        (only,) = state["streams"].values()
        return only

    saved = []
    for day in range(3):
        result, _ = _privatize_with_node(tmp_path, protocol, np.array([3, 5, 3]), f"day{day}.bin",
                                         ("--memo", str(memo), *(owner if day == 0 else ())))
        assert result.returncode == 0 and "one device, its memo saved in" in result.stderr, result.stderr
        saved.append(json.loads(memo.read_text()))
    assert stream(saved[0])["memo"] == stream(saved[1])["memo"] == stream(saved[2])["memo"]
    assert [stream(state)["reports"] for state in saved] == [3, 6, 9]
    ledger = PrivacyLedger.from_dict(saved[2])  # Python reads the node-written ledger
    assert ledger.spent() == pytest.approx(ledger.budget - ledger.remaining())
    assert ledger.cost(protocol, 2) == pytest.approx(
        0.0 if config["protocol"] == "dbitflippm" else protocol.epsilon_over_changes(11) - protocol.epsilon_over_changes(9)
    )
    client = type(protocol.client()).from_dict({k: v for k, v in stream(saved[2]).items() if k not in ("collector", "reports")})
    assert client.memo and set(map(str, client.memo)) == set(stream(saved[0])["memo"])

    (tmp_path / "today.csv").write_text("value\n3\n5\n")
    assert main(["privatize", "--config", json.dumps(config), "--column", "value", str(tmp_path / "today.csv"),
                 "--out", str(tmp_path / "python.parquet"), "--memo", str(memo), "--no-progress"]) == 0
    after = json.loads(memo.read_text())
    assert stream(after)["memo"] == stream(saved[2])["memo"] and stream(after)["reports"] == 11
    assert len(after["charges"]) == 4
    again, _ = _privatize_with_node(tmp_path, protocol, np.array([3]), "day3.bin", ("--memo", str(memo)))
    assert again.returncode == 0, again.stderr  # node reads the Python-written ledger back
    files = [*map(str, sorted(tmp_path.glob("day*.bin"))), str(tmp_path / "python.parquet")]
    assert main(["aggregate", "--config", json.dumps(config), *files, "--state", str(tmp_path / "s.bin")]) == 0
    assert "holds 12 report(s)" in capsys.readouterr().out

    other, _ = _privatize_with_node(tmp_path, local.make("grr", epsilon=1.0, domain_size=8), np.array([3]),
                                    "grr.bin", ("--memo", str(memo)))
    assert other.returncode == 2 and other.stderr.count("\n") == 1 and "option --memo" in other.stderr
    unmemoized, _ = _privatize_with_node(tmp_path, protocol, np.array([3]), "fresh.bin")
    assert unmemoized.returncode == 0 and "each line randomized as a different user" in unmemoized.stderr

    # as with `dpdist privatize --memo`: owner-only, its directory made, a memo made from a seed refused
    nested = tmp_path / "home" / ".dpdist" / "device.json"
    made, _ = _privatize_with_node(tmp_path, protocol, np.array([3]), "nested.bin", ("--memo", str(nested)))
    assert made.returncode == 0, made.stderr
    assert nested.stat().st_mode & 0o077 == 0 and nested.parent.stat().st_mode & 0o077 == 0
    seeded = tmp_path / "seeded.json"
    (tmp_path / "today.csv").write_text("value\n3\n")
    assert main(["privatize", "--config", json.dumps(config), "--column", "value", str(tmp_path / "today.csv"),
                 "--out", str(tmp_path / "seeded.parquet"), "--memo", str(seeded), "--seed", "1", "--no-progress"]) == 0
    before = seeded.read_text()
    refused, out = _privatize_with_node(tmp_path, protocol, np.array([3]), "after.bin", ("--memo", str(seeded)))
    assert refused.returncode == 2 and "seeded" in refused.stderr and not out.exists()
    assert seeded.read_text() == before


@pytest.mark.slow
def test_node_and_python_ledgers_refuse_past_the_budget_and_a_rotated_budget(tmp_path):
    """The ledger in --memo FILE refuses a run that overspends, and a changed epsilon_1."""
    config = {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8}
    protocol = local.from_config(config)
    memo = tmp_path / "device.json"
    first, _ = _privatize_with_node(tmp_path, protocol, np.array([3, 5]), "a.bin", ("--memo", str(memo), "--budget", "3"))
    assert first.returncode == 0, first.stderr
    before = memo.read_text()
    over, out = _privatize_with_node(tmp_path, protocol, np.array([3]), "b.bin", ("--memo", str(memo)))
    assert over.returncode == 2 and over.stderr.count("\n") == 1 and "budget of 3" in over.stderr and not out.exists()
    assert memo.read_text() == before
    (tmp_path / "v.csv").write_text("value\n3\n")
    base = ["privatize", "--column", "value", str(tmp_path / "v.csv"), "--out", str(tmp_path / "p.parquet"),
            "--no-progress", "--memo", str(memo)]
    assert main([*base, "--config", json.dumps(config)]) == 2  # Python refuses the same overspend
    rotated = {**config, "epsilon_1": 1.0 + 1e-12}
    assert main([*base, "--config", json.dumps(rotated), "--budget", "100"]) == 2
    assert json.loads(memo.read_text())["charges"] == json.loads(before)["charges"]


@pytest.mark.slow
def test_node_cli_refuses_ledger_settings_without_a_ledger_and_clips_numbers_unless_told(tmp_path):
    """--budget and --accounting without --memo are refused in one line naming both (they were ignored);
    a number outside the bounds is clipped as by Python (counted on stderr), and refused with --no-clip."""
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    for extra in (("--budget", "5"), ("--accounting", "stable")):
        result, out = _privatize_with_node(tmp_path, grr, np.array([1, 2]), extra=extra)
        assert result.returncode == 2 and "--budget and --accounting need --memo" in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and not out.exists()
    for budget in ("0x10", "0b11", "inf", ""):  # a decimal epsilon, as Python's float() reads one
        extra = ("--memo", str(tmp_path / "ledger.json"), "--budget", budget)
        result, out = _privatize_with_node(tmp_path, grr, np.array([1, 2]), extra=extra)
        assert result.returncode == 2 and "option --budget must be a finite epsilon > 0" in result.stderr, result.stderr
        assert not out.exists() and not (tmp_path / "ledger.json").exists()
    sw = local.make("sw", epsilon=1.0, bounds=(0.0, 10.0))
    result, out = _privatize_with_node(tmp_path, sw, np.array([3.0, 12.5]))
    assert result.returncode == 0 and "1 value(s) outside" in result.stderr and out.exists(), result.stderr
    result, _ = _privatize_with_node(tmp_path, sw, np.array([3.0, 12.5]), name="refused.bin", extra=("--no-clip",))
    assert result.returncode == 2 and "outside the bounds [0, 10]" in result.stderr, result.stderr


@pytest.mark.slow
def test_node_ledger_through_a_symbolic_link_is_one_ledger_and_a_hard_linked_one_is_refused(tmp_path):
    """`--memo LINK` then `--memo FILE`: one memo and one budget (the rename used to replace the link with a second
    ledger, each name counting its own reports); a hard-linked ledger is refused in one line, nothing written."""
    config = {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8}
    protocol = local.from_config(config)
    device = tmp_path / "device.json"
    link = tmp_path / "link.json"
    link.symlink_to(device)  # dangling until the first run: the file it names is created
    for name in (link, device, link):
        result, _ = _privatize_with_node(tmp_path, protocol, np.array([3, 5]), "r.bin", ("--memo", str(name)))
        assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    state = json.loads(device.read_text())
    (stream,) = state["streams"].values()
    assert stream["reports"] == 6 and len(state["charges"]) == 3
    os.link(device, tmp_path / "hard.json")
    before = device.read_text()
    refused, out = _privatize_with_node(tmp_path, protocol, np.array([3]), "h.bin", ("--memo", str(tmp_path / "hard.json")))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "2 hard links" in refused.stderr
    assert device.read_text() == before and not out.exists()


@pytest.mark.slow
def test_node_cli_refuses_bad_input_in_one_line_and_leaves_no_file(tmp_path):

    grr = local.make("grr", epsilon=1.0, domain_size=5)
    result, out = _privatize_with_node(tmp_path, grr, np.array([0, 1, 7, 2]))
    assert result.returncode == 2 and not out.exists() and not list(tmp_path.glob("*.tmp"))
    assert result.stderr.count("\n") == 1 and "stdin line 3:" in result.stderr and "The value at position 2 is outside it" in result.stderr
    assert "7 " not in result.stderr.replace("stdin line 3", "")  # a person's value, not shown

    (tmp_path / "values.txt").write_text("0\nabc\n")
    with (tmp_path / "values.txt").open() as stdin:
        result = subprocess.run(
            [_node(), str(CLI), "--config", str(tmp_path / "proto.json"), "--out", str(out)],
            stdin=stdin, capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 2 and not out.exists() and "stdin line 2" in result.stderr and "abc" not in result.stderr


@pytest.mark.slow
def test_node_cli_reads_pem_words_and_items_above_two_to_the_53(tmp_path):
    """The node command used to refuse every word ("apple" is not a number) and items above 2^53."""
    words = local.make("pem", epsilon=4.0, alphabet="abcdefghijklmnopqrstuvwxyz", max_chars=6, k=2, hash_count=256)
    values = np.array(["apple", "fig", "apple", "kiwi"] * 50)
    result, out = _privatize_with_node(tmp_path, words, values)
    assert result.returncode == 0, result.stderr
    batch = io.read_reports(out, words)
    assert batch.n_read == batch.n_valid == values.size and batch.rejected == {}
    # the file's reports follow the exact channel of the words' items (chi-square, as for every protocol)
    counts = batch.add_to(words.aggregator()).statistic
    assert chi_square_pvalue(counts, words.channel(values).mean(axis=0)) > ALPHA

    items = local.make("pem", epsilon=4.0, bits=62, k=2, hash_count=256)
    big = np.array([2**62 - 1, 2**53 + 1, 12345] * 60, dtype=np.uint64)
    result, out = _privatize_with_node(tmp_path, items, big, name="items.bin")
    assert result.returncode == 0, result.stderr
    batch = io.read_reports(out, items)
    assert batch.n_valid == big.size and batch.rejected == {}
    counts = batch.add_to(items.aggregator()).statistic
    assert chi_square_pvalue(counts, items.channel(big).mean(axis=0)) > ALPHA


VIEW_CHECK = """
import { readFileSync } from 'node:fs';
import { fromConfig } from './clients/js/src/index.js';
const outcomes = JSON.parse(readFileSync(process.argv[1], 'utf8')).map((view) => {
  try {
    const protocol = fromConfig(view);
    return { ok: true, descr: protocol.descr, shape: protocol.rowShape };
  } catch (error) {
    return { ok: false, message: error.message };
  }
});
process.stdout.write(JSON.stringify(outcomes));
"""


def _weakened(view: dict) -> dict:
    """The view with its first design constant changed (a probability raised, an integer grown)."""
    name, value = next(iter(view["design"].items()))
    changed = min(1.0, value * 1.25 + 1e-3) if isinstance(value, float) else (value + 1 if isinstance(value, int) else value[1:])
    return {**view, "design": {**view["design"], name: changed}}


@pytest.mark.slow
def test_node_checks_the_client_views_python_publishes(tmp_path):
    """Every client view Python publishes for a config the JS client implements is accepted, with the
    format it states; the view with a changed design constant, or another dtype, is refused."""
    protocols = [protocol for protocol in (local.make(name, **params) for name, params in CASES) if js_implements(protocol)]
    assert any(protocol.tags.kind == "multi" for protocol in protocols)  # records' views too
    views = [protocol.client_view() for protocol in protocols]
    tampered = [_weakened(view) for view in views] + [
        {**view, "format": {**view["format"], "dtype": "<u2" if view["format"]["dtype"] != "<u2" else "<u4"}} for view in views
    ]
    path = tmp_path / "views.json"
    path.write_text(json.dumps(views + tampered))
    result = subprocess.run([_node(), "--input-type=module", "-e", VIEW_CHECK, str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    for protocol, outcome in zip(protocols, outcomes[: len(views)]):
        layout = protocol.report_format
        descr = json.loads(json.dumps(np.lib.format.dtype_to_descr(layout.dtype)))  # a record's fields: lists, as in JSON
        assert outcome == {"ok": True, "descr": descr, "shape": list(layout.row_shape)}
    for view, outcome in zip(tampered, outcomes[len(views):]):
        assert not outcome["ok"] and "The view is refused" in outcome["message"], (view, outcome)


RECORDS_SCRIPT = """
import { readFileSync, writeFileSync } from 'node:fs';
import { privatizeRecord } from './clients/js/src/index.js';
const { view, records } = JSON.parse(readFileSync(process.argv[1], 'utf8'));
writeFileSync(process.argv[2], privatizeRecord(view, records, { fileId: '0123456789abcdef0123456789abcdef' }));
"""

RECORD_CASES = [
    ("spl", {"epsilon": 2.0, "attributes": [
        {"name": "country", "labels": ["fr", "de", "it"]},
        {"name": "device", "domain_size": 12},
        {"name": "age", "bounds": [0.0, 100.0], "options": {"bins": 64}},
    ]}),
    ("smp", {"epsilon": 1.5, "attributes": [
        {"name": "country", "labels": ["fr", "de", "it"]},
        {"name": "device", "domain_size": 12, "protocol": "olh"},
        {"name": "age", "bounds": [0.0, 100.0], "options": {"bins": 64}},
    ]}),
    ("rsfd", {"epsilon": 1.0, "attributes": [
        {"name": "country", "labels": ["fr", "de", "it"], "protocol": "grr"},
        {"name": "device", "domain_size": 12, "protocol": "oue"},
        {"name": "browser", "domain_size": 4, "protocol": "ss"},
    ]}),
    ("rsrfd", {"epsilon": 1.0, "priors": [[0.5, 0.3, 0.2], None, [0.4, 0.3, 0.2, 0.1]], "attributes": [
        {"name": "country", "labels": ["fr", "de", "it"], "protocol": "grr"},
        {"name": "device", "domain_size": 12, "protocol": "oue"},
        {"name": "browser", "domain_size": 4, "protocol": "olh"},
    ]}),
]


def _node_records(tmp_path, protocol, records: list):
    """The reports the JS client writes for ``records`` from ``protocol``'s client view, read back: every one valid, the
    binary record byte for byte what Python's writer makes of its rows."""
    source = tmp_path / "records.json"
    source.write_text(json.dumps({"view": protocol.client_view(), "records": records}))
    out = tmp_path / "reports.bin"
    result = subprocess.run([_node(), "--input-type=module", "-e", RECORDS_SCRIPT, str(source), str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    batch = io.read_reports(out, protocol)
    assert batch.n_read == batch.n_valid == len(records) and batch.rejected == {}
    assert io.encode_record(protocol, batch.reports, "0123456789abcdef0123456789abcdef") == out.read_bytes()
    return batch


def _records(protocol, n: int, rng: np.random.Generator) -> tuple[list, dict[str, np.ndarray]]:
    """``n`` records as the JS client takes them (objects by name) and the true item of each categorical attribute."""
    columns, items = {}, {}
    for attribute in protocol.attributes:
        if attribute.categorical:
            drawn = np.minimum(rng.geometric(0.35, n) - 1, attribute.size - 1)
            items[attribute.name] = drawn
            columns[attribute.name] = [attribute.labels[i] for i in drawn] if attribute.labels else drawn.tolist()
        else:
            lo, hi = attribute.interval
            columns[attribute.name] = np.round(rng.uniform(lo, hi, n), 3).tolist()
    return [dict(zip(columns, row)) for row in zip(*columns.values())], items


@pytest.mark.slow
@pytest.mark.parametrize("name, params", RECORD_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_node_records_are_accepted_byte_identical_and_estimate_without_bias(tmp_path, name, params):
    """Records randomized by the JS client from the published client view: every report valid, the record
    byte for byte what Python's writer makes of its rows, each categorical attribute's estimate within
    z sqrt(Var) of the truth (z at ALPHA, Bonferroni over the items; Var from the protocol's analytic variance)."""
    protocol = local.make(name, **params)
    records, items = _records(protocol, N_USERS, np.random.default_rng(21))
    batch = _node_records(tmp_path, protocol, records)
    estimate = protocol.estimate(batch.add_to(protocol.aggregator()))
    truth = np.concatenate([np.bincount(items[a.name], minlength=a.size) / N_USERS for a in protocol.attributes if a.categorical])
    found = np.concatenate([estimate[a.name].frequencies for a in protocol.attributes if a.categorical])
    limit = stats.norm.isf(ALPHA / (2 * truth.size)) * np.sqrt(protocol.variance(N_USERS, truth))
    assert np.all(np.abs(found - truth) < limit), (found - truth) / limit


GROUP_CASES = [
    ("calm", {"epsilon": 2.0, "attributes": [  # every marginal below 3 e^2 + 2 cells: GRR, a small channel
        {"name": "country", "labels": ["fr", "de", "it"]}, {"name": "device", "domain_size": 4}, {"name": "plan", "domain_size": 2},
    ]}),
    ("calm", {"epsilon": 1.0, "order": 1, "oracle": "oue", "attributes": [
        {"name": "country", "labels": ["fr", "de", "it"]}, {"name": "device", "domain_size": 5},
    ]}),
    ("hdg", {"epsilon": 2.0, "resolution": 16, "g1": 8, "g2": 4, "attributes": [
        {"name": "age", "bounds": [0.0, 100.0]}, {"name": "income", "bounds": [-10.0, 10.0]},
    ]}),
    ("hdg", {"epsilon": 2.0, "resolution": 16, "g2": 2, "hybrid": False, "oracle": "sue", "attributes": [
        {"name": "age", "bounds": [0.0, 100.0]}, {"name": "income", "bounds": [-10.0, 10.0]}, {"name": "hours", "bounds": [0.0, 60.0]},
    ]}),
]


def _check_group_estimate(protocol, estimate, records: list) -> None:
    """Every cell of calm's first reported marginal, or hdg's lower-left quarter of each pair (whole 2-D cells: no
    uniformity error), within the estimate's own interval at level 1 - ALPHA / m, m the number of checks
    (Bonferroni): the truth counted from the records."""
    if protocol.name == "calm":
        first = protocol.marginal_sets[0]
        marginal = estimate.marginal(first)
        sizes = [next(a.size for a in protocol.attributes if a.name == name) for name in first]
        cells = np.zeros(sizes)
        for record in records:
            cells[tuple(_item(protocol, name, record[name]) for name in first)] += 1
        z = stats.norm.isf(ALPHA / (2 * cells.size))
        assert np.all(np.abs(marginal.frequencies - cells.ravel() / len(records)) <= z * np.sqrt(marginal.variance))
        return
    pairs = list(itertools.combinations(protocol.attributes, 2))
    for first, second in pairs:
        ranges = {a.name: (a.interval[0], (a.interval[0] + a.interval[1]) / 2) for a in (first, second)}
        truth = np.mean([all(record[a] < ranges[a][1] for a in ranges) for record in records])
        interval = estimate.range(ranges, level=1 - ALPHA / len(pairs))
        assert interval.low <= truth <= interval.high, (first.name, second.name, truth, interval)


def _item(protocol, name: str, value) -> int:
    attribute = next(a for a in protocol.attributes if a.name == name)
    return attribute.labels.index(value) if attribute.labels else int(value)


@pytest.mark.slow
@pytest.mark.parametrize("name, params", GROUP_CASES, ids=[f"{name}-{i}" for i, (name, _) in enumerate(GROUP_CASES)])
def test_node_marginal_and_grid_records_follow_the_channel_and_estimate_correctly(tmp_path, name, params):
    """calm and hdg records randomized by the JS client from the published client view: every report valid, the
    record byte for byte what Python's writer makes of its rows, the reports' outputs (``report_index``) following
    Python's ``channel()`` of the records (Pearson at ALPHA), and the served estimate's intervals covering the truth
    (level 1 - ALPHA / cells or / pairs: Bonferroni)."""
    protocol = local.make(name, **params)
    records, _ = _records(protocol, N_USERS, np.random.default_rng(23))
    batch = _node_records(tmp_path, protocol, records)
    expected = protocol.channel(np.array([[record[n] for n in protocol.attribute_names] for record in records], dtype=object))
    counts = np.bincount(protocol.report_index(batch.reports), minlength=expected.shape[1])
    assert chi_square_pvalue(counts, expected.mean(axis=0)) > ALPHA
    estimate = protocol.estimate(batch.add_to(protocol.aggregator()))
    _check_group_estimate(protocol, estimate, records)


@pytest.mark.slow
def test_node_cli_columns_records_are_read_by_dpdist_byte_for_byte(tmp_path):
    """`privatize.js --columns` on a CSV of records: `dpdist aggregate` takes every report, each record is what
    Python's writer makes of its rows, and the one-line summary counts the skipped and clipped cells."""
    protocol = local.make("spl", epsilon=2.0, attributes=RECORD_CASES[0][1]["attributes"])
    (tmp_path / "proto.json").write_text(json.dumps(protocol.config()))
    rows = ["country,device,age", "fr,3,41.5", "de,11,120", "it,,30", "fr,0,7"] + [f"it,{i % 12},{i % 100}" for i in range(300)]
    out = tmp_path / "reports.bin"
    result = subprocess.run([_node(), str(CLI), "--config", str(tmp_path / "proto.json"), "--columns", "country,device,age",
                             "--out", str(out)], input="\n".join(rows) + "\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "wrote 303 spl report(s)" in result.stderr and "1 row(s) with a missing cell skipped" in result.stderr
    assert "1 value(s) outside their attribute's bounds clipped" in result.stderr
    state = tmp_path / "state.bin"
    assert main(["aggregate", "--config", str(tmp_path / "proto.json"), str(out), "--state", str(state), "--no-progress"]) == 0
    assert io.load_state(state).aggregator.n == 303 and io.load_state(state).aggregator.rejected == {}
    [identity] = io.file_identities(out)
    reports = io.read_reports(out, protocol).reports
    assert io.encode_record(protocol, reports, identity.removeprefix("id:")) == out.read_bytes()


@pytest.mark.slow
def test_node_cli_columns_writes_grid_records_dpdist_reads(tmp_path):
    """`privatize.js --columns` on records of an hdg config (attributes without a protocol of their own): each
    cell checked and clipped by its attribute's bounds, every report accepted by `dpdist aggregate`."""
    protocol = local.make("hdg", epsilon=1.0, resolution=8, g1=4, g2=2, attributes=GROUP_CASES[2][1]["attributes"])
    (tmp_path / "proto.json").write_text(json.dumps(protocol.config()))
    rows = ["income,age", "3.5,41", "12,7", ",30"] + [f"{i % 20 - 10},{i % 100}" for i in range(200)]
    out = tmp_path / "reports.bin"
    result = subprocess.run([_node(), str(CLI), "--config", str(tmp_path / "proto.json"), "--columns", "age,income",
                             "--out", str(out)], input="\n".join(rows) + "\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "wrote 202 hdg report(s)" in result.stderr and "1 value(s) outside their attribute's bounds clipped" in result.stderr
    state = tmp_path / "state.bin"
    assert main(["aggregate", "--config", str(tmp_path / "proto.json"), str(out), "--state", str(state), "--no-progress"]) == 0
    assert io.load_state(state).aggregator.n == 202 and io.load_state(state).aggregator.rejected == {}


#: a record with an opm-circular attribute (one period of a day), a clipped one and a categorical one
CIRCLE_SCHEMA = [{"name": "hour", "bounds": [0.0, 24.0], "protocol": "opm-circular"}, {"name": "c", "domain_size": 3},
                 {"name": "age", "bounds": [0.0, 100.0], "protocol": "sw"}]
CIRCLE_HOURS = [25.0, -1.0, 48.5, float("inf"), float("-inf"), 7.0]
CIRCLE_AGES = [150.0, 50.0, -3.0, 20.0, 30.0, 40.0]


@pytest.mark.parametrize("name", ["spl", "smp"])
def test_node_and_python_records_wrap_an_opm_circular_attribute_alike(name):
    """Python's records clipped an opm-circular attribute (25 h to 24 h) where node's wrapped it (to
    01:00).  Both now check a record as its attribute's protocol checks one value: the same unit values for 25, -1,
    48.5 and +-inf (wrapped; an infinity clipped), and the sw attribute clipped, in both clients."""
    protocol = local.make(name, epsilon=2.0, attributes=CIRCLE_SCHEMA)
    records = [[hour, index % 3, age] for index, (hour, age) in enumerate(zip(CIRCLE_HOURS, CIRCLE_AGES))]
    script = (
        "import { fromConfig } from './clients/js/src/index.js';\n"
        f"const protocol = fromConfig({json.dumps(protocol.config())});\n"
        "const records = JSON.parse(process.argv[1]).map((r) => r.map((v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v)));\n"
        "console.log(JSON.stringify(protocol.checkValues(records)));\n"
    )
    wire = json.dumps([[("inf" if v == np.inf else "-inf" if v == -np.inf else v) for v in r] for r in records])
    result = subprocess.run([_node(), "--input-type=module", "-e", script, wire], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    node = np.array(json.loads(result.stdout), dtype=np.float64)
    with pytest.warns(Warning, match="wrapped around the circle"):
        python = protocol._records(np.array(records), clip=True, owner="test")
    np.testing.assert_array_equal(node, python)
    assert (python[:, 0] * 24).tolist() == [1.0, 23.0, 0.5, 24.0, 0.0, 7.0]  # not 24 (midnight) for 25 h
    assert (python[:, 2] * 100).tolist() == [100.0, 50.0, 0.0, 20.0, 30.0, 40.0]


@pytest.mark.slow  # two CLI runs (one node)
def test_node_cli_and_dpdist_privatize_word_wrapped_and_clipped_attributes_alike(tmp_path, capsys):
    """`privatize.js --columns` and `dpdist privatize --columns` count the circular attribute's values as wrapped and
    the others as clipped, and both refuse them with --no-clip saying they would be wrapped."""
    protocol = local.make("spl", epsilon=2.0, attributes=CIRCLE_SCHEMA)
    config = tmp_path / "proto.json"
    config.write_text(json.dumps(protocol.config()))
    text = "hour,c,age\n" + "".join(f"{h!r},{i % 3},{a!r}\n" for i, (h, a) in enumerate(zip(CIRCLE_HOURS, CIRCLE_AGES)))
    data = tmp_path / "data.csv"
    data.write_text(text)
    wrapped = "5 value(s) outside their circular attribute's bounds wrapped around the circle"
    clipped = "2 value(s) outside their attribute's bounds clipped to the nearest bound"

    def node(*extra):
        return subprocess.run([_node(), str(CLI), "--config", str(config), "--columns", "hour,c,age", "--out",
                               str(tmp_path / "node.bin"), *extra], input=text, capture_output=True, text=True, timeout=120)

    result = node()
    assert result.returncode == 0 and wrapped in result.stderr and clipped in result.stderr, result.stderr
    assert main(["privatize", "--config", str(config), "--columns", "hour,c,age", "--out", str(tmp_path / "py.parquet"),
                 "--no-progress", str(data)]) == 0
    out = capsys.readouterr().out
    assert wrapped in out and clipped in out, out
    refused = node("--no-clip")
    assert refused.returncode == 2 and "without --no-clip it is wrapped around the circle" in refused.stderr
    assert main(["privatize", "--config", str(config), "--columns", "hour,c,age", "--out", str(tmp_path / "p2.parquet"),
                 "--no-progress", "--no-clip", str(data)]) != 0
    assert "without --no-clip they are wrapped around the circle" in capsys.readouterr().err
