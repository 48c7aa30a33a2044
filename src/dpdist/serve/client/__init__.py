"""Deprecated: the Python clients of ``dpdist serve`` are :mod:`dpdist.client` (``Client``, ``AdminClient``).

This name, where the client once lived, imports the same objects from there with a :class:`DeprecationWarning`, so
code written against it keeps working.
"""

import warnings

from ..._http._retry import DEFAULT_RETRY_WINDOW_S
from ...client import (DEFAULT_BATCH_SIZE, MAX_RETRY_AFTER, Client, issuer_of, json_rows, retry_after, retry_delay,
                       retry_schedule)

__all__ = ["Client", "DEFAULT_BATCH_SIZE", "DEFAULT_RETRY_WINDOW_S", "MAX_RETRY_AFTER", "issuer_of", "json_rows",
           "retry_after", "retry_delay", "retry_schedule"]

warnings.warn("dpdist.serve.client is deprecated: import from dpdist.client (Client, AdminClient).", DeprecationWarning,
              stacklevel=2)
