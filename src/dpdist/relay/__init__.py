"""``dpdist relay``: a relay that hides who sent a report from the collector that reads it (install ``dpdist[relay]``).

Devices encapsulate each report to the campaign's Oblivious HTTP key configuration (an RFC 9458 request;
:mod:`dpdist._wire._ohttp_report`) and send it to the relay, not to the collector.  The relay keeps the ciphertexts in a durable queue
(SQLite; :mod:`._queue`), without the sender's address or the time of arrival; once at least ``K``
reports of a campaign wait (``--min-batch``, a public setting), it shuffles them with the CSPRNG and
delivers them to ``dpdist serve`` as one batch under a random batch id, retried until acknowledged
(:mod:`._forwarder`), which the collector counts once.  The collector learns the reports of each
batch as a multiset, not who sent them; the relay learns who sent something, not what.  The central
guarantee this gives is computed by :func:`dpdist.privacy.shuffled` (docs/how-to/anonymous-collection.md,
"Anonymous collection").

>>> from dpdist.relay import create_app
>>> app = create_app("relay.sqlite", collector="https://collector.example", relay_token="...",
...                  min_batch=1000, max_batch=10000)                                   # doctest: +SKIP
"""

__all__ = ["create_app"]


def __getattr__(name):  # Starlette and httpx are imported only when the relay is built
    if name == "create_app":
        from ._app import create_app  # lazy: Starlette and httpx load only when the relay is built

        return create_app
    raise AttributeError(name)
