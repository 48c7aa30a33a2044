"""dpdist's deprecated envelope (dpdist._wire._envelope): what the collector opens and the relay checks of a report a
device of an earlier version sealed (:mod:`sealed_v1_support`, with pyhpke), and bad arguments refused by name."""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError, MalformedReportError

pytest.importorskip("pyhpke")
pytest.importorskip("cryptography")

from sealed_v1_support import seal  # noqa: E402 - after the extras' checks

from dpdist._wire import _envelope  # noqa: E402


@pytest.mark.parametrize("content_type, body", [("application/json", b'{"reports": [1]}'), ("application/octet-stream", b"")])
def test_a_report_an_earlier_device_sealed_opens_for_its_campaign_only(content_type, body):
    pair = _envelope.generate_key()
    sealed = seal(pair.public_key, "c", body, content_type)
    _envelope.check_sealed(sealed, pair.key_id)
    assert len(sealed) % 256 == 57 and _envelope.open_sealed(pair.private_key, "c", sealed) == (content_type, body)
    for campaign, private in [("other", pair.private_key), ("c", _envelope.generate_key().private_key)]:
        with pytest.raises(MalformedReportError, match="does not open with the campaign's key"):
            _envelope.open_sealed(private, campaign, sealed)
    with pytest.raises(MalformedReportError, match="another key than the campaign's current one"):
        _envelope.check_sealed(sealed, _envelope.generate_key().key_id)
    with pytest.raises(MalformedReportError, match="Unknown sealed-report version 2"):
        _envelope.check_sealed(b"\x02" + sealed[1:])


def test_open_refuses_bad_arguments_by_name_and_a_config_names_the_key_and_its_id():
    pair = _envelope.generate_key()
    sealed = seal(pair.public_key, "c", b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'private_key' parameter of open_sealed must be a raw 32-byte"):
        _envelope.open_sealed(b"k" * 5, "c", sealed)
    with pytest.raises(InvalidParameterError, match=r"The 'campaign' parameter of open_sealed .*Got None instead"):
        _envelope.open_sealed(pair.private_key, None, sealed)
    config = _envelope.public_key_config(pair.public_key)
    assert config["key_id"] == pair.key_id.hex() and config["ids"] == [0x0020, 0x0001, 0x0001]
    assert config["public_key"].rstrip("=") == config["public_key"] and len(config["public_key"]) == 43
