"""Issuer RSA keys made once per session, handed out in order within each test (``pooled_issuer_keys``).

An issuer makes an RSA-2048 key for every ``POST /issuer/v1/keys`` (20-40 ms of OpenSSL's prime search); the in-process
tests of the issuer and of relayed campaigns make one or more per test.  With this fixture the n-th key a test's issuer
makes is the session's n-th key: keys stay distinct within a test (each test has its own database, so nothing carries
over between tests), and each is generated once per session.  The key generation itself is
:func:`dpdist.privacypass.generate_private_key`, tested in tests/privacypass/.

The issuer loads a stored key from its PKCS#8 bytes on first use (``_Issuer.signing_key``: OpenSSL checks the RSA key,
about 30 ms); the pooled keys' bytes recur from test to test, so each distinct key is loaded (and checked) once per
session and the issuer gets that key object, the same immutable key it would have loaded; bytes it has not seen (a
corrupted or foreign key) go to the real loader every time.
"""

from __future__ import annotations

import functools
import itertools

import pytest


@functools.cache
def _key(index: int):
    from dpdist.privacypass import generate_private_key

    return generate_private_key()


@functools.cache
def _loaded(data: bytes, password):
    from cryptography.hazmat.primitives import serialization

    return serialization.load_der_private_key(data, password=password)


class _Serialization:
    """``cryptography``'s serialization module as the issuer sees it, its DER key loads shared within the session."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    @staticmethod
    def load_der_private_key(data, password=None):
        return _loaded(bytes(data), password)


@pytest.fixture
def pooled_issuer_keys(monkeypatch):
    """The issuer of this test takes its keys from the session's pool, in order."""
    from dpdist.issuer import _app

    counter = itertools.count()
    monkeypatch.setattr(_app, "generate_private_key", lambda: _key(next(counter)))
    monkeypatch.setattr(_app, "serialization", _Serialization(_app.serialization))
