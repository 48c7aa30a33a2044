"""The command line runs a campaign of adaptive quantile rounds from a CSV.

``dpdist campaign create --rounds``, ``dpdist submit --column`` (each row one device answering one round,
never more rows to a round than its room) and ``dpdist campaign rounds`` (the rounds and the release),
against the service in process (its HTTP API through Starlette's test client).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("starlette")


from dpdist.cli import main  # noqa: E402
from serve_support import cli_against_app  # noqa: E402
import time  # noqa: E402 - after the extra's check
import httpx  # noqa: E402 - after the extra's check
import server_zygote  # noqa: E402
from serve_support import ServerProcess, admin_headers  # noqa: E402 - after the extra's check

ADMIN, TOKEN = "admin-token-0123456789", "submit-token-0123456789"
PLAN = {"q": [0.25, 0.5], "epsilon": 2.0, "bounds": [0.0, 1.0], "rounds": 3, "grid_size": 64, "reports": 600}
SERVER = "http://collector.test"


@pytest.fixture
def service(tmp_path, monkeypatch):
    """Every :class:`dpdist.client.Client` the command line makes talks to one in-process service."""
    with cli_against_app(tmp_path, monkeypatch, admin=ADMIN, submit=TOKEN, server=SERVER) as http:
        yield http


def _rounds(http) -> dict:
    return http.get("/api/campaigns/med/rounds", headers={"authorization": f"Bearer {ADMIN}"}).json()


def test_a_csv_runs_a_whole_rounds_campaign_from_the_command_line(service, tmp_path, capsys):
    values = np.random.default_rng(11).beta(2, 5, 650)
    data = tmp_path / "incomes.csv"
    data.write_text("x\n" + "\n".join(f"{value:.6f}" for value in values) + "\n")
    assert main(["campaign", "create", "--server", SERVER, "--name", "med", "--rounds", json.dumps(PLAN),
                 "--submit-token", TOKEN, "--open"]) == 0
    capsys.readouterr()
    assert main(["submit", "--server", SERVER, "--campaign", "med", str(data), "--column", "x", "--batch-size", "64"]) == 0
    out, err = capsys.readouterr()
    assert "submit: campaign med: " in out and "600 report(s) accepted" in out
    assert re.findall(r"round (\d) of 3 \(med-r\d\): (\d+) row\(s\)", err) == [("1", "100"), ("2", "200"), ("3", "300")]
    assert "600 of 650 row(s) answered a round; 50 row(s) not used; campaign med is closed" in err
    report = _rounds(service)
    assert [(r["state"], r["n"], r["refused_batches"]) for r in report["rounds"]] == [("closed", 100, {}), ("closed", 200, {}),
                                                                                     ("closed", 300, {})]
    # every row answered one round: the rounds' cuts follow the earlier rounds, the release is the plan's
    assert main(["campaign", "rounds", "--server", SERVER, "med"]) == 0
    shown = capsys.readouterr().out
    assert "campaign med (closed): adaptive quantile rounds, round 3 of 3" in shown
    assert re.search(r"med-r3 +closed +300 / 300", shown)
    median = float(re.search(r"q=0\.5 +(\S+)", shown).group(1))
    # 600 users at epsilon 2: the median's rank error within 4 standard errors of one cut's fraction in round 3
    # (300 users over at most 2 x 5 cuts: 30 each; SD of a fraction 0.5 / (2p - 1) / sqrt(30) = 0.12)
    assert abs(np.mean(values <= median) - 0.5) < 4 * 0.5 / 0.762 / np.sqrt(30)
    # the same command again resends the journaled parts (counted once) and randomizes nothing new
    assert main(["submit", "--server", SERVER, "--campaign", "med", str(data), "--column", "x", "--batch-size", "64"]) == 0
    out, err = capsys.readouterr()
    assert "0 report(s) accepted" in out and "had already been counted" in out
    assert [r["n"] for r in _rounds(service)["rounds"]] == [100, 200, 300]


def test_each_file_is_split_at_random_over_the_rounds_and_rows_wait_for_their_round(service, tmp_path, capsys):
    """A file's rows answer every round in proportion to its size, never the round open when the file
    arrives: rows whose round is not open yet wait (the command stops and says so), and a run of the same command
    after their round opened sends them."""
    rng = np.random.default_rng(12)
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("x\n" + "\n".join(f"{value:.6f}" for value in rng.beta(2, 5, 150)) + "\n")
    second.write_text("x\n" + "\n".join(f"{value:.6f}" for value in rng.beta(2, 5, 500)) + "\n")
    main(["campaign", "create", "--server", SERVER, "--name", "med", "--rounds", json.dumps(PLAN), "--submit-token", TOKEN,
          "--open"])
    capsys.readouterr()
    submit_first = ["submit", "--server", SERVER, "--campaign", "med", str(first), "--column", "x"]
    submit_second = ["submit", "--server", SERVER, "--campaign", "med", str(second), "--column", "x"]
    assert main(submit_first) == 0  # 150 rows of 600 planned: 25, 50 and 75 rows for rounds 1, 2 and 3
    err = capsys.readouterr().err
    assert "[25, 50, 75]" in err and re.findall(r"round (\d) of 3 \(med-r\d\): (\d+) row\(s\)", err) == [("1", "25")]
    assert "round 1 of 3 is open and takes 75 more report(s)" in err
    assert "125 row(s) wait for their round (50 for round 2, 75 for round 3)" in err
    assert main(submit_second) == 0  # 500 rows: 83, 167, 250; round 1 takes 75 of its 83, then round 2 opens
    err = capsys.readouterr().err
    assert re.findall(r"round (\d) of 3 \(med-r\d\): (\d+) row\(s\)", err) == [("1", "75"), ("2", "167")]
    assert "250 row(s) wait for their round (250 for round 3)" in err
    assert [(r["state"], r["n"]) for r in _rounds(service)["rounds"]] == [("closed", 100), ("open", 167)]
    assert main(submit_first) == 0  # again: its round-2 rows (33 of its 50 fit) and round-3 rows go out
    err = capsys.readouterr().err
    assert re.findall(r"round (\d) of 3 \(med-r\d\): (\d+) row\(s\)", err) == [("2", "33"), ("3", "75")]
    assert main(submit_second) == 0
    err = capsys.readouterr().err
    assert re.findall(r"round (\d) of 3 \(med-r\d\): (\d+) row\(s\)", err) == [("3", "225")]
    assert "campaign med is closed" in err
    assert [(r["state"], r["n"]) for r in _rounds(service)["rounds"]] == [("closed", 100), ("closed", 200), ("closed", 300)]


def test_a_split_gives_every_round_a_random_share_of_a_sorted_file():
    """split_rows: shares proportional to the rounds' sizes (largest remainders), and a round's rows a simple random
    sample of the file whatever its order: the mean rank of a round's rows in a file of 15,000 rows is within 4
    standard errors of the file's (SE of a sample mean without replacement)."""
    from dpdist.cli._submit_rounds import split_rows

    order, shares = split_rows(15_000, [1000, 2000, 3000, 4000, 5000], np.random.default_rng(0))
    assert shares.tolist() == [1000, 2000, 3000, 4000, 5000] and sorted(order.tolist()) == list(range(15_000))
    assert split_rows(1000, [1000, 2000, 3000, 4000, 5000], np.random.default_rng(0))[1].tolist() == [67, 133, 200, 267, 333]
    assert split_rows(7, [1, 1, 1], np.random.default_rng(0))[1].tolist() == [3, 2, 2]
    ranks = np.arange(15_000)  # a file sorted by value: a row's rank is its value's
    offsets = np.concatenate([[0], np.cumsum(shares)])
    for k, share in enumerate(shares):
        group = ranks[order[offsets[k] : offsets[k] + share]]
        se = ranks.std() / np.sqrt(share) * np.sqrt(1 - share / ranks.size)
        assert abs(group.mean() - ranks.mean()) < 4 * se, (k, group.mean())


def test_options_of_one_device_or_of_other_campaigns_are_refused_naming_them(service, tmp_path, capsys):
    data = tmp_path / "x.csv"
    data.write_text("x\n0.5\n")
    main(["campaign", "create", "--server", SERVER, "--name", "med", "--rounds", json.dumps(PLAN), "--open"])
    capsys.readouterr()
    assert main(["submit", "--server", SERVER, "--campaign", "med", str(data), "--column", "x", "--memo",
                 str(tmp_path / "memo.json")]) == 2
    assert "'--memo' option does not apply to campaign 'med', which runs in rounds" in capsys.readouterr().err


@pytest.mark.slow
def test_rounds_are_split_at_random_whoever_answers_first(tmp_path):
    """1,000 devices of one value answering first no longer fill round 1 (which put the released median
    outside its 99.9% interval): each party's rows are split at random over the rounds."""
    import os
    import sys

    server = ServerProcess(str(tmp_path / "campaigns.sqlite"), options=("--rate-limit", "0")).start()
    try:
        plan = {"q": [0.5], "epsilon": 1.0, "bounds": [0, 1000], "reports": 15_000, "level": 0.999}
        answer = httpx.post(f"{server.url}/api/campaigns", headers=admin_headers(),
                            json={"campaign": "income", "rounds": plan})
        assert answer.status_code == 201, answer.text
        assert httpx.post(f"{server.url}/api/campaigns/income/open", headers=admin_headers()).status_code == 200
        assert httpx.get(f"{server.url}/api/campaigns/income/config").json()["rounds"]["room"] == 1000
        # honest devices, each answering once with its own randomized report: the 1,000 with no income answer
        # first (as a region or a time zone answering first would: room enough to fill round 1), then everyone
        # else; each party's command waits for the rounds its rows were drawn for
        zeros = np.zeros(1000)
        others = np.random.default_rng(3).uniform(0, 1000, 14_000).round(2)
        env = {**os.environ, "DPDIST_CACHE_DIR": str(tmp_path / "cache")}
        runs = []
        for name, values in (("first.csv", zeros), ("rest.csv", others)):
            path = tmp_path / name
            path.write_text("income\n" + "\n".join(map(str, values)) + "\n")
            runs.append(server_zygote.started([sys.executable, "-m", "dpdist.cli", "submit", "--server", server.url, "--campaign",
                                               "income", str(path), "--column", "income", "--wait", "240"], env, tmp_path))
            if name == "first.csv":  # the zeros' command has sent what it sends before anyone else answers
                deadline = time.monotonic() + 120
                while runs[0].poll() is None and time.monotonic() < deadline:
                    stats = httpx.get(f"{server.url}/api/campaigns/income/rounds", headers=admin_headers()).json()
                    if stats["rounds"][0]["n"]:
                        break
                    time.sleep(0.2)
                time.sleep(1.0)
        for run in runs:
            _, err = run.communicate(timeout=300)
            assert run.returncode == 0, err[-2000:]
        rounds = httpx.get(f"{server.url}/api/campaigns/income/rounds", headers=admin_headers(), timeout=60).json()
        assert [r["n"] for r in rounds["rounds"]] == [1000, 2000, 3000, 4000, 5000]
        estimate = rounds["estimate"]
        truth = float(np.median(np.concatenate([zeros, others])))  # 464-465
        low, high = estimate["low"][0], estimate["high"][0]
        assert low <= truth <= high, (f"released median {estimate['values'][0]:.1f} with 99.9% interval "
                                      f"[{low:.1f}, {high:.1f}]; the median of every device's value is {truth:.1f}")
    finally:
        server.stop()
