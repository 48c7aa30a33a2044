"""``dpdist serve``: a collection service that devices report to (install ``dpdist[serve]``).

Campaigns (a public id, a protocol config, a state: created, open, closed)
receive batches of reports over HTTP; each batch carries a client-chosen
batch id and is counted exactly once, after it is durable in the database
(SQLite in WAL mode, or PostgreSQL, through one code path); the per-campaign
aggregate is stored incrementally as the protocol's mergeable sufficient
statistic.  See ``docs/how-to/run-a-campaign.md`` ("Running a campaign") and the
OpenAPI schema at ``/openapi.json``.

>>> from dpdist.serve import create_app
>>> app = create_app("campaigns.sqlite", admin_token="...")   # doctest: +SKIP
>>> import uvicorn; uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
"""

from ._limits import DEFAULT_MAX_BODY_BYTES

__all__ = ["create_app", "Service", "openapi_schema", "DEFAULT_MAX_BODY_BYTES"]


def __getattr__(name):  # Starlette is imported only when the service is built
    if name in ("create_app", "Service", "openapi_schema"):
        from . import _app  # lazy: Starlette loads only when the service is built (the command line reads _limits at every start)

        return getattr(_app, name)
    raise AttributeError(name)
