"""A campaign that runs adaptive LDP quantile rounds in ``dpdist serve`` (in process).

Round k's config is published in the campaign's public config; a round's reports are counted in its
own campaign; a full round (or an admin) moves the campaign to the next round, whose cuts come from
the rounds before; a batch for a round that is over is refused and counted; a restarted service
continues where it was.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import numpy as np
import pytest

from dpdist import io, local
from dpdist.errors import InvalidParameterError, PrivacyBudgetError

pytest.importorskip("starlette")

from dpdist.serve import create_app  # noqa: E402 - after the extra's check
from serve_support import ServerProcess, admin_headers  # noqa: E402 - after the extra's check

ADMIN, TOKEN = "admin-token-0123456789", "submit-token-0123456789"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
DEVICE_HEADERS = {"authorization": f"Bearer {TOKEN}", "content-type": "application/octet-stream"}
PLAN = {"q": [0.25, 0.5], "epsilon": 2.0, "bounds": [0.0, 1.0], "rounds": 3, "grid_size": 64, "reports": 600}


def _client(url):
    app = create_app(url, admin_token=ADMIN)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=ADMIN_HEADERS)


async def _answer(client, public, values, rng):
    """Each value one device: randomize under the published round's config, submit to ``submit_to``."""
    protocol = local.from_config(public["config"])
    acks = []
    for start in range(0, len(values), 10):
        body = io.encode_record(protocol, protocol.privatize(values[start:start + 10], rng=rng))
        sent = await client.put(f"/api/campaigns/{public['submit_to']}/batches/{uuid.uuid4().hex}", content=body,
                                headers=DEVICE_HEADERS)
        assert sent.status_code == 200, sent.text
        acks.append((sent.request.url.path, body))
    return acks


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def url(request, tmp_path):
    from serve_support import database_url

    with database_url(request.param, tmp_path) as found:
        yield found


def test_rounds_advance_refuse_stale_batches_and_survive_a_restart(url):
    rng = np.random.default_rng(1)
    values = rng.beta(2, 5, 600)

    async def first_service():
        async with _client(url) as client:
            created = await client.post("/api/campaigns", json={"campaign": "med", "rounds": PLAN, "submit_token": TOKEN})
            assert created.status_code == 201, created.text
            assert created.json()["rounds"]["sizes"] == [100, 200, 300]
            assert (await client.post("/api/campaigns/med/open")).status_code == 200
            public = (await client.get("/api/campaigns/med/config")).json()
            assert public["rounds"]["round"] == 1 and public["submit_to"] == "med-r1"
            assert public["config"]["protocol"] == "threshold" and public["config"]["round"] == 1
            assert public["client_view"]["config"] == public["config"] and public["submit_token_required"]
            own = (await client.get("/api/campaigns/med-r1/config")).json()  # a round's own campaign names its campaign
            assert own["round_of"] == "med" and "round_of" not in public
            acks = await _answer(client, public, values[:100], rng)
            moved = (await client.get("/api/campaigns/med/config")).json()  # round 1 is full: round 2 is published
            assert moved["rounds"]["round"] == 2 and moved["submit_to"] == "med-r2" and moved["config"]["round"] == 2
            assert moved["config"]["cuts"] != public["config"]["cuts"]
            stale_body = io.encode_record(local.from_config(public["config"]), local.from_config(public["config"]).privatize([0.3], rng=2))
            stale = await client.put(f"/api/campaigns/med-r1/batches/{uuid.uuid4().hex}", content=stale_body, headers=DEVICE_HEADERS)
            assert stale.status_code == 409 and stale.json()["error"] == "stale_round", stale.text
            retry = await client.put(acks[0][0], content=acks[0][1], headers=DEVICE_HEADERS)
            assert retry.status_code == 200 and retry.json()["duplicate"]
            direct = await client.put(f"/api/campaigns/med/batches/{uuid.uuid4().hex}", content=stale_body, headers=DEVICE_HEADERS)
            assert direct.status_code == 409 and direct.json()["error"] == "rounds_campaign"
            round_one = (await client.get("/api/campaigns/med-r1")).json()
            assert round_one["state"] == "closed" and round_one["n"] == 100 and round_one["refused_batches"] == {"stale_round": 1}
            await _answer(client, moved, values[100:250], rng)  # 150 of round 2's 200
            return moved

    moved = asyncio.run(first_service())

    async def second_service():  # a new service on the same database: the same round, the same counts
        async with _client(url) as client:
            public = (await client.get("/api/campaigns/med/config")).json()
            assert public["rounds"]["round"] == 2 and public["config"] == moved["config"]
            report = (await client.get("/api/campaigns/med/rounds")).json()
            assert [r["n"] for r in report["rounds"]] == [100, 150] and report["estimate"]["kind"] == "quantiles"
            assert report["history"][-1]["n"] == 250  # the rounds' histories one after another (the dashboard's)
            advanced = await client.post("/api/campaigns/med/rounds/advance")  # the admin closes round 2 early
            assert advanced.status_code == 200 and advanced.json()["round"] == 3
            last = (await client.get("/api/campaigns/med/config")).json()
            assert last["submit_to"] == "med-r3"
            await _answer(client, last, values[250:550], rng)
            done = (await client.get("/api/campaigns/med/rounds")).json()
            summary = (await client.get("/api/campaigns/med")).json()
            return done, summary

    done, summary = asyncio.run(second_service())
    assert [r["n"] for r in done["rounds"]] == [100, 150, 300] and all(r["state"] == "closed" for r in done["rounds"])
    assert summary["state"] == "closed"  # the last round's group filled: the campaign is over
    counts = [point["n"] for point in done["history"]]
    batches = [point["batches"] for point in done["history"]]
    assert counts == sorted(counts) and counts[-1] == 550 and batches == sorted(batches) and batches[0] >= 1
    released = done["estimate"]
    assert released["guarantee"]["epsilon"] == 2.0
    # 550 users at epsilon 2: the median's rank error stays below 4 standard errors of one cut's fraction in round 3
    # (300 users over at most 2 x 5 cuts: 30 each; SD of a fraction 0.5 / (2p - 1) / sqrt(30) = 0.12)
    median = released["values"][1] if "values" in released else released["quantiles"][1]["value"]
    assert abs(np.mean(values[:550] <= median) - 0.5) < 4 * 0.5 / 0.762 / np.sqrt(30)


def test_a_batch_larger_than_the_room_left_is_refused_and_the_round_stays_open(tmp_path):
    """A batch that does not fit is refused whole, saying its size and the room left; the round stays
    open (it used to close with the reports it had and open the next: any submitter could end every round) and counts
    the next batches until its count reaches its size."""
    rng = np.random.default_rng(5)
    values = rng.beta(2, 5, 160)

    async def work():
        async with _client(str(tmp_path / "c.sqlite")) as client:
            await client.post("/api/campaigns", json={"campaign": "med", "rounds": PLAN, "submit_token": TOKEN})
            await client.post("/api/campaigns/med/open")
            public = (await client.get("/api/campaigns/med/config")).json()
            assert public["rounds"]["room"] == 100
            await _answer(client, public, values[:60], rng)
            protocol = local.from_config(public["config"])
            oversized = io.encode_record(protocol, protocol.privatize(values[60:110], rng=rng))  # 50 > the 40 left
            refused = await client.put(f"/api/campaigns/med-r1/batches/{uuid.uuid4().hex}", content=oversized,
                                       headers=DEVICE_HEADERS)
            after = (await client.get("/api/campaigns/med/config")).json()
            round_one = (await client.get("/api/campaigns/med-r1")).json()
            await _answer(client, after, values[110:150], rng)  # the 40 that fit
            full = (await client.get("/api/campaigns/med/config")).json()
            round_one_full = (await client.get("/api/campaigns/med-r1")).json()
            return refused, after, round_one, full, round_one_full

    refused, after, round_one, full, round_one_full = asyncio.run(work())
    assert refused.status_code == 409 and refused.json()["error"] == "campaign_full"
    assert "batch of 50 reports is larger than the room left" in refused.json()["detail"]
    assert "40 report(s)" in refused.json()["detail"] and "stays open" in refused.json()["detail"]
    assert after["rounds"]["round"] == 1 and after["submit_to"] == "med-r1" and after["rounds"]["room"] == 40
    assert round_one["state"] == "open" and round_one["n"] == 60 and round_one["refused_batches"] == {"campaign_full": 1}
    assert full["rounds"]["round"] == 2 and full["submit_to"] == "med-r2" and full["rounds"]["room"] == 200
    assert round_one_full["state"] == "closed" and round_one_full["n"] == 100


def test_bad_rounds_campaigns_are_refused_naming_the_field(tmp_path):
    async def work():
        async with _client(str(tmp_path / "c.sqlite")) as client:
            outcomes = []
            for document in ({"rounds": {**PLAN, "q": [1.5]}}, {"rounds": {**PLAN, "reports": 0}},
                             {"rounds": {"q": [0.5]}}, {"rounds": PLAN, "config": {"protocol": "grr"}},
                             {"rounds": PLAN, "enrollment": True}):
                answer = await client.post("/api/campaigns", json={"campaign": "bad", **document})
                outcomes.append((answer.status_code, answer.json()["error"]))
            return outcomes

    assert asyncio.run(work()) == [(400, "invalid_rounds")] * 5


def test_a_rounds_campaign_and_its_rounds_names_are_not_shared(tmp_path):
    """A round's name cannot be taken by another campaign, before or after the rounds campaign exists."""
    grr = {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 4}

    async def work():
        async with _client(str(tmp_path / "c.sqlite")) as client:
            await client.post("/api/campaigns", json={"campaign": "old-r2", "config": grr})
            clash = await client.post("/api/campaigns", json={"campaign": "old", "rounds": PLAN})
            await client.post("/api/campaigns", json={"campaign": "med", "rounds": PLAN})
            taken = await client.post("/api/campaigns", json={"campaign": "med-r3", "config": grr})
            return [(a.status_code, a.json()["error"]) for a in (clash, taken)]

    assert asyncio.run(work()) == [(409, "campaign_exists")] * 2


def test_the_python_client_submits_to_the_current_rounds_campaign():
    from dpdist.client import Client

    config = local.make("threshold", epsilon=1.0, cuts=[256, 512]).config()
    paths = []

    def handler(request):
        paths.append((request.method, request.url.path))
        if request.method == "GET":
            return httpx.Response(200, json={"campaign": "med", "state": "open", "config": config, "submit_to": "med-r2"})
        return httpx.Response(200, json={"campaign": "med-r2", "batch_id": request.url.path.rsplit("/", 1)[1],
                                         "n_read": 3, "accepted": 3, "rejected": {}, "duplicate": False})

    with Client("http://service.test", transport=httpx.MockTransport(handler)) as client:
        client.submit_values("med", [0.1, 0.6, 0.9])
    assert paths[0] == ("GET", "/api/campaigns/med/config")
    assert [p for m, p in paths[1:]] and all(p.startswith("/api/campaigns/med-r2/batches/") for m, p in paths[1:])


def test_a_device_with_a_ledger_answers_one_round_of_a_campaign(tmp_path):
    """The plan's epsilon per user holds by parallel composition only if each device answers one round: a device's
    ledger refuses a later round, the same round again, and a round's own campaign, before anything is drawn."""
    from dpdist.client import Client

    published = {"doc": {}}
    puts = []

    def handler(request):
        if request.method == "GET":
            return httpx.Response(200, json=published["doc"])
        puts.append(request.url.path)
        return httpx.Response(200, json={"campaign": request.url.path.split("/")[3], "batch_id": request.url.path.rsplit("/", 1)[1],
                                         "n_read": 1, "accepted": 1, "rejected": {}, "duplicate": False})

    def round_document(k, **fields):
        config = local.make("threshold", epsilon=1.0, cuts=[100 * k], round=k).config()
        return {"campaign": "med", "state": "open", "config": config, "submit_to": f"med-r{k}",
                "rounds": {"round": k, "of": 3, "sizes": [100, 200, 300]}, **fields}

    path = tmp_path / "device.json"
    with Client("http://service.test/", transport=httpx.MockTransport(handler)) as client:
        published["doc"] = round_document(1)
        with io.open_ledger(path) as ledger:
            assert ledger.round_for("med", "http://service.test", [100, 200, 300], rng=3) == 1  # seeded: round 1
            client.submit_values("med", [0.4], ledger=ledger)
            with pytest.raises(InvalidParameterError, match="takes one value"):
                client.submit_values("med", [0.4, 0.5], ledger=ledger)
        assert len(puts) == 1 and puts[0].startswith("/api/campaigns/med-r1/batches/")
        for document in (round_document(2), round_document(1),
                         {**round_document(2), "campaign": "med-r2", "rounds": None, "submit_to": None, "round_of": "med"}):
            published["doc"] = document
            with io.open_ledger(path) as ledger, pytest.raises(PrivacyBudgetError, match="already answered 'med'"):
                client.submit_values(document["campaign"], [0.4], ledger=ledger)
        assert len(puts) == 1
    with io.open_ledger(path) as ledger:
        assert ledger.answered("med", "http://service.test") and len(ledger.charges()) == 1
    # without a ledger every value is another user's (a proxy, a simulation): nothing to remember
    with Client("http://service.test", transport=httpx.MockTransport(handler)) as client:
        published["doc"] = round_document(2)
        client.submit_values("med", [0.1, 0.2])
    assert len(puts) == 2


def test_a_device_keeps_its_answer_when_the_send_fails_and_draws_nothing_without_an_open_round(tmp_path):
    """The ledger file is written before the report leaves: a batch the service stored but could not acknowledge
    (the answer lost, retries spent) still counts as the device's answer. No open round: nothing is drawn. The
    question is the server's campaign id, however the device typed it."""
    from dpdist.client import Client
    from dpdist.errors import ServiceRefusedError, ServiceUnavailableError

    published, stored = {"doc": {}}, []

    def handler(request):
        if request.method == "GET":
            return httpx.Response(200, json=published["doc"])
        stored.append(request.url.path)  # stored, but the acknowledgement never arrives
        raise httpx.ReadTimeout("the answer was lost", request=request)

    def round_document(k, **rounds):
        config = local.make("threshold", epsilon=1.0, cuts=[100 * k], round=k).config()
        return {"campaign": "q", "state": "open", "config": config, "submit_to": f"q-r{k}",
                "rounds": {"round": k, "of": 3, "round_state": "open", "sizes": [100, 200, 300], **rounds}}

    path = tmp_path / "device.json"
    with io.open_ledger(path) as ledger:
        assert ledger.round_for("q", "http://service.test", [100, 200, 300], rng=3) == 1  # seeded: round 1
    with Client("http://service.test", transport=httpx.MockTransport(handler), retries=0) as client:
        for document in ({**round_document(1), "submit_to": None, "rounds": {"round": 1, "of": 3, "round_state": "created"}},
                         round_document(1, round_state="closed")):
            published["doc"] = document
            with io.open_ledger(path) as ledger, pytest.raises(ServiceRefusedError, match="no round is open") as refused:
                client.submit_values("q", [0.4], ledger=ledger)
            assert refused.value.code == "no_open_round" and ledger.charges() == []
        published["doc"] = round_document(1)
        with pytest.raises(ServiceUnavailableError), io.open_ledger(path) as ledger:
            client.submit_values("q", [0.4], ledger=ledger)
        assert len(stored) == 1
        state = json.loads(path.read_text())
        assert state["version"] == 2 and list(state["answered"]) == ["http://service.test q"]
        published["doc"] = round_document(2)
        with io.open_ledger(path) as ledger, pytest.raises(PrivacyBudgetError, match="already answered 'q'"):
            client.submit_values("%71", [0.4], ledger=ledger)  # the service decodes %71 to q: the same campaign
    assert len(stored) == 1


def test_a_device_answers_the_round_it_drew_at_random_waiting_for_it(tmp_path):
    """A device's round is drawn once, in proportion to the rounds' sizes, and kept in its ledger (saved
    before any refusal): an earlier round open is 'wait_for_round', a later one 'round_over', both before anything
    is drawn; the device answers when its own round is open (the draws of many devices follow the sizes: below)."""
    from dpdist.client import Client
    from dpdist.errors import ServiceRefusedError
    from dpdist.local.ledger import PrivacyLedger

    published, puts = {"doc": {}}, []

    def handler(request):
        if request.method == "GET":
            return httpx.Response(200, json=published["doc"])
        puts.append(request.url.path)
        return httpx.Response(200, json={"campaign": "q-r2", "batch_id": request.url.path.rsplit("/", 1)[1],
                                         "n_read": 1, "accepted": 1, "rejected": {}, "duplicate": False})

    def round_document(k):
        config = local.make("threshold", epsilon=1.0, cuts=[100 * k], round=k).config()
        return {"campaign": "q", "state": "open", "config": config, "submit_to": f"q-r{k}",
                "rounds": {"round": k, "of": 3, "round_state": "open", "sizes": [100, 200, 300]}}

    path = tmp_path / "device.json"
    with io.open_ledger(path) as ledger:
        assert ledger.round_for("q", "http://service.test", [100, 200, 300], rng=2) == 2  # seeded: round 2
    assert json.loads(path.read_text())["rounds"] == {"http://service.test q": 2}
    with Client("http://service.test", transport=httpx.MockTransport(handler), retries=0) as client:
        published["doc"] = round_document(1)
        with io.open_ledger(path) as ledger, pytest.raises(ServiceRefusedError, match="answers round 2") as refused:
            client.submit_values("q", [0.4], ledger=ledger)
        assert refused.value.code == "wait_for_round" and ledger.charges() == [] and puts == []
        published["doc"] = round_document(2)
        with io.open_ledger(path) as ledger:
            client.submit_values("q", [0.4], ledger=ledger)
        assert len(puts) == 1 and puts[0].startswith("/api/campaigns/q-r2/")
        other = tmp_path / "other.json"
        with io.open_ledger(other) as ledger:
            assert ledger.round_for("q", "http://service.test", [100, 200, 300], rng=3) == 1
        published["doc"] = round_document(3)
        with io.open_ledger(other) as ledger, pytest.raises(ServiceRefusedError, match="which is over") as refused:
            client.submit_values("q", [0.4], ledger=ledger)
        assert refused.value.code == "round_over" and ledger.charges() == [] and len(puts) == 1
    # a fresh device's draw (CSPRNG) is kept: asking again gives the same round
    ledger = PrivacyLedger()
    assert len({ledger.round_for("q", "http://c.test", [100, 200, 300]) for _ in range(20)}) == 1
    with pytest.raises(InvalidParameterError, match="sizes"):
        PrivacyLedger().round_for("q", "http://c.test", [0, 0])


# 6,000 devices (0.6 CPU-s: a CSPRNG each) in the whole suite; 1,500 in the fast loop, whose 4-SD bound (at most
# 0.039 for a share of 1/6) still refuses a uniform draw (1/3 instead of 1/6) or a draw shifted by one round
@pytest.mark.parametrize("devices", [pytest.param(6000, marks=pytest.mark.slow), 1500])
def test_fresh_devices_draw_their_rounds_in_proportion_to_the_sizes(devices):
    from dpdist.local.ledger import PrivacyLedger

    draws = np.array([PrivacyLedger().round_for("q", "http://c.test", [100, 200, 300]) for _ in range(devices)])
    for k, share in ((1, 1 / 6), (2, 2 / 6), (3, 3 / 6)):  # binomial SD of a share of `devices`
        assert abs(np.mean(draws == k) - share) < 4 * np.sqrt(share * (1 - share) / devices), (k, np.mean(draws == k))


def test_an_advance_cut_short_by_a_crash_is_finished_by_the_next_fetch(tmp_path):
    """Round 1 closed and round 2's campaign created but not opened, the round pointer not moved (a process killed
    mid-advance): the next config fetch opens round 2 with the config the rounds before determine."""
    url = str(tmp_path / "campaigns.sqlite")
    values = np.random.default_rng(3).beta(2, 5, 100)

    async def fill_round_one():
        async with _client(url) as client:
            await client.post("/api/campaigns", json={"campaign": "med", "rounds": PLAN, "submit_token": TOKEN})
            await client.post("/api/campaigns/med/open")
            public = (await client.get("/api/campaigns/med/config")).json()
            await _answer(client, public, values, np.random.default_rng(4))

    asyncio.run(fill_round_one())
    service = create_app(url, admin_token=ADMIN).state.service  # the killed process's last steps, by hand
    rounds = service.rounds.of(service.store.row("med"))
    service.store.transition("med-r1", "closed")
    expected = rounds.plan.protocol(1, service.rounds.history(rounds, 1)).config()
    service.store.create("med-r2", expected, max_reports=rounds.sizes[1])
    assert service.rounds.of(service.store.row("med")).round == 1

    async def fetch():
        async with _client(url) as client:
            return (await client.get("/api/campaigns/med/config")).json(), (await client.get("/api/campaigns/med-r2")).json()

    public, round_two = asyncio.run(fetch())
    assert public["rounds"]["round"] == 2 and public["submit_to"] == "med-r2" and public["config"] == expected
    assert round_two["state"] == "open" and round_two["max_reports"] == 200 and round_two["submit_token_required"]


def test_the_python_client_creates_lists_and_advances_a_campaign_in_rounds(tmp_path):
    import json

    from dpdist.client import AdminClient

    sent = []

    def handler(request):
        sent.append((request.method, request.url.path, json.loads(request.content) if request.content else None))
        if request.method == "POST" and request.url.path == "/api/campaigns":  # a campaign's summary, as the service's
            return httpx.Response(201, json={"campaign": "med", "state": "created", "n": 0, "batches": 0})
        return httpx.Response(200, json={})

    with AdminClient("http://service.test", admin_token=ADMIN, transport=httpx.MockTransport(handler)) as client:
        client.create_campaign("med", None, rounds=PLAN, submit_token=TOKEN)
        client.rounds("med")
        client.advance_round("med")
    assert sent == [("POST", "/api/campaigns", {"campaign": "med", "keep_reports": False, "rounds": PLAN, "submit_token": TOKEN}),
                    ("GET", "/api/campaigns/med/rounds", None), ("POST", "/api/campaigns/med/rounds/advance", None)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_servers_on_one_database_advance_a_full_round_once(kind, tmp_path):
    """Two ``dpdist serve`` processes on one database see round 1 full at once: 16 concurrent config fetches, half to
    each, advance it once. Round 2's campaign exists once, both publish its one config, round 1 keeps its 100 reports
    (the second advance is a no-op: a conditional update of the round pointer, and round 2's config is a function of
    the rounds before)."""
    import threading

    from dpdist.client import AdminClient, Client
    from serve_support import ADMIN_TOKEN, ServerProcess, database_url

    plan = {**PLAN, "rounds": 4, "reports": 1000}  # groups of 100, 200, 300, 400
    with database_url(kind, tmp_path) as url:
        servers = [ServerProcess(url, log_path=tmp_path / f"server{k}.log").start() for k in range(2)]
        try:
            with AdminClient(servers[0].url, admin_token=ADMIN_TOKEN) as admin, Client(servers[0].url) as first:
                admin.create_campaign("med", None, rounds=plan)
                admin.open_campaign("med")
                first.submit_values("med", np.random.default_rng(6).beta(2, 5, 100))  # round 1's group, full
            start, published = threading.Barrier(16), []

            def fetch(k: int) -> None:
                with Client(servers[k % 2].url) as device:
                    start.wait(timeout=60)
                    published.append(device.config("med"))

            threads = [threading.Thread(target=fetch, args=(k,)) for k in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            assert len(published) == 16
            assert {document["submit_to"] for document in published} == {"med-r2"}
            assert len({json.dumps(document["config"], sort_keys=True) for document in published}) == 1
            for server in servers:
                with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
                    report = admin.rounds("med")
                    assert [(r["campaign"], r["state"], r["n"]) for r in report["rounds"]] == [
                        ("med-r1", "closed", 100), ("med-r2", "open", 0)]
                    assert report["round"] == 2 and admin.campaign("med")["rounds"]["round"] == 2
                    assert [c["campaign"] for c in admin.campaigns() if c["campaign"].startswith("med-r")] == ["med-r1", "med-r2"]
        finally:
            for server in servers:
                server.stop()


def test_a_threshold_rounds_below_answers_are_tested_against_every_population():
    """A round's 'below' answers, per cut and in total, lie in [n (1-p), n p] for every population
    (module docstring of dpdist.serve._diagnostics): 200 honest rounds of 1,000 reports from populations at the
    edges of that range (all below every cut, none below, half) raise no flag at alpha = 1e-6; a round of 1,000
    unrandomized 'below' answers, and 2,000 'below' answers added to one cut of 4,000 honest reports, are flagged."""
    from dpdist.serve._diagnostics import diagnostics

    protocol = local.make("threshold", epsilon=1.0, bounds=[0.0, 1000.0], cuts=[256, 512, 768, 1024, 1280], grid_size=2048)
    rng = np.random.default_rng(45)
    flags = 0
    for run in range(200):
        values = (np.zeros(1000), np.full(1000, 999.0), rng.uniform(0, 1000, 1000))[run % 3]
        aggregator = protocol.aggregator().add(protocol.privatize(values, rng=rng))
        document = diagnostics(protocol, aggregator)
        assert document["test"] == "below_fractions"
        flags += document["flagged"]
    assert flags == 0
    crafted = protocol.aggregator().add(np.array([2 * (i % 5) + 1 for i in range(1000)]))
    document = diagnostics(protocol, crafted)
    assert document["flagged"] and document["below_fraction"]["observed"] == 1.0 and document["min_p_value"] < 1e-100
    assert document["summary"].startswith("POISONING SUSPECTED: 1 of the answers say 'below'")
    honest = protocol.privatize(rng.uniform(0, 1000, 4000), rng=rng)
    one_cut = protocol.aggregator().add(np.concatenate([honest, np.full(2000, 2 * 4 + 1)]))  # cut 4: "below" x 2,000
    document = diagnostics(protocol, one_cut)
    assert document["flagged"] and document["items_above"] == [4] and not document["below_fraction"]["flagged"]


@pytest.mark.slow
def test_a_round_of_impossible_answers_is_flagged(tmp_path):
    import secrets

    server = ServerProcess(str(tmp_path / "campaigns.sqlite")).start()
    try:
        plan = {"q": [0.5], "epsilon": 1.0, "bounds": [0, 1000], "reports": 15_000}
        assert httpx.post(f"{server.url}/api/campaigns", headers=admin_headers(),
                          json={"campaign": "income", "rounds": plan}).status_code == 201
        assert httpx.post(f"{server.url}/api/campaigns/income/open", headers=admin_headers()).status_code == 200
        config = httpx.get(f"{server.url}/api/campaigns/income/config").json()
        round_1, room, cuts = config["submit_to"], config["rounds"]["room"], len(config["rounds"]["cuts"])
        # one anonymous request: the round's whole room, each answer "my value is below this cut", not randomized
        answers = [2 * (i % cuts) + 1 for i in range(room)]
        sent = httpx.put(f"{server.url}/api/campaigns/{round_1}/batches/{secrets.token_hex(16)}", json={"reports": answers})
        assert sent.status_code == 200 and sent.json()["accepted"] == room
        assert httpx.get(f"{server.url}/api/campaigns/income/config").json()["rounds"]["round"] == 2  # it ended round 1
        estimate = httpx.get(f"{server.url}/api/campaigns/{round_1}/estimate", headers=admin_headers(), timeout=60).json()
        # an honest device answers 'below' with probability at most e/(1+e) = 0.73: 1,000 of 1,000 has p < 1e-130
        assert estimate["diagnostics"]["flagged"], estimate["diagnostics"]
    finally:
        server.stop()
