"""The gateway's key ring (dpdist.serve._ohttp_keys): a first key, rotation by key id, retirement, processes sharing it."""

from __future__ import annotations

import pytest

pytest.importorskip("pyhpke")

from dpdist import _ohttp  # noqa: E402
from dpdist.serve import create_app  # noqa: E402
from dpdist.serve._ohttp_keys import RELOAD_S, GatewayKeys  # noqa: E402
from dpdist._guard._refusals import Refusal  # noqa: E402


@pytest.fixture
def db(tmp_path):
    database = create_app(str(tmp_path / "c.sqlite"), admin_token="admin-token-0123456789").state.service.store.db
    yield database
    database.close()


def test_an_empty_ring_gets_key_id_0_and_serves_it_as_application_ohttp_keys(db):
    ring = GatewayKeys(db)
    (config,) = _ohttp.decode_key_list(ring.document())
    assert config.key_id == 0 and config.supported
    assert config.public_key == _ohttp.public_key_of(ring.private_keys()[0])
    assert GatewayKeys(db).document() == ring.document()  # a second process finds the same key, makes none


def test_rotation_takes_the_smallest_unused_id_and_keeps_earlier_keys_until_retired(db):
    ring = GatewayKeys(db)
    ring.document()
    assert [ring.rotate()["key_id"] for _ in range(3)] == [1, 2, 3]
    assert [config.key_id for config in _ohttp.decode_key_list(ring.document())] == [3, 2, 1, 0]
    ring.retire(1)
    assert sorted(ring.private_keys()) == [0, 2, 3]
    assert ring.rotate()["key_id"] == 4  # a retired id is reused only once all 256 were used
    for refused, code in ((1, "unknown_key_id"), ("x", "invalid_key_id"), (300, "invalid_key_id")):
        with pytest.raises(Refusal) as error:
            ring.retire(refused)
        assert error.value.code == code
    for key_id in (0, 2, 3):
        ring.retire(key_id)
    with pytest.raises(Refusal) as last:
        ring.retire(4)
    assert last.value.code == "last_key"


def test_all_256_ids_listed_refuse_rotation_until_a_retired_key_is_forgotten(db):
    """the 257th rotation reused the id of the key retired longest ago, which vanished from the
    listing, and a device holding it got not_decapsulated instead of the ohttp-key problem: a listed id is never reused."""
    ring = GatewayKeys(db)
    ring.document()
    for _ in range(255):
        ring.rotate()
    ring.retire(3)
    ring.retire(7)
    with pytest.raises(Refusal) as full:
        ring.rotate()
    assert full.value.code == "ohttp_keys_full" and "/api/ohttp/keys/3?forget=true" in str(full.value)
    assert {entry["key_id"] for entry in ring.listing()} == set(range(256))  # the retired keys still listed
    with pytest.raises(Refusal) as in_use:
        ring.retire(8, forget=True)
    assert in_use.value.code == "key_in_use"
    assert ring.retire(3, forget=True)["forgotten"] is True
    assert 3 not in {entry["key_id"] for entry in ring.listing()}
    with pytest.raises(Refusal) as gone:
        ring.retire(3, forget=True)
    assert gone.value.code == "unknown_key_id"
    assert ring.rotate()["key_id"] == 3 and 3 in ring.private_keys() and 7 not in ring.private_keys()


def test_another_process_sees_a_rotation_at_once_for_a_key_id_it_does_not_know(db):
    now = [0.0]
    mine, theirs = GatewayKeys(db, clock=lambda: now[0]), GatewayKeys(db, clock=lambda: now[0])
    mine.document()
    theirs.document()
    new = mine.rotate()["key_id"]
    assert new not in theirs.ring().private_keys  # cached: not read again within RELOAD_S
    assert new in theirs.private_keys(new)  # a request for the new key id reads the ring again
    now[0] += RELOAD_S
    mine.retire(new)
    assert new not in theirs.ring().private_keys


def test_the_cached_keys_answer_without_the_database_only_while_fresh_and_holding_the_key_id(db):
    now = [100.0]
    ring = GatewayKeys(db, clock=lambda: now[0])
    assert ring.cached_private_keys(0) is None  # nothing read yet: the caller reads the database (off the event loop)
    keys = ring.private_keys(0)
    assert ring.cached_private_keys(0) == keys and ring.cached_private_keys(None) == keys
    assert ring.cached_private_keys(7) is None  # a key id it does not hold: perhaps another process rotated
    now[0] += RELOAD_S
    assert ring.cached_private_keys(0) is None  # stale: read again
