"""The routes of ``dpdist serve``, one module per resource: campaigns, batches, results, pages.

Every endpoint is a module-level ``async`` function that finds the service in
``request.app.state.service`` and carries its OpenAPI operation
(:func:`~.._openapi.documented`); :data:`ROUTES` is the table the application and
the OpenAPI schema are built from.
"""

from __future__ import annotations

from . import batches, campaigns, pages, results

__all__ = ["ROUTES"]

ROUTES = [*batches.ROUTES, *campaigns.ROUTES, *results.ROUTES, *pages.ROUTES]  # the devices' route first: most requests
