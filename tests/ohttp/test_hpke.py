"""HPKE (dpdist._ohttp._hpke) on RFC 9180's Appendix A.1.1 and against pyhpke, an implementation dpdist did not write.

The vectors are RFC 9180's for DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM in base mode (A.1.1: the setup,
the first two encryptions of A.1.1.1, the three exports of A.1.1.2).
"""

from __future__ import annotations

import hmac
import os

import pytest

pytest.importorskip("pyhpke")

from cryptography.exceptions import InvalidTag  # noqa: E402
from pyhpke import AEADId, CipherSuite, KDFId, KEMId  # noqa: E402

from dpdist._ohttp import _hpke  # noqa: E402

# ---- RFC 9180, Appendix A.1.1 ----
INFO = bytes.fromhex("4f6465206f6e2061204772656369616e2055726e")
IKM_E = bytes.fromhex("7268600d403fce431561aef583ee1613527cff655c1343f29812e66706df3234")
SK_EM = bytes.fromhex("52c4a758a802cd8b936eceea314432798d5baf2d7e9235dc084ab1b9cfa2f736")
ENC = bytes.fromhex("37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431")
SK_RM = bytes.fromhex("4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8")
PK_RM = bytes.fromhex("3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4d")
PLAINTEXT = bytes.fromhex("4265617574792069732074727574682c20747275746820626561757479")
#: the encryptions of sequence numbers 0 and 1, each with aad "Count-<seq>"
SEALED = [bytes.fromhex("f938558b5d72f1a23810b4be2ab4f84331acc02fc97babc53a52ae8218a355a96d8770ac83d07bea87e13c512a"),
          bytes.fromhex("af2d7e9ac9ae7e270f46ba1f975be53c09f8d875bdc8535458c2494e8a6eab251c03d0c22a56b8ca42c2063b84")]
EXPORTS = [(b"", "3853fe2b4035195a573ffc53856e77058e15d9ea064de3e59f4961d0095250ee"),
           (b"\x00", "2e8f0b54673c7029649d4eb9d5e33bf1872cf76d623ff164ac185da9e88c21a5"),
           (b"TestContext", "e9e43065102c3836401bed8c3c3c75ae46be1639869391d62c61f1ec7af54931")]
PYHPKE = CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)


def test_the_sender_reproduces_the_rfc_encapsulation_and_encryptions():
    assert _hpke.public_key_of(SK_RM) == PK_RM
    enc, sender = _hpke.setup_sender(PK_RM, INFO, SK_EM)
    assert enc == ENC
    assert [sender.seal(PLAINTEXT, f"Count-{sequence}".encode()) for sequence in (0, 1)] == SEALED


def test_the_ephemeral_key_pair_derived_from_the_rfc_seed_is_the_rfcs_and_pyhpkes():
    assert _hpke.derive_key_pair(IKM_E) == (SK_EM, ENC)
    seed = os.urandom(32)
    theirs = PYHPKE.kem.derive_key_pair(seed)
    assert _hpke.derive_key_pair(seed) == (theirs.private_key.to_private_bytes(), theirs.public_key.to_public_bytes())


def test_the_recipient_opens_the_rfc_encryptions_in_sequence_and_exports_its_values():
    recipient = _hpke.setup_recipient(ENC, SK_RM, INFO)
    assert [recipient.open(sealed, f"Count-{sequence}".encode()) for sequence, sealed in enumerate(SEALED)] == [PLAINTEXT] * 2
    assert [recipient.export(context, 32).hex() for context, _ in EXPORTS] == [value for _, value in EXPORTS]


def test_a_message_out_of_sequence_or_changed_does_not_open_and_does_not_advance():
    recipient = _hpke.setup_recipient(ENC, SK_RM, INFO)
    with pytest.raises(InvalidTag):
        recipient.open(SEALED[1], b"Count-1")  # sequence number 1 first
    with pytest.raises(InvalidTag):
        recipient.open(SEALED[0][:-1] + bytes([SEALED[0][-1] ^ 1]), b"Count-0")
    assert recipient.open(SEALED[0], b"Count-0") == PLAINTEXT


@pytest.mark.parametrize("seed", range(3))
def test_pyhpke_and_dpdist_open_each_others_messages_and_export_the_same_secrets(seed):
    private, info, message = os.urandom(32), os.urandom(seed * 7), os.urandom(100 + seed)
    public = _hpke.public_key_of(private)
    enc, theirs = PYHPKE.create_sender_context(PYHPKE.kem.deserialize_public_key(public), info=info)
    ours, sealed = _hpke.setup_recipient(enc, private, info), theirs.seal(message, aad=b"a")
    with pytest.raises(InvalidTag):
        ours.open(sealed, b"b")
    assert ours.open(sealed, b"a") == message
    assert ours.export(b"message/bhttp response", 16) == theirs.export(b"message/bhttp response", 16)
    enc, ours = _hpke.setup_sender(public, info)
    theirs = PYHPKE.create_recipient_context(enc, PYHPKE.kem.deserialize_private_key(private), info=info)
    assert theirs.open(ours.seal(message), aad=b"") == message
    assert theirs.export(b"", 32) == ours.export(b"", 32)


def test_a_low_order_or_short_key_is_refused_and_an_export_past_one_block_is_refused():
    with pytest.raises(ValueError):
        _hpke.setup_recipient(bytes(32), SK_RM, INFO)  # the all-zero point: an all-zero shared secret
    with pytest.raises(ValueError):
        _hpke.setup_recipient(ENC[:31], SK_RM, INFO)
    with pytest.raises(ValueError):
        _hpke.setup_sender(bytes(32), INFO)
    with pytest.raises(ValueError, match="1 to 32 bytes"):
        _hpke.setup_recipient(ENC, SK_RM, INFO).export(b"", 33)


@pytest.mark.parametrize("key_bytes", [0, 16, 32, 48, 64, 65, 131])
def test_hmac_sha256_is_the_standard_librarys_for_keys_shorter_and_longer_than_a_block(key_bytes):
    key, message = bytes(range(key_bytes)), b"Test Using Larger Than Block-Size Key"
    assert _hpke.hmac_sha256(key, message) == hmac.digest(key, message, "sha256")
