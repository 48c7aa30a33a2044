"""Inputs that fuzzing the newer entry points found raising a raw exception or silently accepted (issue 45, item 8).

Each now raises a :mod:`dpdist.errors` exception naming the argument, the value and what is allowed; and a
property test checks that no NaN leaves ``central.quantiles`` for any bounds, data, probabilities and budget.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpdist import central, local, privacy
from dpdist.errors import DPDistError, InvalidParameterError, InvalidValueTypeError


# ---------------------------------------------------------------------- frame.release
@pytest.fixture
def table():
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"age": np.arange(100.0), "group": [0, 1] * 50})


@pytest.mark.parametrize("function", [np.histogram, len, np.mean, "cdf"])
def test_frame_release_refuses_what_is_not_a_central_release(table, function):
    from dpdist import frame

    with pytest.raises(InvalidParameterError, match=r"The 'release' argument of frame\.release must be a dpdist\.central "
                                                    r"release: one of \[.*'central\.cdf'"):
        frame.release(table, "age", function, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"The 'release' argument of frame\.group_release"):
        frame.group_release(table, "age", "group", function, epsilon=1.0, groups=[0, 1])


def test_frame_release_names_the_argument_a_release_lacks_or_does_not_take(table):
    from dpdist import frame
    from dpdist.budget import BudgetSession

    with pytest.raises(InvalidParameterError, match=r"central\.cdf's after its data \['epsilon', 'bounds'.*'bounds'"):
        frame.release(table, "age", central.cdf, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"unexpected keyword argument 'bins'"):
        frame.release(table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), bins=10)
    with pytest.raises(InvalidParameterError, match=r"'bounds'"):
        frame.group_release(table, "age", "group", central.cdf, epsilon=1.0, groups=[0, 1])
    session = BudgetSession(epsilon=5.0, neighbouring="add-remove")
    with pytest.raises(InvalidParameterError, match=r"'bounds'"):
        frame.release(table, "age", central.cdf, epsilon=1.0, session=session)
    assert session.charges == ()  # refused before anything was charged
    with pytest.raises(InvalidParameterError, match=r"BudgetSession\.release calls 'histogram'.*do not fit"):
        session.release(np.histogram, np.zeros(3), epsilon=1.0)
    released = frame.release(table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), rng=0)
    assert released.guarantee.epsilon == 1.0


# ---------------------------------------------------------------------- privacy.shuffled
def test_shuffled_refuses_a_protocol_name_and_takes_a_config():
    with pytest.raises(InvalidParameterError, match=r"The 'protocol' argument of shuffled must be a local protocol.*"
                                                    r"Got 'grr' instead\. A name is not enough.*local\.make\('grr'"):
        privacy.shuffled("grr", 1000, 1e-6)
    with pytest.raises(InvalidParameterError, match=r"The 'protocol' argument of shuffled.*Got 3 instead"):
        privacy.shuffled(3, 1000, 1e-6)
    grr = local.make("grr", epsilon=2.0, domain_size=4)
    assert privacy.shuffled(grr.config(), 1000, 1e-6) == privacy.shuffled(grr, 1000, 1e-6)  # a config is a protocol
    assert privacy.shuffled(grr, 1000, 1e-6).epsilon < 2.0


# ---------------------------------------------------------------------- sealing for a relay
@pytest.fixture
def envelope():
    pytest.importorskip("pyhpke")
    from dpdist.relay import _envelope

    return _envelope


@pytest.mark.parametrize("key, got", [(b"x" * 10, "10 bytes"), (b"x" * 33, "33 bytes"), ("abc", "str"), (None, "NoneType")])
def test_seal_refuses_a_key_that_is_not_32_bytes(envelope, key, got):
    with pytest.raises(InvalidParameterError, match=rf"The 'public_key' parameter of seal must be a raw 32-byte X25519 "
                                                    rf"public key .*Got {got} instead"):
        envelope.seal(key, "c", b"body", "application/json")


def test_seal_and_open_refuse_bad_arguments_by_name(envelope):
    pair = envelope.generate_key()
    with pytest.raises(InvalidParameterError, match=r"'public_key' argument of seal is not a usable X25519 public key: "
                                                    r"it is a low-order point"):
        envelope.seal(bytes(32), "c", b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'campaign' parameter of seal .*Got None instead"):
        envelope.seal(pair.public_key, None, b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'body' parameter of seal must be bytes\. Got str"):
        envelope.seal(pair.public_key, "c", "body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'content_type' argument of seal must be the content type of dpdist binary records or JSON, one of"):
        envelope.seal(pair.public_key, "c", b"body", "text/csv")
    sealed = envelope.seal(pair.public_key, "c", b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'private_key' parameter of open_sealed must be a raw 32-byte"):
        envelope.open_sealed(b"k" * 5, "c", sealed)
    assert envelope.open_sealed(pair.private_key, "c", sealed) == ("application/json", b"body")
    with pytest.raises(InvalidParameterError, match=r"The 'public_key' of a relayed campaign must be a 32-byte X25519 "
                                                    r"key in base64url.*Got 'AAAA' instead"):
        envelope.decode_public_key("AAAA")
    with pytest.raises(InvalidParameterError, match=r"'public_key'.*Got None instead"):
        envelope.decode_public_key(None)


# ---------------------------------------------------------------------- dbitflippm at d = 2^26
def test_dbitflippm_refuses_a_batch_whose_reports_would_not_fit(monkeypatch):
    from dpdist import _validation

    monkeypatch.setattr(_validation, "MAX_ALLOCATION_BYTES", 2**24)  # the same arithmetic, at 16 MiB
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=2**20)  # d = b: reports of 8 MiB each
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=re.escape(
                "The 'values' argument of DBITFLIPPM.privatize holds 3 values: their reports (2 x sampled_bits = "
                "2,097,152 uint32 each) would need 0.0 GiB") + r".*Privatize at most 2 values at a time"):
            protocol.privatize(np.arange(3), rng=0)
        assert protocol.privatize(np.arange(2), rng=0).shape == (2, 2**21)


def test_dbitflippm_at_two_to_the_26_buckets_refuses_ten_reports_and_names_how_many_fit():
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=2**26)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=r"'values' argument .* 10 values: .* 5\.0 GiB .*Privatize at "
                                                        r"most 4 values at a time"):
            protocol.privatize(np.arange(10), rng=0)  # was a MemoryError (5 GiB of int64 indices, then 5 GiB of reports)


def test_dbitflippm_with_every_bucket_sampled_simulates_in_order_b_memory():
    import tracemalloc

    b = 2**22
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=b)
    tracemalloc.start()
    try:
        aggregator = protocol.simulate(np.arange(100_000) % 7, rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the statistic (2b int64) and a few b-sized temporaries; privatizing was 8b bytes per user (3.2 TB here)
    assert aggregator.n == 100_000 and peak < 5 * 16 * b, f"{peak / 2**20:.0f} MiB"
    assert np.all(aggregator.statistic[b:] == 100_000)  # every user samples every bucket


@pytest.mark.filterwarnings("ignore::dpdist.errors.EachValueANewUserWarning")
def test_dbitflippm_exact_simulate_has_the_law_of_privatize():
    # d = b: simulate draws Binomial(c_v, p) + Binomial(n - c_v, q) per bucket; privatize then add, the same law
    protocol = local.make("dbitflippm", epsilon=1.0, domain_size=5)
    values = np.repeat(np.arange(5), [400, 300, 200, 80, 20])
    simulated = np.array([protocol.simulate(values, rng=seed).statistic for seed in range(300)], dtype=float)
    added = np.array([protocol.aggregator().add(protocol.privatize(values, rng=1000 + seed)).statistic
                      for seed in range(300)], dtype=float)
    p, q, counts = protocol._bit_p, protocol._bit_q, np.bincount(values, minlength=5)
    mean = counts * p + (values.size - counts) * q
    sd = np.sqrt(counts * p * (1 - p) + (values.size - counts) * q * (1 - q))
    for statistic in (simulated, added):
        assert np.all(statistic[:, 5:] == values.size)
        assert np.all(np.abs(statistic[:, :5].mean(axis=0) - mean) < 4 * sd / np.sqrt(300))
        assert np.all(np.abs(statistic[:, :5].std(axis=0) / sd - 1) < 0.2)


# ---------------------------------------------------------------------- bounds and NaN in quantiles
@pytest.mark.parametrize("bounds", [(0.0, 1e-320), (0.0, 1e-310), (1e15, 1e15 + 1)])
def test_degenerate_bounds_are_refused_by_name(bounds):
    with pytest.raises(InvalidParameterError, match=r"'bounds' parameter .*room for 2\*\*22 distinct grid steps"):
        central.quantiles(np.zeros(3), [0.5], epsilon=1.0, bounds=bounds, method="tree", rng=0)
    with pytest.raises(InvalidParameterError, match=r"'bounds' parameter of SW"):
        local.make("sw", epsilon=1.0, bounds=bounds)


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def _quantile_calls(draw):
    lo = draw(_FLOATS)
    hi = lo + draw(st.one_of(st.floats(min_value=5e-324, max_value=1e308), st.sampled_from([1e-300, 1e-5, 1.0, 1e10])))
    n = draw(st.integers(0, 30))
    kind = draw(st.sampled_from(["inside", "anything", "missing"]))
    if kind == "inside" and math.isfinite(hi):
        x = draw(st.lists(st.floats(min_value=lo, max_value=hi), min_size=n, max_size=n))
    elif kind == "missing":
        x = [math.nan] * n
    else:
        x = draw(st.lists(st.floats(), min_size=n, max_size=n))
    q = sorted(set(draw(st.lists(st.floats(min_value=0.001, max_value=0.999), min_size=1, max_size=5))))
    method = draw(st.sampled_from(["tree", "aq", "jointexp", "slice"]))
    options = {"interval_share": draw(st.sampled_from([None, 0.3]))} if method in ("aq", "jointexp") else {}
    return {"x": np.array(x, dtype=float), "q": q, "epsilon": draw(st.sampled_from([1e-3, 0.1, 1.0, 10.0, 50.0])),
            "bounds": (lo, hi), "method": method, **options}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(_quantile_calls())
@example({"x": np.zeros(0), "q": [0.5], "epsilon": 1e-3, "bounds": (0.0, 1e-320), "method": "tree"})  # was NaN
@example({"x": np.array([1e15]), "q": [0.5], "epsilon": 1.0, "bounds": (1e15, 1e15 + 1), "method": "tree"})
def test_no_nan_leaves_quantiles(call):
    x = call.pop("x")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            released = central.quantiles(x, rng=0, **call)
    except DPDistError:
        return  # a refusal names its argument; what must not happen is a NaN or a raw exception
    for name in ("values", "low", "high"):
        value = getattr(released, name)
        assert value is None or not np.isnan(np.asarray(value, dtype=float)).any(), (name, value, call)


# ---------------------------------------------------------------------- multi-attribute records
def test_a_record_with_an_attribute_the_schema_does_not_name_is_refused():
    schema = [{"name": "country", "labels": ["fr", "de"]}, {"name": "age", "bounds": [0, 100]}]
    protocol = local.make("smp", epsilon=1.0, attributes=schema)
    records = {"country": ["fr", "de"], "age": [30.0, 40.0]}
    assert protocol.privatize(records, rng=0).shape == (2,)
    with pytest.raises(InvalidValueTypeError, match=r"The 'values' argument of SMP\.privatize must hold the columns of "
                                                    r"the schema's attributes \['country', 'age'\] only\. Got unknown "
                                                    r"column\(s\) \['agee'\]"):
        protocol.privatize({**records, "agee": [31.0, 41.0]}, rng=0)
    structured = np.array([("fr", 30.0, 1)], dtype=[("country", "U2"), ("age", "f8"), ("income", "i8")])
    with pytest.raises(InvalidValueTypeError, match=r"unknown column\(s\) \['income'\]"):
        protocol.simulate(structured, rng=0)


# ---------------------------------------------------------------------- explain
def test_explain_refuses_a_cache_that_is_not_a_directory(tmp_path):
    from dpdist.accuracy import explain

    file = tmp_path / "cache.json"
    file.write_text("{}")
    oue = local.make("oue", epsilon=1.0, domain_size=8)
    for cache, where in ((file, "a file"), (file / "below", "under the file")):
        with pytest.raises(InvalidParameterError, match=rf"The 'cache' parameter of explain must be the path of a "
                                                        rf"directory.*{where}"):
            explain(oue, 1000, cache=cache)
    with pytest.raises(InvalidParameterError, match=r"The 'cache' parameter of explain must be None or the path"):
        explain(oue, 1000, cache=3)
    # epsilons no other test asks for: not in the process's memory, so the directory is made and written
    assert explain(oue, 1000, epsilons=[0.3711], cache=tmp_path / "new" / "dir").n == 1000
    assert len(list((tmp_path / "new" / "dir").glob("*.json"))) == 1


@pytest.mark.parametrize("release, params, message", [
    ("cdf", {"bounds": (0, 1), "grid_size": 3}, r"'cdf' are central\.cdf's \['bounds', 'clip', 'secure', 'missing'\] \('bounds' "
                                                r"required\)\. Got unknown parameter\(s\) \['grid_size'\]"),
    ("quantiles", {"bounds": (0, 1), "grid_size": 3}, r"unknown parameter\(s\) \['grid_size'\]"),
    ("tree", {"bounds": (0, 1), "grid_size": 3}, r"unknown parameter\(s\) \['grid_size'\]"),
    ("polynomial", {"bounds": (0, 1)}, r"\('delta', 'bounds' required\)\. Got missing a required argument: 'delta'"),
    ("cdf", {}, r"missing a required argument: 'bounds'"),
    ("pursuit", {"bounds": (0, 1), "rng": 3}, r"gives central\.matching_pursuit \('pursuit'\) its data, epsilon and rng"),
])
def test_explain_refuses_parameters_a_central_release_does_not_take(release, params, message):
    from dpdist.accuracy import explain

    with pytest.raises(InvalidParameterError, match=message):
        explain(release, 1000, repeats=2, **params)


def test_explain_checks_a_central_release_grid_size_by_its_own_rule():
    from dpdist.accuracy import explain

    with pytest.raises(InvalidParameterError, match=r"The 'grid_size' parameter of .* Got 1"):
        explain("pursuit", 1000, bounds=(0, 1), grid_size=1, repeats=2, epsilons=[1.0])


# ---------------------------------------------------------------------- found by fuzzing the newer entry points
def _privacypass_calls():
    pytest.importorskip("cryptography")
    from dpdist import privacypass as pp

    key = _issuer_key()
    token_key = pp.encode_token_key(key.public_key())
    challenge = pp.TokenChallenge("issuer.example", bytes(32))
    return [
        ("blind", lambda: pp.blind("key", b"message"), "public_key"),
        ("blind_sign", lambda: pp.blind_sign(key.public_key(), bytes(256)), "private_key"),
        ("finalize", lambda: pp.finalize(None, b"m", bytes(256), 3), "public_key"),
        ("finalize inv", lambda: pp.finalize(key.public_key(), b"m", bytes(256), "3"), "inv"),
        ("verify", lambda: pp.verify(b"key", b"m", bytes(256)), "public_key"),
        ("b64url_encode", lambda: pp.b64url_encode(2**40), "data"),  # was bytes(2**40): a MemoryError
        ("format_www_authenticate", lambda: pp.format_www_authenticate("challenge", token_key), "challenge"),
        ("format_authorization", lambda: pp.format_authorization(None), "token"),
        ("token_key_id", lambda: pp.token_key_id(2**40), "token_key"),  # was bytes(2**40)
        ("verify_token challenge", lambda: pp.verify_token(bytes(354), token_key, {"issuer": 1}), "challenge"),
        ("verify_token key", lambda: pp.verify_token(bytes(354), [1], challenge), "token_key"),
    ]


_KEY = []


def _issuer_key():
    if not _KEY:
        from dpdist import privacypass as pp

        _KEY.append(pp.generate_private_key())
    return _KEY[0]


def test_privacypass_functions_name_a_bad_argument():
    for name, call, argument in _privacypass_calls():
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()


def _service_calls(tmp_path):
    pytest.importorskip("starlette")
    from dpdist import budget, client, issuer, relay
    from dpdist.privacy import PrivacyGuarantee

    session = budget.BudgetSession(epsilon=1.0)
    return [
        (lambda: client.Client("http://127.0.0.1:1", backoff="fast"), "backoff"),
        (lambda: client.Client("http://127.0.0.1:1", pins=["c"]), "pins"),
        (lambda: client.Client("http://127.0.0.1:1", retries=True), "retries"),
        (lambda: client.Client("http://127.0.0.1:1", timeout=-1), "timeout"),
        (lambda: client.Client("http://127.0.0.1:1", on_retry=3), "on_retry"),
        (lambda: issuer.create_app(str(tmp_path / "i.sqlite"), name="issuer.example", admin_token="t" * 32,
                                   cors_origins=3), "cors_origins"),
        (lambda: relay.create_app(str(tmp_path / "r.sqlite"), collector="http://127.0.0.1:1", relay_token="t" * 32,
                                  min_batch=2, max_batch=10, limits={"rate_limit": 1}), "limits"),
        (lambda: session.charge_parallel(PrivacyGuarantee(0.1, 0.0, "replace", "central")), "guarantees"),
        (lambda: budget.BudgetSession.create(None, epsilon=1.0), "path"),
        (lambda: budget.BudgetSession.create(tmp_path / "missing" / "b.json", epsilon=1.0), "path"),
        (lambda: budget.BudgetSession.open(tmp_path), "path"),
    ]


def test_client_servers_and_budget_files_name_a_bad_argument(tmp_path):
    for call, argument in _service_calls(tmp_path):
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()


def test_frame_and_explain_name_a_bad_argument(table):
    from dpdist import frame
    from dpdist.accuracy import explain

    oue = local.make("oue", epsilon=1.0, domain_size=2)
    sw = local.make("sw", epsilon=1.0, bounds=(0, 100))
    calls = [
        (lambda: frame.estimate(table, "age", sw, session="budget"), "session"),
        (lambda: frame.privatize(table, "group", oue, report_column=["r"]), "report_column"),
        (lambda: frame.group_estimate(table, "group", None, oue), "by"),
        (lambda: frame.release(table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), session=1.0), "session"),
        (lambda: frame.table(None, like=table), "result"),
        (lambda: explain("cdf", 100, bounds=3, repeats=2), "bounds"),
        (lambda: explain("cdf", 100, bounds=(0, 1), shape=["normal"], repeats=2), "shape"),
    ]
    for call, argument in calls:
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()
