"""The Python client of ``dpdist serve``, under its public name (it lives beside the service, in
:mod:`dpdist.serve.client`).

>>> from dpdist.client import Client
>>> client = Client("http://127.0.0.1:8000")                       # doctest: +SKIP
"""

from .serve.client import (
    DEFAULT_BATCH_SIZE,
    FILE_MAX_RECORDS,
    FILE_PART_BYTES,
    MAX_RETRY_AFTER,
    Client,
    issuer_of,
    json_rows,
    retry_after,
    retry_delay,
    retry_schedule,
)

__all__ = ["Client", "DEFAULT_BATCH_SIZE", "FILE_MAX_RECORDS", "FILE_PART_BYTES", "MAX_RETRY_AFTER", "issuer_of", "json_rows",
           "retry_schedule", "retry_after", "retry_delay"]
