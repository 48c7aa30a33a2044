"""A campaign's config is checked at creation for what the service and every device can hold: its statistic
(``--max-statistic-bytes``) and its public config answer, which devices read within a bound (a config of
1.4 million labels was taken, and no device could submit: its answer carries the labels twice, 19.6 MB)."""

from __future__ import annotations

import itertools
import string
import warnings

import pytest

pytest.importorskip("starlette")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dpdist._json import most_values_within, values_upper_bound  # noqa: E402
from dpdist.serve import create_app  # noqa: E402
from dpdist.serve._campaigns import check_config, protocol_of  # noqa: E402
from dpdist._guard._refusals import InvalidRequest  # noqa: E402
from serve_support import admin_headers, ADMIN_TOKEN  # noqa: E402


def _labels(count: int) -> list[str]:
    return ["".join(letters) for letters in itertools.islice(
        itertools.product(string.ascii_letters + string.digits, repeat=4), count)]


@pytest.mark.slow  # 0.77 CPU-s: the service end to end
def test_a_config_whose_answer_devices_would_refuse_is_refused_at_creation():
    with pytest.raises(InvalidRequest) as refused:
        check_config({"protocol": "grr", "epsilon": 1.0, "labels": _labels(1_400_000)})
    assert refused.value.code == "config_too_large"
    assert "2,800,0" in str(refused.value) and "devices read at most 4.2 MB and 524,288 values" in str(refused.value)


def test_the_service_s_bound_is_what_python_devices_read():
    from dpdist._http._deadline import CONFIG_ANSWER_BYTES
    from dpdist.serve._campaigns import DEVICE_CONFIG_BYTES

    assert DEVICE_CONFIG_BYTES == CONFIG_ANSWER_BYTES


def test_a_config_whose_record_header_a_service_would_refuse_is_refused_at_creation():
    """Each report record carries the config; a header past 1 MiB is refused as malformed: 150,000 labels (1.2 MB)
    were taken and every batch refused."""
    check_config({"protocol": "grr", "epsilon": 1.0, "labels": _labels(100_000)})
    with pytest.raises(InvalidRequest) as refused:
        check_config({"protocol": "grr", "epsilon": 1.0, "labels": _labels(150_000)})
    assert refused.value.code == "config_too_large" and "makes record headers of 1.2 MB" in str(refused.value)


def test_the_check_holds_the_real_answer_within_what_devices_read(tmp_path, monkeypatch):
    """A label list the check takes near its bound gives a config answer within the devices' bounds (the check's
    estimate is no smaller than the answer); here with a bound of 2 MiB (262,144 values), 16 MiB in the service."""
    monkeypatch.setattr("dpdist.serve._campaigns.DEVICE_CONFIG_BYTES", 2 << 20)
    with TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js")) as http:
        taken, refused = 125_000, 135_000  # just under and over the values' bound (two values a label)
        answers = {count: http.post("/api/campaigns", headers=admin_headers(), json={
            "campaign": f"l{count}", "config": {"protocol": "grr", "epsilon": 1.0, "labels": _labels(count)}})
            for count in (taken, refused)}
        assert answers[refused].status_code == 400 and answers[refused].json()["error"] == "config_too_large"
        assert answers[taken].status_code == 201, answers[taken].text
        body = http.get(f"/api/campaigns/l{taken}/config").content
    containers, values = values_upper_bound(body)
    most_values, most_containers = most_values_within(2 << 20)
    assert len(body) <= 2 << 20 and values <= most_values and containers <= most_containers


def test_a_relayed_campaign_s_config_must_pass_through_its_relay_s_pages(tmp_path):
    """A relay passes on a campaign's config in pages of at most 1 MiB (``dpdist._http._deadline.PAGE_ANSWER_BYTES``):
    a relayed campaign whose config answer would not fit is refused at creation and when its config is replaced."""
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, relay_token="relay-token-0123456789",
                     static_dir=tmp_path / "js")
    small, large = ({"protocol": "grr", "epsilon": 1.0, "labels": _labels(count)} for count in (1_000, 80_000))
    with TestClient(app) as http:
        def create(name, config, relayed):
            return http.post("/api/campaigns", headers=admin_headers(), json={
                "campaign": name, "config": config, **({"relay": {"url": "http://relay"}} if relayed else {})})

        refused = create("r1", large, True)
        assert refused.status_code == 400 and refused.json()["error"] == "config_too_large", refused.text
        assert "through a relay" in refused.json()["detail"]
        assert create("d1", large, False).status_code == 201  # read directly: up to 16 MiB
        assert create("r2", small, True).status_code == 201
        replaced = http.put("/api/campaigns/r2/config", headers=admin_headers(), json={"config": large})
        assert replaced.status_code == 400 and replaced.json()["error"] == "config_too_large", replaced.text
        assert http.get("/api/campaigns/r2/config").json()["config"]["labels"] == small["labels"]


def test_a_new_campaign_records_ss_s_subset_size_and_a_stored_one_without_it_keeps_the_ceiling():
    created = check_config({"protocol": "ss", "epsilon": 4.0, "domain_size": 128})
    assert created.config()["subset_size"] == created.subset_size == 2  # the k of least variance, stored with it
    assert protocol_of(created.config()).subset_size == 2
    stored = {"protocol": "ss", "version": 1, "epsilon": 4.0, "domain_size": 128}  # a campaign created before
    assert protocol_of(stored).subset_size == 3 and protocol_of(stored).config() == stored
