"""Issuer RSA keys made once per session, handed out in order within each test (``pooled_issuer_keys``).

An issuer makes an RSA-2048 key for every ``POST /issuer/v1/keys`` (20-40 ms of OpenSSL's prime search); the in-process
tests of the issuer and of relayed campaigns make one or more per test.  With this fixture the n-th key a test's issuer
makes is the session's n-th key: keys stay distinct within a test (each test has its own database, so nothing carries
over between tests), and each is generated once per session.  The key generation itself is
:func:`dpdist.privacypass.generate_private_key`, tested in tests/privacypass/.
"""

from __future__ import annotations

import functools
import itertools

import pytest


@functools.cache
def _key(index: int):
    from dpdist.privacypass import generate_private_key

    return generate_private_key()


@pytest.fixture
def pooled_issuer_keys(monkeypatch):
    """The issuer of this test takes its keys from the session's pool, in order."""
    from dpdist.issuer import _app

    counter = itertools.count()
    monkeypatch.setattr(_app, "generate_private_key", lambda: _key(next(counter)))
