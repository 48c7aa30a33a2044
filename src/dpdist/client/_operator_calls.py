"""The operator's calls on a device's :class:`~dpdist.client.Client`, deprecated: :class:`~dpdist.client.AdminClient`
makes them now.

``Client(server, admin_token=...)`` once made the admin's calls too (``create_campaign``, ``estimate``, ...).  Each
still works, with a :class:`DeprecationWarning`: it is the same call of an :class:`~dpdist.client.AdminClient` built
with the client's server, admin token and retry settings, so there is one implementation of each.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ..errors import InvalidParameterError
from ._admin import AdminClient

__all__ = ["ADMIN_CALLS", "OperatorCalls"]

#: the operator's calls a Client made before AdminClient took them
ADMIN_CALLS = ("create_campaign", "rounds", "advance_round", "enroll", "delete_campaign", "set_config", "open_campaign",
               "close_campaign", "set_relay_envelopes", "campaign", "campaigns", "estimate", "estimate_png", "history",
               "export")


class OperatorCalls:
    """The deprecated admin calls of :class:`~dpdist.client.Client` (the module's docstring), each forwarded to one
    :class:`~dpdist.client.AdminClient` built at the first of them and closed with the client."""

    server: str
    admin_token: str | None
    retries: int | None
    backoff: float
    retry_window: float
    on_retry: Callable[[str, int, float, int], Any] | None
    _transport: Any
    _timeout: Any
    _operator: AdminClient | None = None

    def _admin_client(self) -> AdminClient:
        if self._operator is None:
            if not self.admin_token:
                raise InvalidParameterError("This operation needs the admin token: call it on "
                                            "dpdist.client.AdminClient(server, admin_token=...).")
            self._operator = AdminClient(self.server, admin_token=self.admin_token, retries=self.retries,
                                         backoff=self.backoff, timeout=self._timeout, transport=self._transport,
                                         on_retry=self.on_retry, retry_window=self.retry_window)
        return self._operator

    def _close_operator(self) -> None:
        if self._operator is not None:
            self._operator.close()


def _forwarded(name: str) -> Callable[..., Any]:
    def call(self: OperatorCalls, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"Client.{name} is deprecated: call it on dpdist.client.AdminClient(server, admin_token=...).",
                      DeprecationWarning, stacklevel=2)
        return getattr(self._admin_client(), name)(*args, **kwargs)

    call.__name__, call.__qualname__ = name, f"Client.{name}"
    call.__doc__ = f"Deprecated: :meth:`AdminClient.{name} <dpdist.client.AdminClient.{name}>`."
    return call


for _name in ADMIN_CALLS:
    setattr(OperatorCalls, _name, _forwarded(_name))
