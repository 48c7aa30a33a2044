"""What every endpoint does first: find the service, check the admin token."""

from __future__ import annotations

from starlette.requests import Request

from .._http import bearer

__all__ = ["service_of", "as_admin"]


def service_of(request: Request):
    """The :class:`~.._service.Service` of the application serving ``request``."""
    return request.app.state.service


def as_admin(request: Request):
    """The service, once the request carries ``Authorization: Bearer <admin token>`` (else 401)."""
    service = request.app.state.service
    service.check_admin(bearer(request))
    return service
