"""dpdist.client: a device's Client and the operator's AdminClient, two surfaces over one connection.

The device's submissions are tested through the service (tests/serve, tests/wire, tests/cli), the admin's calls in
tests/client/test_admin.py, the connection both share in tests/client/test_connection.py.
"""

from __future__ import annotations

import pytest

pytest.importorskip("httpx")

import httpx  # noqa: E402 - after the extra's check
from dpdist.client import AdminClient, Client  # noqa: E402 - after the extra's check
from dpdist.client._connection import Connection  # noqa: E402
from dpdist.errors import InvalidParameterError  # noqa: E402

DEVICE_CALLS = ("config", "protocol", "relay", "keep_tokens", "prepare_tokens", "submit_reports", "submit_body",
                "submit_values", "submit_file", "submit_file_parts", "batch_rows")
ADMIN_CALLS = ("create_campaign", "open_campaign", "close_campaign", "delete_campaign", "set_config", "enroll", "campaign",
               "campaigns", "estimate", "estimate_png", "history", "export", "rounds", "advance_round",
               "set_relay_envelopes")


def test_a_device_s_admin_calls_are_the_admin_client_s_deprecated_and_the_admin_has_no_submission():
    from dpdist.client._operator_calls import OperatorCalls

    assert issubclass(Client, Connection) and issubclass(AdminClient, Connection)
    assert all(callable(getattr(Client, name)) for name in DEVICE_CALLS)
    assert all(callable(getattr(AdminClient, name)) for name in ADMIN_CALLS)
    assert all(name in vars(OperatorCalls) and name not in vars(Client) for name in ADMIN_CALLS)
    assert not any(hasattr(AdminClient, name) for name in DEVICE_CALLS if name != "config")


def test_an_admin_call_on_a_device_s_client_warns_and_sends_the_admin_token():
    """``Client(server, admin_token=...).campaign(c)``, as written before AdminClient, still works: the same request
    as AdminClient's, with a DeprecationWarning naming it; without the token, one line naming AdminClient."""
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, request.headers.get("Authorization")))
        return httpx.Response(200, json={"campaign": "c", "state": "open", "config": {}})

    with Client("http://h", admin_token="admin-token-0123456789", transport=httpx.MockTransport(handler)) as client:
        with pytest.warns(DeprecationWarning, match=r"Client\.campaign is deprecated: call it on dpdist\.client\.AdminClient"):
            assert client.campaign("c")["state"] == "open"
    assert seen == [("/api/campaigns/c", "Bearer admin-token-0123456789")]
    with Client("http://h", transport=httpx.MockTransport(handler)) as client, pytest.warns(DeprecationWarning), \
            pytest.raises(InvalidParameterError, match="needs the admin token: call it on dpdist.client.AdminClient"):
        client.campaigns()
    assert len(seen) == 1


def test_the_old_module_name_is_the_same_client_with_a_deprecation_warning():
    import importlib
    import sys

    import dpdist.client

    sys.modules.pop("dpdist.serve.client", None)
    with pytest.warns(DeprecationWarning, match="dpdist.serve.client is deprecated: import from dpdist.client"):
        old = importlib.import_module("dpdist.serve.client")
    assert old.Client is dpdist.client.Client and old.retry_schedule is dpdist.client.retry_schedule
    assert set(old.__all__) - {"DEFAULT_RETRY_WINDOW_S"} <= set(dpdist.client.__all__)


def test_the_admin_client_sends_its_token_and_a_device_none():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        return httpx.Response(200, json={"campaign": "c", "state": "open", "config": {}})

    with AdminClient("http://h", admin_token="admin-token-0123456789", transport=httpx.MockTransport(handler)) as admin:
        admin.campaign("c")
    with Client("http://h", transport=httpx.MockTransport(handler)) as device:
        device.config("c")
    assert seen == ["Bearer admin-token-0123456789", None]
    with pytest.raises(InvalidParameterError, match="'admin_token' parameter of AdminClient"):
        AdminClient("http://h", admin_token="")


def test_the_issuer_s_key_is_read_up_to_the_answer_limit():
    """A device checks the issuer's key of a relayed campaign; an answer past the limit (an acknowledgement's, 1 MiB:
    a key is a few hundred bytes) is no key."""
    from dpdist.errors import CampaignIdentityError
    from dpdist.privacypass import b64url_encode
    from dpdist.client._relay_route import RelayRoute

    key = bytes(range(32))
    padding = {"within": b" " * (512 << 10), "past": b" " * (2 << 20)}
    answer = b'{"token_key": "%s"}' % b64url_encode(key).encode()
    issuer = {"url": "http://issuer", "key": "k1"}
    route = RelayRoute("c", "http://relay", {}, issuer, "", None)
    route._check_issuer_key(issuer, key, httpx.MockTransport(
        lambda request: httpx.Response(200, content=answer + padding["within"])))  # within the limit: the key is read
    with pytest.raises(CampaignIdentityError) as error:
        route._check_issuer_key(issuer, key, httpx.MockTransport(
            lambda request: httpx.Response(200, content=answer + padding["past"])))
    assert error.value.code == "issuer_key_mismatch"


@pytest.mark.parametrize("values, got", [(None, "Got None instead."),
                                         ((v for v in (0, 1)), "Got a generator, read once and without a length"),
                                         (iter([0, 1]), "Got a list_iterator")])
def test_submit_values_refuses_none_and_generators_naming_values_as_privatize_does(values, got):
    """``submit_values("c", None)`` is refused, not ``TypeError: len() of unsized object``.  Refused
    before any request (the server here is unreachable), as ``protocol.privatize`` refuses them."""
    from dpdist import local
    from dpdist.errors import InvalidValueTypeError

    with Client("http://127.0.0.1:1", retries=0) as client, pytest.raises(InvalidValueTypeError) as refused:
        client.submit_values("campaign", values)
    assert str(refused.value).startswith("The 'values' argument of Client.submit_values must be a 1-D array")
    assert got in str(refused.value)
    with pytest.raises(InvalidValueTypeError, match=r"^The 'values' argument of GRR\.privatize must be a 1-D array .*"
                                                    + ("Got None" if values is None else "Got a list_iterator")):
        local.make("grr", epsilon=1, domain_size=4).privatize(values if values is None else iter([0, 1]), rng=1)


@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
@pytest.mark.slow  # 0.45 CPU-s: a campaign end to end
def test_a_devices_ledger_charges_its_reports_as_the_budget_session_charges_the_campaign(tmp_path, name):
    """The reports a device sends through ``submit_values(..., ledger=...)`` (1, 20 and 365 of them, eps 0.1, d = 16)
    are stated by its ledger at 1e-8 as ``BudgetSession.campaign`` charges them (20 GRR reports: 0.919, not 1.996)."""
    from dpdist import io, local
    from dpdist.budget import BudgetSession

    protocol = local.make(name, epsilon=0.1, domain_size=16)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"campaign": "c", "state": "open", "config": protocol.config()})
        return httpx.Response(200, json={"campaign": "c", "batch_id": request.url.path.rsplit("/", 1)[1], "n_read": 1,
                                         "accepted": 1, "rejected": {}, "duplicate": False})

    for reports in (1, 20, 365):
        with Client("http://service.test/", transport=httpx.MockTransport(handler)) as client, \
                io.open_ledger(tmp_path / f"{reports}.json", budget=100.0) as ledger:
            client.submit_values("c", [day % 16 for day in range(reports)], ledger=ledger)
        session = BudgetSession(1000.0, 1e-8)
        session.campaign(protocol, reports=reports)
        stated = io.read_ledger(tmp_path / f"{reports}.json").statement(1e-8).epsilon
        assert session.spent.epsilon * (1 - 1e-12) <= stated <= session.spent.epsilon * (1 + 1e-7), reports


#: the marks of the values the device refusal test gives: no message may hold one
MARKS = ("73519", "hovercraft", "\u0416")


def _all_texts(error: BaseException) -> list[str]:
    texts = []
    while error is not None:
        texts += [str(error), repr(error), *map(str, error.args)]
        error = error.__cause__ or error.__context__
    return texts


def _refused_or_sent(client: Client, campaign: str, values, **options) -> list[str]:
    """The texts a device's ``submit_values`` of ``values`` gave: its refusal's (and the exceptions it was raised from)
    and its warnings'."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            client.submit_values(campaign, values, **options)
        except Exception as refused:  # noqa: BLE001 - every refusal's text is read
            texts = _all_texts(refused)
        else:
            texts = []
    return texts + [str(warning.message) for warning in caught]


def test_no_refusal_of_a_devices_values_shows_one(tmp_path, caplog):
    """A device's values marked (an item out of the domain, a fraction, a number past the bounds, an unknown label, a
    word of another alphabet, a key or a pair value out of range, a record's attribute, a value past a ledger's domain)
    through every refusal of ``submit_values`` (direct, and through a device's ledger) and a ledger whose memo was
    damaged: no error, warning or log record holds one (the Python client said ``Got 1 unknown value(s), e.g.
    'hovercraft'``; Java's says "not shown: a user's value is private")."""
    import logging

    import numpy as np

    from dpdist import io, local
    from dpdist.local.keyvalue import KeyValueSets

    protocols = {
        "labels": local.make("grr", epsilon=1.0, labels=["bus", "bike", "car"]),
        "items": local.make("oue", epsilon=1.0, domain_size=4),
        "numbers": local.make("sw", epsilon=1.0, bounds=(0.0, 10.0)),
        "words": local.make("pem", epsilon=1.0, alphabet="abc", max_chars=3),
        "pairs": local.make("pckv-grr", epsilon=1.0, domain_size=4, padding_length=2),
        "records": local.make("spl", epsilon=1.0, attributes=[{"name": "mode", "domain_size": 3},
                                                               {"name": "minutes", "bounds": [0, 60]}]),
        "memo": local.make("l-grr", epsilon=1.0, epsilon_1=0.5, domain_size=4),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        campaign = request.url.path.split("/")[3]
        if request.method == "GET":
            return httpx.Response(200, json={"campaign": campaign, "state": "open", "config": protocols[campaign].config()})
        return httpx.Response(400, json={"error": "invalid_batch", "detail": "refused by this test"})

    given = {
        "labels": [["bus", "hovercraft-73519"], ["hovercraft"]],
        "items": [[0, 73519], [-73519], [1.0, 73519.5], ["hovercraft-73519"], [None, 73519]],
        "numbers": [[1.0, float("nan"), 73519.5], [73519.5], [73519 * 10**400], ["hovercraft-73519"]],
        "words": [["ab", "hovercraft\u0416"], ["ab", "c\u0416"], [73519]],
        "pairs": [np.array([[73519.5, np.nan, np.nan, np.nan]]), KeyValueSets(np.array([73519]), np.array([0.5]), np.array([1]))],
        "records": [np.array([[73519, 5.0]]), np.array([[1, 73519.5]]), np.array([["hovercraft", "73519"]])],
        "memo": [[73519], [2.5]],
    }
    texts = []
    caplog.set_level(logging.DEBUG)
    with Client("http://service.test/", retries=0, transport=httpx.MockTransport(handler)) as client:
        for campaign, batches in given.items():
            for values in batches:
                texts += _refused_or_sent(client, campaign, values)
        for values in ([73519], ["hovercraft"]):
            with io.open_ledger(tmp_path / "ledger.json", budget=100.0) as ledger:
                texts += _refused_or_sent(client, "memo", values, ledger=ledger)
    ledger = io.read_ledger(tmp_path / "ledger.json").to_dict() if (tmp_path / "ledger.json").exists() else None
    for damage in ({"73519": "hovercraft"}, {"73519": [1, 2]}, "hovercraft-73519"):
        state = {"format": "dpdist-ledger", "version": 2, "budget": 100.0, "charges": [], "streams": {
            "local grr": {"collector": "local", "reports": 1, "config": protocols["memo"].config(), "memo": damage}}}
        for broken in (state, {**state, "version": "hovercraft-73519"}, {**state, "streams": {"x": "hovercraft-73519"}}):
            try:
                local.ledger.PrivacyLedger.from_dict(broken)
            except Exception as refused:  # noqa: BLE001 - every refusal's text is read
                texts += _all_texts(refused)
    texts += [record.getMessage() for record in caplog.records]
    assert len(texts) > 25 and ledger is not None, texts
    shown = [text for text in texts if any(mark in text for mark in MARKS)]
    assert not shown, shown
