"""The Python clients of ``dpdist serve`` (on httpx; install ``dpdist[serve]``): a device's and the operator's.

:class:`Client` is a device: it fetches a campaign's public config, randomizes locally with the CSPRNG and submits
the reports, directly, through a standard Oblivious HTTP relay, or each as an RFC 9458 request to a relayed campaign's
relay with a Privacy Pass token.  :class:`AdminClient` is the operator: campaigns, estimates, exports and rounds, under the admin token.
Both send through one connection (retries, deadlines, one-line refusals) and know nothing of the server's code.

>>> from dpdist.client import AdminClient, Client
>>> admin = AdminClient("http://127.0.0.1:8000", admin_token=token)                  # doctest: +SKIP
>>> admin.create_campaign("commute", proto.config()); admin.open_campaign("commute")  # doctest: +SKIP
>>> acks = Client("http://127.0.0.1:8000").submit_values("commute", minutes)          # doctest: +SKIP
>>> admin.estimate("commute", postprocess="norm-sub")["estimate"]                     # doctest: +SKIP
"""

from .._http._retry import MAX_RETRY_AFTER, retry_after, retry_delay
from ._admin import AdminClient, issuer_of
from ._connection import retry_schedule
from ._device import DEFAULT_BATCH_SIZE, FILE_MAX_RECORDS, FILE_PART_BYTES, Client, json_rows

__all__ = ["AdminClient", "Client", "DEFAULT_BATCH_SIZE", "FILE_MAX_RECORDS", "FILE_PART_BYTES",
           "MAX_RETRY_AFTER", "issuer_of", "json_rows", "retry_after", "retry_delay", "retry_schedule"]
