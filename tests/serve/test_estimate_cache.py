"""Every view of a campaign's distribution draws the same thing.

``GET .../estimate.png`` (``dpdist campaign estimate --plot``) draws the fixed-n CDF band the JSON, the text and
the dashboard show; the dashboard draws the density the estimate's figure draws (on its display bins), not the
estimate bin by bin, whose 1024 bins showed several peaks for a single-peaked population.
"""

from __future__ import annotations

import asyncio

import httpx
import numpy as np
import pytest
from scipy.signal import find_peaks

from dpdist import io, local
from dpdist.plotting import display_edges

pytest.importorskip("starlette")

from dpdist.serve import create_app  # noqa: E402 - after the extra's check

ADMIN = "admin-token-0123456789"
HEADERS = {"authorization": f"Bearer {ADMIN}"}


def test_the_png_draws_the_band_the_json_serves(tmp_path, monkeypatch):
    import dpdist.plotting
    from dpdist.serve import _estimate_cache

    drawn = []
    # in this process (not the estimator's), so that the estimate handed to the figure can be seen
    monkeypatch.setattr(_estimate_cache, "_compute", lambda function, *arguments: (function(*arguments), 0.0))
    monkeypatch.setattr(dpdist.plotting, "save_estimate", lambda estimate, buffer, **options: drawn.append(estimate))
    config = {"protocol": "sw", "epsilon": 2.0, "bins": 64}
    protocol = local.from_config(config)
    reports = protocol.privatize(np.random.default_rng(1).beta(2, 5, 2000), rng=2)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)

    async def work():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            await client.post("/api/campaigns", json={"campaign": "sw", "config": config})
            await client.post("/api/campaigns/sw/open")
            await client.put("/api/campaigns/sw/batches/b1", content=io.encode_record(protocol, reports),
                             headers={"content-type": "application/octet-stream"})
            query = {"replicates": "20", "level": "0.9"}
            document = (await client.get("/api/campaigns/sw/estimate", params=query)).json()
            picture = await client.get("/api/campaigns/sw/estimate.png", params=query)
            return document, picture

    document, picture = asyncio.run(work())
    assert picture.status_code == 200
    (estimate,) = drawn
    served = document["estimate"]["band"]
    assert served is not None and estimate.band is not None  # the figure used to be drawn without it
    assert estimate.band.level == served["level"] == 0.9 and estimate.band.replicates == 20
    np.testing.assert_array_equal(estimate.band.lower, served["lower"])
    np.testing.assert_array_equal(estimate.band.simultaneous_upper, served["simultaneous_upper"])
    np.testing.assert_array_equal(estimate.probabilities, document["estimate"]["probabilities"])


def _peaks(density: np.ndarray) -> int:
    """Local maxima standing out by a fifth of the highest density."""
    return len(find_peaks(np.r_[0.0, density, 0.0], prominence=0.2 * density.max())[0])


def test_the_served_density_is_the_figures_not_the_estimate_bin_by_bin():
    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("sw", epsilon=2.0, bounds=(0, 1440))  # 1024 bins
    minutes = np.clip(np.random.default_rng(1).normal(700, 150, 20_000), 0, 1440)  # one peak
    aggregate = protocol.simulate(minutes, rng=101)
    estimate = protocol.estimate(aggregate)
    document = served_estimate(protocol, aggregate, estimate, level=0.95, width=None, replicates=0, target_n=10_000,
                               options={})
    shown = document["display"]
    edges = display_edges(estimate)
    assert shown["bins"] == 40 and np.array_equal(shown["edges"], edges)
    # what the figure's density panel draws (Distribution.figure: the CDF's differences on the display bins)
    np.testing.assert_allclose(shown["density"], np.diff(estimate.cdf(edges)) / np.diff(edges), rtol=1e-12)
    own = np.asarray(estimate.probabilities) / estimate.widths
    assert _peaks(own) == 3 and _peaks(np.asarray(shown["density"])) == 1  # seeded: the bin-by-bin view's false peaks


def _modes(density) -> int:
    """Every local maximum of a step density (a plateau once, equal within 1e-9 of the highest; an end when it is
    above its neighbour): no threshold of prominence."""
    density = np.asarray(density)
    steps = density[np.r_[True, np.abs(np.diff(density)) > 1e-9 * density.max()]]
    return int((np.r_[True, steps[1:] > steps[:-1]] & np.r_[steps[:-1] > steps[1:], True]).sum())


@pytest.mark.slow  # two bootstraps of the service's 100 replicates (3 CPU-s each)
def test_the_served_density_shows_only_the_peaks_its_band_supports():
    """An SW campaign of one peak (n = 6,600, epsilon 2) drew a density with spikes (11 local maxima
    on the figure's 40 equal bins).  The served density is the estimate on the same bins with only the peaks the
    simultaneous band supports (the taut string's): one for one peak, two for two, the mass kept, and nearer the
    truth than the estimate drawn as it is."""
    from scipy.stats import norm

    from dpdist.serve._uncertainty import served_estimate

    protocol = local.make("sw", epsilon=2.0, bounds=(0, 120))
    rng = np.random.default_rng(0)
    one = (np.clip(rng.normal(40, 12, 6600), 0, 120), lambda x: norm.pdf(x, 40, 12))
    two = (np.clip(np.where(rng.random(6600) < 0.5, rng.normal(30, 6, 6600), rng.normal(85, 6, 6600)), 0, 120),
           lambda x: 0.5 * norm.pdf(x, 30, 6) + 0.5 * norm.pdf(x, 85, 6))
    for (values, truth), peaks in ((one, 1), (two, 2)):
        aggregate = protocol.simulate(values, rng=1)
        estimate = protocol.estimate(aggregate)
        edges = display_edges(estimate)
        drawn = np.diff(estimate.cdf(edges)) / np.diff(edges)  # what the display drew before
        if peaks == 1:
            assert _modes(drawn) >= 5
        document = served_estimate(protocol, aggregate, estimate, level=0.95, width=None, replicates=100,
                                   target_n=10_000, options={})
        shown = document["display"]
        density = np.asarray(shown["density"])
        assert _modes(density) == shown["peaks"] == peaks and f"{peaks} peak" in shown["method"]
        assert np.array_equal(shown["edges"], edges) and shown["bins"] == density.size == 40
        assert np.sum(density * np.diff(edges)) == pytest.approx(1, abs=1e-12) and density.min() >= 0
        cdf = np.r_[0.0, np.cumsum(density * np.diff(edges))]  # a density the band supports: its CDF inside it
        band = document["band"]
        assert np.all(cdf >= np.interp(edges, band["edges"], band["simultaneous_lower"]) - 1e-9)
        assert np.all(cdf <= np.interp(edges, band["edges"], band["simultaneous_upper"]) + 1e-9)
        true = truth((edges[:-1] + edges[1:]) / 2)
        assert np.sum(np.abs(density - true)) < np.sum(np.abs(drawn - true))  # nearer the truth, not only smoother


def _grr_campaign(client_app, campaign: str, domain_size: int, values) -> None:
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": domain_size}
    protocol = local.from_config(config)

    async def work():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(client_app), base_url="http://collector", headers=HEADERS) as client:
            await client.post("/api/campaigns", json={"campaign": campaign, "config": config})
            await client.post(f"/api/campaigns/{campaign}/open")
            answer = await client.put(f"/api/campaigns/{campaign}/batches/b1", content=io.encode_record(protocol, protocol.privatize(values, rng=3)),
                                      headers={"content-type": "application/octet-stream"})
            assert answer.status_code == 200, answer.text

    asyncio.run(work())


def _get(app, path: str) -> httpx.Response:
    async def work():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            return await client.get(path)

    return asyncio.run(work())


def test_the_estimate_is_rendered_off_the_event_loop_and_sent_in_parts_byte_for_byte(tmp_path, monkeypatch):
    # the route rendered the document on the event loop, 3.7 us a domain item (7.5 s at d = 2*10^6, every
    # campaign's batches waiting): the body is now made where the estimate is computed (the estimator process; in the
    # fast loop a thread of the pool), and no large JSON is rendered on the loop's thread
    import json
    import threading

    from dpdist.serve._routes import results

    rendered_on = []
    dumps = json.dumps

    def watched(*args, **kwargs):
        text = dumps(*args, **kwargs)
        if len(text) > 1000:
            rendered_on.append(threading.current_thread())
        return text

    monkeypatch.setattr(json, "dumps", watched)
    monkeypatch.setattr(results, "_WHOLE_BODY", 1000)  # a body of a few kB goes in parts, as one of 321 MB does
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 300, np.arange(2000) % 300)

    async def work():
        loop_thread = threading.current_thread()
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            first, again = [await client.get("/api/campaigns/g/estimate") for _ in range(2)]
        return loop_thread, first, again

    loop_thread, answer, again = asyncio.run(work())
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert rendered_on and loop_thread not in rendered_on
    assert int(answer.headers["content-length"]) == len(answer.content) > 3 * 1000
    document = answer.json()
    assert document["n"] == 2000 and len(document["estimate"]["frequencies"]) == 300
    # the bytes Starlette's JSONResponse answered before; the kept body the second time
    assert answer.content == dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    assert again.content == answer.content


def test_the_kept_documents_hold_at_most_their_byte_budget_but_the_one_just_computed(tmp_path, monkeypatch):
    from dpdist.serve import _estimate_cache

    monkeypatch.setattr(_estimate_cache, "_compute", lambda function, *arguments: (function(*arguments), 0.0))
    monkeypatch.setattr(_estimate_cache, "MAX_BYTES", 1)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    cache = app.state.service.estimates
    first, tag = cache.tagged("g", {"level": "0.9"})
    second = cache.body("g", {"level": "0.8"})
    assert first != second and [entry.body for entry in cache._entries.values() if entry.body is not None] == [second]
    computed = cache.computed
    assert cache.tagged("g", {"level": "0.9"}, f'"{tag}"') == (None, tag)  # held: its tag kept, nothing computed
    assert cache.computed == computed
    assert cache.body("g", {"level": "0.9"}) == first and cache.computed == computed + 1  # computed again
    assert [entry.body for entry in cache._entries.values() if entry.body is not None] == [first]


def _starved(campaign, query):
    """An estimate that cannot allocate its arrays, as numpy's ``_ArrayMemoryError`` raised in the estimator."""
    raise MemoryError("Unable to allocate 244. MiB for an array with shape (32000000,)")


def test_an_estimate_the_estimator_cannot_allocate_is_a_500_that_says_so_not_an_internal_error(tmp_path, monkeypatch):
    from dpdist.serve import _estimate_cache

    monkeypatch.setattr(_estimate_cache, "estimate_body", _starved)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    answer = _get(app, "/api/campaigns/g/estimate")
    assert answer.status_code == 500 and answer.json()["error"] == "estimate_out_of_memory", answer.text
    assert "'g'" in answer.json()["detail"] and "memory" in answer.json()["detail"]


def test_an_unchanged_estimate_asked_with_its_tag_is_answered_304_without_its_body(tmp_path):
    # a dashboard polling an unchanged 321 MB estimate fetched it whole every few seconds
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    first = _get(app, "/api/campaigns/g/estimate")
    tag = first.headers["etag"]

    async def again(headers):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            return await client.get("/api/campaigns/g/estimate", headers=headers)

    held = asyncio.run(again({"if-none-match": tag}))
    assert held.status_code == 304 and held.content == b"" and held.headers["etag"] == tag
    assert asyncio.run(again({"if-none-match": '"another"'})).content == first.content
    other = asyncio.run(again({"if-none-match": tag, "accept": "application/json"}))
    assert other.status_code == 304
    assert asyncio.run(again({"if-none-match": "*"})).status_code == 304  # RFC 9110: any current representation
    assert asyncio.run(again({"if-none-match": f'"x", W/{tag}'})).status_code == 304
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    protocol = local.from_config(config)

    async def more():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            await client.put("/api/campaigns/g/batches/b2", content=io.encode_record(protocol, protocol.privatize(np.arange(10) % 8, rng=4)),
                             headers={"content-type": "application/octet-stream"})
            return await client.get("/api/campaigns/g/estimate", headers={"if-none-match": tag})

    changed = asyncio.run(more())
    assert changed.status_code == 200 and changed.json()["n"] == 110 and changed.headers["etag"] != tag


def test_a_figure_of_more_items_than_are_drawn_is_refused_before_the_estimator_is_asked(tmp_path, monkeypatch):
    # GET estimate.png at d = 2*10^6 held the one estimator 120 s and ended 503 estimate_timeout
    from dpdist.serve import _estimate_cache

    asked = []
    monkeypatch.setattr(_estimate_cache, "_compute", lambda function, *arguments: asked.append(function))
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", _estimate_cache.MAX_DRAWN_ITEMS + 1, np.arange(100))
    answer = _get(app, "/api/campaigns/g/estimate.png")
    assert answer.status_code == 409 and answer.json()["error"] == "too_many_items_to_plot" and asked == []
    assert str(_estimate_cache.MAX_DRAWN_ITEMS) in answer.json()["detail"]


def _expensive(function, *arguments) -> tuple:
    """An estimate computed here that says it took 100 CPU seconds: the next 200 s of its key are throttled."""
    return function(*arguments), 100.0


def test_a_throttled_estimate_is_answered_304_to_its_holder_and_never_stands_for_another_campaign(tmp_path, monkeypatch):
    """Within the throttle, the last document of a campaign deleted and created again under its id (its
    numbers, its epsilon) was served for the new one, and a closed campaign's said "open"; and a poll holding the
    document served got it whole again, 200 under the tag it named."""
    from dpdist.serve import _estimate_cache

    monkeypatch.setattr(_estimate_cache, "_compute", _expensive)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    cache = app.state.service.estimates
    first, tag = cache.tagged("g", {})
    protocol = local.from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 8})

    async def send(method, path, **options):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            answer = await client.request(method, path, **options)
            assert answer.status_code < 300, answer.text
            return answer

    asyncio.run(send("PUT", "/api/campaigns/g/batches/b2", content=io.encode_record(protocol, protocol.privatize([1] * 10, rng=4)),
                     headers={"content-type": "application/octet-stream"}))
    computed = cache.computed
    assert cache.tagged("g", {}, f'"{tag}"') == (None, tag)  # throttled: the held document, not sent again
    assert cache.tagged("g", {}) == (first, tag) and cache.computed == computed  # throttled: the last one, n = 100
    asyncio.run(send("POST", "/api/campaigns/g/close"))
    closed, closed_tag = cache.tagged("g", {}, f'"{tag}"')  # another state: computed at once
    assert closed is not None and closed_tag != tag and b'"closed"' in closed and cache.computed == computed + 1
    asyncio.run(send("DELETE", "/api/campaigns/g"))
    config = {"protocol": "grr", "epsilon": 2.0, "domain_size": 8}
    asyncio.run(send("POST", "/api/campaigns", json={"campaign": "g", "config": config}))
    again, again_tag = cache.tagged("g", {}, f'"{closed_tag}"')  # another campaign under the id: computed at once
    document = __import__("json").loads(again)
    assert again_tag not in (tag, closed_tag) and document["n"] == 0 and document["epsilon"] == 2.0 and document["state"] == "created"


@pytest.mark.parametrize("held, answered", [
    ('"{tag}"', 304), ('W/"{tag}"', 304), ('"other", "{tag}"', 304), ("*", 304), (' * ', 304),
    ('garbage"{tag}"garbage', 200), ('w/"{tag}"', 200), ("{tag}", 200), ('"{tag}x"', 200), ('"other"', 200),
])
def test_if_none_match_is_read_as_a_list_of_entity_tags(tmp_path, held, answered):
    # a substring test took any text holding the tag
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    tag = _get(app, "/api/campaigns/g/estimate").headers["etag"].strip('"')

    async def again():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            return await client.get("/api/campaigns/g/estimate", headers={"if-none-match": held.format(tag=tag)})

    assert asyncio.run(again()).status_code == answered


def test_one_query_spelled_two_ways_is_one_document(tmp_path, monkeypatch):
    from dpdist.serve import _estimate_cache

    monkeypatch.setattr(_estimate_cache, "_compute", lambda function, *arguments: (function(*arguments), 0.0))
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    cache = app.state.service.estimates
    first = cache.body("g", {"level": "0.95"})
    computed = cache.computed
    for same in ({}, {"level": "0.950"}, {"level": "9.5e-1"}, {"level": "0.95", "replicates": "0100"}):
        assert cache.body("g", same) == first and cache.computed == computed, same
    assert cache.body("g", {"level": "0.9"}) != first and cache.computed == computed + 1  # another level: its own
    with pytest.raises(Exception, match="level"):  # refused as its computation refuses it, nothing kept
        cache.body("g", {"level": "1.5"})
    assert len(cache._entries) == 2


def test_an_app_started_again_opens_its_estimate_cache_again(tmp_path):
    """The end of a lifespan closes the cache; a second lifespan of the same app (an embedder's restart,
    a test's second client) found it closed and every estimate was refused 503 shutting_down."""
    from starlette.testclient import TestClient

    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    for _ in range(2):
        with TestClient(app):
            assert app.state.service.estimates._closed is False
        assert app.state.service.estimates._closed is True


def test_no_estimator_is_started_once_the_last_cache_closed_and_a_cache_reopened_computes(monkeypatch):
    """At a shutdown, a request waiting for the key of an estimate being computed went on once the
    estimator was stopped, found none and started a new one (the stopping process held 120 s, its time limit). Once
    the last cache of the process closed, an estimate is refused 503 shutting_down; a new cache, or one opened again
    (an app whose lifespan runs again; every estimate of its second run was refused), computes again."""
    from dpdist.errors import DPDistError
    from dpdist.serve import _estimate_cache

    monkeypatch.undo()  # the fast tests' _compute in this process (conftest): the real one here, its estimator stood for
    started = []
    monkeypatch.setattr(_estimate_cache, "_OPEN_CACHES", 0)
    monkeypatch.setattr(_estimate_cache, "_ESTIMATOR", None)
    monkeypatch.setattr(_estimate_cache, "Estimator", lambda: started.append(1) or _Answering())
    cache = _estimate_cache.EstimateCache(store=None)
    assert _estimate_cache._compute(len, [1, 2], {}) == (2, 0.0) and len(started) == 1
    cache.close()
    with pytest.raises(DPDistError) as refused:
        _estimate_cache._compute(len, [1, 2], {})
    assert getattr(refused.value, "code", None) == "shutting_down" and refused.value.status == 503
    assert len(started) == 1 and _estimate_cache._ESTIMATOR is None
    cache.reopen()
    cache.reopen()  # once: counted open once
    assert _estimate_cache._compute(len, [1], {}) == (1, 0.0) and len(started) == 2 and _estimate_cache._OPEN_CACHES == 1
    cache.close()
    _estimate_cache.EstimateCache(store=None)
    assert _estimate_cache._compute(len, [1, 2, 3], {}) == (3, 0.0) and len(started) == 3


class _Answering:
    """Stands for the estimator process: runs the function here."""

    def run(self, function, *arguments):
        return function(*arguments[:1]), 0.0

    def close(self):
        pass


def test_concurrent_requests_for_one_estimate_compute_it_once_and_wait_without_a_thread(tmp_path, monkeypatch):
    """Two requests for the first estimate of a campaign, the second (a client's retry) sent while the first is
    computed: one computation, both answered its document, and the second waited holding no worker thread."""
    import threading

    from dpdist.serve import _estimate_cache

    computing, release = threading.Event(), threading.Event()

    def held_back(function, *arguments):
        computing.set()
        release.wait(60)  # not a timing: released below once the second request waits
        return function(*arguments), 0.0

    monkeypatch.setattr(_estimate_cache, "_compute", held_back)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    cache = app.state.service.estimates

    async def both():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://collector", headers=HEADERS) as client:
            first = asyncio.ensure_future(client.get("/api/campaigns/g/estimate"))
            await until(computing.is_set)
            second = asyncio.ensure_future(client.get("/api/campaigns/g/estimate"))
            await until(lambda: len(cache._flights) == 1 and second_waits(second))
            release.set()
            return await first, await second

    async def until(condition) -> None:
        for _ in range(12_000):  # steps of the loop, not a time limit: the estimate is held until the release
            if condition():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the requests never reached the state the test waits for")

    def second_waits(second) -> bool:
        flight = next(iter(cache._flights.values()))
        return not second.done() and len(flight._callbacks) >= 3  # the landing, the first's and the second's shields

    computed = cache.computed
    first, second = asyncio.run(both())
    assert first.status_code == second.status_code == 200 and first.content == second.content
    assert cache.computed == computed + 1 and cache._flights == {}


def test_the_config_and_summary_are_answered_while_more_requests_than_worker_threads_wait_for_an_estimate(tmp_path, monkeypatch):
    """What the pages show at once (the participation page's config, the dashboard's summary: state, n) does not wait
    for an estimate: with twice as many requests waiting for a campaign's first estimate as there are worker threads
    (each held one before, and the config waited 9.5 s for an estimate held 8 s), both are answered while it is
    computed, and the estimate once."""
    import threading

    import anyio

    from dpdist.serve import _estimate_cache

    computing, release = threading.Event(), threading.Event()

    def held_back(function, *arguments):
        computing.set()
        release.wait(60)  # released below once the config and summary were answered
        return function(*arguments), 0.0

    monkeypatch.setattr(_estimate_cache, "_compute", held_back)
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)
    _grr_campaign(app, "g", 8, np.arange(100) % 8)
    cache = app.state.service.estimates

    async def pages():
        threads = anyio.to_thread.current_default_thread_limiter().total_tokens
        transport = httpx.ASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://collector", headers=HEADERS) as client:
            waiting = [asyncio.ensure_future(client.get("/api/campaigns/g/estimate")) for _ in range(2 * int(threads))]
            for _ in range(12_000):  # steps of the loop, not a time limit
                if computing.is_set():
                    break
                await asyncio.sleep(0.01)
            config, summary = await asyncio.gather(client.get("/api/campaigns/g/config"), client.get("/api/campaigns/g"))
            held = not any(request.done() for request in waiting)
            release.set()
            return config, summary, held, await asyncio.gather(*waiting)

    computed = cache.computed
    config, summary, held, estimates = asyncio.run(pages())
    assert config.status_code == summary.status_code == 200 and held
    assert summary.json()["n"] == 100 and summary.json()["state"] == "open"
    assert all(answer.status_code == 200 for answer in estimates) and cache.computed == computed + 1
