"""The in-process issuers of these tests take their RSA keys from the session's pool (tests/issuer_key_pool.py)."""

from issuer_key_pool import pooled_issuer_keys  # noqa: F401 - the fixture, for the modules that use it
