"""Reports leave a process in a uniformly random order, never in row order.

On a column sorted by value, an observer who guesses that the report at position ``j`` is the
value of row ``j`` is right far more often than chance when the order is kept: GRR at eps = 1 over
4 items reports the true item with probability e / (e + 3) = 0.475, so 47.5% of positions match
against 25% in a random order (the audit, guessing values from position and report together, got
99.6% where eps-LDP allows 73.1%). In a uniformly random order the number of matches has, given
the reports, exactly the mean and variance of Hoeffding's combinatorial CLT (W. Hoeffding, "A
combinatorial central limit theorem", Ann. Math. Statist. 22, 1951); every check allows z = 4.89
standard deviations (two-sided level ALPHA = 1e-6). Row order gives z ~ 33 at n = 4000.
"""

from __future__ import annotations

import itertools
import json
import uuid

import numpy as np
import pytest
from scipy import stats

from dpdist import io, local
from dpdist.cli import main
from dpdist.testing import ALPHA, chi_square_pvalue

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 4, "version": 1}
N = 4000
Z = stats.norm.isf(ALPHA / 2)


def sorted_values(n: int = N, d: int = 4) -> np.ndarray:
    """``n`` items sorted by value: ``n / d`` of each of 0 .. d-1."""
    return np.arange(n) * d // n


def positional_matches(reports, guesses) -> tuple[int, float, float]:
    """Matches of report ``j`` with ``guesses[j]``; their mean and standard deviation in a random order.

    Hoeffding (1951): for ``S = sum_j a(j, pi(j))`` over a uniform permutation ``pi``,
    ``E S = sum a / n`` and ``Var S = sum d^2 / (n - 1)`` with ``d = a - row mean - column mean +
    grand mean``; here ``a(j, i) = [guess_j == report_i]``, so everything is in the counts of each item.
    """
    reports, guesses = np.asarray(reports).ravel(), np.asarray(guesses).ravel()
    n, d = len(reports), int(max(reports.max(), guesses.max())) + 1
    reported = np.bincount(reports, minlength=d)
    guessed = np.bincount(guesses, minlength=d)
    grand = guessed @ reported / n**2
    deviation = np.eye(d) - reported[:, None] / n - guessed[None, :] / n + grand  # [guess v, report w]
    variance = (guessed[:, None] * reported[None, :] * deviation**2).sum() / (n - 1)
    return int((reports == guesses).sum()), float(n * grand), float(np.sqrt(variance))


def assert_random_order(reports, guesses) -> None:
    matches, mean, sd = positional_matches(reports, guesses)
    assert abs(matches - mean) < Z * sd, (
        f"{matches} of {len(guesses)} positions match their row's value; a random order gives {mean:.0f} +- {sd:.1f} "
        f"(z = {(matches - mean) / sd:.1f})"
    )


def test_row_order_is_seen_by_the_check():
    """The check has power: the reports of sorted values, in row order, are 30+ standard deviations off."""
    values = sorted_values()
    matches, mean, sd = positional_matches(local.from_config(GRR).privatize(values, rng=1), values)
    assert (matches - mean) / sd > 20


# ---------------------------------------------------------------------- dpdist privatize
def _privatize(tmp_path, values, out, *extra):
    data = tmp_path / "sorted.csv"
    data.write_text("value\n" + "\n".join(map(str, values)) + "\n")
    return main(["privatize", "--config", json.dumps(GRR), "--column", "value", str(data), "--out", str(out),
                 "--block-size", "500", "--no-progress", *extra])


@pytest.mark.parametrize("spill", [False, True], ids=["in-memory", "through-files"])
@pytest.mark.parametrize("suffix", [".bin", ".parquet"])
def test_privatize_writes_a_sorted_column_in_random_order(tmp_path, monkeypatch, suffix, spill):
    """Each block of 500 sorted rows holds one or two items: shuffling within blocks would not pass."""
    opened = []
    if spill:  # 4000 one-byte reports against 600 bytes of memory, 2 buckets: spilled, then split again
        from dpdist._io import _shuffle
        from dpdist._io._shuffle import ReportShuffler

        monkeypatch.setattr(_shuffle, "SHUFFLE_MEMORY_BYTES", 600)
        monkeypatch.setattr(_shuffle, "SHUFFLE_BUCKETS", 2)
        original = ReportShuffler._open_buckets
        monkeypatch.setattr(ReportShuffler, "_open_buckets", lambda self: (opened.append(self._depth), original(self))[1])
    values = sorted_values()
    out = tmp_path / f"reports{suffix}"
    assert _privatize(tmp_path, values, out) == 0
    reports = io.read_reports(out).reports
    assert len(reports) == N
    assert_random_order(reports, values)
    assert (0 in opened and 1 in opened) if spill else not opened
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["sorted.csv", out.name])  # no temporary files


def test_privatize_with_a_seed_is_reproducible_and_without_one_is_not(tmp_path):
    from dpdist._rng import order_generator

    values = sorted_values(1000)
    runs = {}
    for name, extra in [("a", ["--seed", "5"]), ("b", ["--seed", "5"]), ("c", ["--seed", "6"]), ("d", []), ("e", [])]:
        assert _privatize(tmp_path, values, tmp_path / f"{name}.bin", *extra) == 0
        runs[name] = io.read_reports(tmp_path / f"{name}.bin").reports
    assert np.array_equal(runs["a"], runs["b"])
    assert not np.array_equal(runs["a"], runs["c"]) and not np.array_equal(runs["d"], runs["e"])
    assert_random_order(runs["a"], values)
    # the seeded order is the seed's order stream (dpdist._rng.order_generator) over the reports in row order
    blocks = [local.from_config(GRR).privatize(values[start : start + 500], rng=np.random.default_rng(child))
              for start, child in zip(range(0, 1000, 500), np.random.SeedSequence(5).spawn(2))]
    in_rows = np.concatenate(blocks)
    assert np.array_equal(runs["a"], in_rows[order_generator(np.random.SeedSequence(5)).permutation(1000)])


def test_write_reports_shuffles_unless_told_not_to(tmp_path):
    protocol = local.from_config(GRR)
    values = sorted_values()
    reports = protocol.privatize(values, rng=2)
    io.write_reports(tmp_path / "shuffled.bin", protocol, reports)
    assert_random_order(io.read_reports(tmp_path / "shuffled.bin").reports, values)
    io.write_reports(tmp_path / "kept.bin", protocol, reports, shuffle=False)
    assert np.array_equal(io.read_reports(tmp_path / "kept.bin").reports, reports)
    io.write_reports(tmp_path / "seeded.bin", protocol, reports, rng=3)
    assert np.array_equal(io.read_reports(tmp_path / "seeded.bin").reports, reports[np.random.default_rng(3).permutation(N)])


# ---------------------------------------------------------------------- the shuffle itself
# through files 1,200 trials are 1.8 CPU-s (50 expected per order)
@pytest.mark.parametrize("memory, buckets, trials", [
    pytest.param(None, None, 4800, id="in-memory"),
    pytest.param(1, 2, 1200, id="through-files-1200"),
])
@pytest.mark.slow  # a law checked from repeated shuffles
def test_the_shuffle_draws_every_order_equally_often(tmp_path, memory, buckets, trials):
    """All 24 orders of 4 reports added in two batches; through files every report spills and buckets
    of two or more reports are split again (recursion), so every path of the algorithm is drawn."""
    from dpdist._io._shuffle import ReportShuffler

    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    orders = {order: index for index, order in enumerate(itertools.permutations(range(4)))}
    counts = np.zeros(len(orders))
    generator = np.random.default_rng(17)
    for _ in range(trials):
        with ReportShuffler(protocol, generator, memory_bytes=memory, buckets=buckets, directory=tmp_path) as shuffler:
            shuffler.add(np.array([0, 1], dtype=np.uint8))
            shuffler.add(np.array([2, 3], dtype=np.uint8))
            out = np.concatenate(list(shuffler.blocks(3)))
        counts[orders[tuple(out.tolist())]] += 1
    assert chi_square_pvalue(counts, np.full(24, 1 / 24)) > ALPHA, counts
    assert list(tmp_path.iterdir()) == []


def test_the_shuffle_keeps_every_report_of_a_structured_or_2d_format(tmp_path):
    from dpdist._io._shuffle import ReportShuffler

    for protocol in (local.make("oue", epsilon=1.0, domain_size=40), local.make("hh", epsilon=1.0, bins=16)):
        values = np.arange(3000) % 8 if protocol.tags.kind == "frequency" else np.linspace(0, 1, 3000)
        reports = protocol.privatize(values, rng=4)
        with ReportShuffler(protocol, np.random.default_rng(5), memory_bytes=4096, directory=tmp_path) as shuffler:
            for start in range(0, 3000, 700):
                shuffler.add(reports[start : start + 700])
            blocks = list(shuffler.blocks(1000))
        assert [len(block) for block in blocks] == [1000, 1000, 1000]
        out = np.concatenate(blocks)
        keys = lambda array: sorted(row.tobytes() for row in array)  # noqa: E731
        assert keys(out) == keys(reports)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- dpdist submit and the Python client
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("dpdist.serve")
    from serve_support import ServerProcess

    process = ServerProcess(str(tmp_path_factory.mktemp("serve") / "campaigns.sqlite")).start()
    yield process
    process.stop()


@pytest.fixture
def sent(monkeypatch):
    """The reports of every batch the client PUTs, in the order they leave (and still sent to the server)."""
    from dpdist.client import Client

    bodies, original = [], Client.submit_body

    def recording(self, campaign, batch_id, body, *args, **kwargs):
        bodies.append(body)
        return original(self, campaign, batch_id, body, *args, **kwargs)

    monkeypatch.setattr(Client, "submit_body", recording)
    return bodies


def _campaign(server) -> str:
    from dpdist.client import AdminClient
    from serve_support import ADMIN_TOKEN

    name = "order-" + uuid.uuid4().hex[:8]
    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        admin.create_campaign(name, GRR)
        admin.open_campaign(name)
    return name


def _reports_of(bodies):
    protocol = local.from_config(GRR)
    return np.concatenate([io.decode_record(body, protocol).reports for body in bodies])


def _n(server, name) -> int:
    from dpdist.client import AdminClient
    from serve_support import ADMIN_TOKEN

    with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
        return admin.campaign(name)["n"]


@pytest.mark.slow  # a dpdist serve subprocess
def test_submit_column_sends_a_sorted_column_in_random_order(server, sent, tmp_path, capsys):
    name = _campaign(server)
    values = sorted_values()
    data = tmp_path / "sorted.csv"
    data.write_text("value\n" + "\n".join(map(str, values)) + "\n")
    assert main(["submit", "--server", server.url, "--campaign", name, str(data), "--column", "value",
                 "--batch-size", "500"]) == 0
    assert "8 batch(es) acknowledged, 4000 report(s) accepted" in capsys.readouterr().out
    assert len(sent) == 8
    assert_random_order(_reports_of(sent), values)
    assert _n(server, name) == N


@pytest.mark.slow  # a dpdist serve subprocess
def test_client_submit_values_and_reports_send_sorted_values_in_random_order(server, sent):
    from dpdist.client import Client

    name = _campaign(server)
    values = sorted_values()
    with Client(server.url) as device:
        device.submit_values(name, values, batch_size=500)
        assert len(sent) == 8
        assert_random_order(_reports_of(sent), values)
        sent.clear()
        protocol = local.from_config(GRR)
        device.submit_reports(name, protocol, protocol.privatize(values, rng=3))  # one batch, fresh id: shuffled
        assert_random_order(_reports_of(sent), values)
        # under a given batch id (a resend of a batch the caller kept) the bytes are those given
        sent.clear()
        kept = protocol.privatize(values[:10], rng=4)
        batch_id = io.new_file_id()
        device.submit_reports(name, protocol, kept, batch_id=batch_id)
        assert device.submit_reports(name, protocol, kept, batch_id=batch_id)["duplicate"] is True
        assert sent == [io.encode_record(protocol, kept, batch_id)] * 2
    assert _n(server, name) == 2 * N + 10
