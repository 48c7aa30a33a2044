"""The OpenAPI 3.1 description of ``dpdist serve`` (served at ``/openapi.json``), generated from the route table.

Each endpoint carries its own operation (:func:`documented`: summary, security,
body, answers and the refusals it can give); :func:`schema_of` walks the
routes, reads each one's path and methods, and derives the path parameters and
their patterns from the ids' regular expressions.  Only the shapes of bodies
(:data:`SCHEMAS`) are written out here.  No Starlette import: the command line
and the tests read this without the serve extra's weight.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .. import __version__
from ..estimates import JSON_SCHEMA
from ._campaigns import BATCH_ID, CAMPAIGN_ID

__all__ = ["documented", "schema_of", "json_answer", "content_answer", "ref", "SCHEMAS"]


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def json_answer(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def content_answer(media_type: str, description: str) -> dict:
    return {"description": description, "content": {media_type: {}}}


#: what each refusal status means, in the schema's answers
_MEANING = {
    400: "bad request (malformed batch, invalid id, config or option)",
    401: "missing or wrong token",
    403: "the enrollment token has no reports left for this batch (contribution_limit)",
    404: "unknown campaign",
    408: "the request body arrived too slowly (body_timeout); the connection is closed",
    409: "conflict (campaign exists, not open, closed, full, batch id reused with other content or counted by "
    "another campaign, no reports kept)",
    413: "request body, records or rows over the server's limits",
    415: "unsupported content type",
    429: "this client address sends batches too fast (rate_limited; see Retry-After)",
    503: "the server is at capacity (busy), its database cannot answer now, or it is shutting down (shutting_down); "
    "see Retry-After",
}
_SECURITY: dict[str | None, list[dict[str, list[str]]] | None] = {"admin": [{"admin": []}], "submit": [{}, {"submit": []}],
                                                                  "relay": [{"relay": []}], None: None}


def documented(
    summary: str,
    *,
    security: str | None = None,
    body: dict | None = None,
    answers: dict | None = None,
    errors: tuple = (),
    query: tuple = (),
) -> Callable:
    """Attach an OpenAPI operation to an endpoint (read by :func:`openapi_schema` through the route table).

    ``security``: ``"admin"``, ``"submit"`` (a submit token where the campaign has one), ``"relay"`` or None;
    ``body``: the request body object; ``answers``: status -> answer (default: a JSON object);
    ``errors``: the refusal statuses it can give; ``query``: query parameters.
    """
    operation: dict[str, Any] = {"summary": summary}
    if _SECURITY[security] is not None:
        operation["security"] = _SECURITY[security]
    if body is not None:
        operation["requestBody"] = body
    operation["responses"] = {str(status): answer for status, answer in (answers or {200: json_answer({"type": "object"})}).items()}
    operation["responses"].update({str(status): json_answer(ref("Error"), _MEANING[status]) for status in errors})
    query_parameters = list(query)

    def mark(endpoint):
        endpoint.openapi = {"operation": operation, "query": query_parameters}
        return endpoint

    return mark


#: the path parameters of every route, and the ids they must match
def _path_patterns() -> dict[str, str]:
    # key_id: an Oblivious HTTP gateway key's id, 0-255 (RFC 9458 section 3.1; DELETE /api/ohttp/keys/{key_id})
    return {"campaign": CAMPAIGN_ID.pattern, "batch_id": BATCH_ID.pattern, "key_id": "(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"}


_PARAMETER = re.compile(r"{([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?}")


def _path_parameters(path: str) -> list[dict]:
    patterns = _path_patterns()
    return [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": f"^{patterns[name]}$"}}
        for name in _PARAMETER.findall(path)
    ]


def schema_of(routes) -> dict:
    """The schema of ``routes`` (Starlette routes; those whose endpoints are :func:`documented` are described)."""
    paths: dict[str, dict] = {}
    for route in routes:
        document = getattr(getattr(route, "endpoint", None), "openapi", None)
        if document is None or not getattr(route, "methods", None):
            continue
        parameters = [*_path_parameters(route.path), *document["query"]]
        for method in sorted(route.methods - {"HEAD"}):
            operation = dict(document["operation"])
            if parameters:
                operation["parameters"] = parameters
            paths.setdefault(route.path, {})[method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dpdist collection service",
            "version": __version__,
            "description": "Collect local-DP reports for campaigns, count each batch exactly once, and estimate.",
        },
        "components": {
            "securitySchemes": {
                "admin": {"type": "http", "scheme": "bearer", "description": "the server's admin token"},
                "submit": {"type": "http", "scheme": "bearer", "description": "a campaign's optional submit token"},
                "relay": {"type": "http", "scheme": "bearer", "description": "the relay's token (dpdist serve --relay-token)"},
            },
            "schemas": {**SCHEMAS, "EstimateResult": _rebased(
                {key: value for key, value in JSON_SCHEMA.items() if key != "$schema"}, ref("EstimateResult")["$ref"])},
        },
        "paths": paths,
    }


def _rebased(schema, root: str):
    """``schema`` with its references to its own root (``{"$ref": "#"}``, the estimate's recursive parts) pointing at
    ``root``, where it sits in this document: there ``#`` is the whole OpenAPI document."""
    if isinstance(schema, dict):
        return {key: root if key == "$ref" and value == "#" else _rebased(value, root) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_rebased(item, root) for item in schema]
    return schema


_STATE = {"enum": ["created", "open", "closed"]}
_COUNTS = ref("Counts")

#: The shapes of the bodies the routes take and give.
SCHEMAS: dict[str, dict] = {
    "Error": {"type": "object", "required": ["error", "detail"],
              "properties": {"error": {"type": "string"}, "detail": {"type": "string"}}},
    "Counts": {"type": "object", "additionalProperties": {"type": "integer"}},
    "Campaign": {
        "type": "object",
        "properties": {
            "campaign": {"type": "string"}, "state": _STATE, "config": {"type": "object"},
            "submit_token_required": {"type": "boolean"}, "keep_reports": {"type": "boolean"},
            "created_at": {"type": "string"}, "opened_at": {"type": ["string", "null"]},
            "closed_at": {"type": ["string", "null"]}, "n": {"type": "integer"}, "rejected": _COUNTS,
            "refused_batches": _COUNTS, "batches": {"type": "integer"}, "max_reports": {"type": ["integer", "null"]},
            "enrollment": {"type": "boolean"},
            "relayed": {"type": "boolean", "description": "collected through a relay (dpdist relay)"},
            "anonymity": {"$ref": "#/components/schemas/Anonymity"},
        },
    },
    "Anonymity": {
        "type": "object",
        "description": "a relayed campaign's guarantees: the local one, the amplified central one at its smallest batch "
                       "minus the colluding reports, per report, with per_device: a device sending its tokens_each reports into "
                       "one batch (null before the first batch; or a reason and its code), the delta it "
                       "is stated at, who is admitted, the assumptions",
        "properties": {"local": {"type": "object"}, "central": {"type": ["object", "null"]}, "delta": {"type": "number"},
                       "reports": {"type": "integer"}, "smallest_batch": {"type": ["integer", "null"]},
                       "admission": {"type": "object", "description": "issuer, issuer_independent, colluding (devices), "
                                     "tokens_each (the issuer's ceiling per credential), colluding_reports (their product)"},
                       "assumptions": {"type": "array", "items": {"type": "string"}}},
    },
    "NewCampaign": {
        "type": "object",
        "required": ["campaign"],
        "properties": {
            "campaign": {"type": "string"},
            "config": {"type": "object", "description": "a protocol config, as LocalProtocol.config() (required unless "
                       "'rounds' is given)"},
            "submit_token": {"type": "string", "minLength": 16},
            "keep_reports": {"type": "boolean", "default": False},
            "max_reports": {"type": ["integer", "null"], "minimum": 1, "description": "cap on accepted reports"},
            "enrollment": {"type": "boolean", "default": False,
                           "description": "devices submit with enrollment tokens (POST .../enrollments), not a submit token"},
            "relay": {"oneOf": [{"type": "boolean"}, {"type": "object", "properties": {"delta": {"type": "number"}}}],
                      "default": False, "description": "collected through a relay only (the service's relay token): an HPKE "
                      "key in its config, direct submissions refused, the amplified guarantee stated at delta (1e-8)"},
            "rounds": {"type": "object", "description": "runs in rounds (adaptive LDP quantiles): an AdaptiveQuantiles "
                       "plan (q, epsilon, bounds, rounds, grid_size, splits, level) and 'reports', the users of all rounds"},
        },
    },
    "PublicConfig": {
        "type": "object",
        "properties": {
            "campaign": {"type": "string"}, "state": _STATE, "config": {"type": "object"},
            "client_view": {"type": "object", "description": "config, declared report format and design constants "
                            "(LocalProtocol.client_view); the JavaScript client checks them against epsilon"},
            "submit_token_required": {"type": "boolean"}, "enrollment_token_required": {"type": "boolean"},
            "max_body_bytes": {"type": "integer"}, "max_records": {"type": "integer"}, "max_json_rows": {"type": "integer"},
            "max_batch_reports": {"type": "integer", "description": "the most reports one batch may hold (what counting "
                                  "them costs the collector, --max-batch-work); more is refused with 413"},
            "relay": {"type": "object", "description": "a relayed campaign's HPKE suite, public_key (base64url) and key_id"},
            "submit_to": {"type": ["string", "null"], "description": "a rounds campaign: the current round's campaign, "
                          "where devices submit"},
            "rounds": {"type": "object", "description": "a rounds campaign: round, of, campaign, cuts, thresholds, plan, "
                       "sizes, round_state and room (the reports the open round still takes; null when none is open)"},
            "round_of": {"type": "string", "description": "a round's own campaign: the rounds campaign it is a round of "
                         "(a device answers one round of it)"},
            "round_sizes": {"type": "array", "items": {"type": "integer"}, "description": "a round's own campaign: the "
                            "rounds' group sizes (a device answers the round it drew in proportion to them)"},
            "anonymity": {"$ref": "#/components/schemas/Anonymity"},
        },
    },
    "JsonBatch": {
        "type": "object",
        "required": ["reports"],
        "properties": {
            "reports": {"type": "array", "description": "rows as ndarray.tolist() of the protocol's report layout"},
            "config": {"type": "object", "description": "optional; another config rejects every row as other_config"},
        },
    },
    "Ack": {
        "type": "object",
        "properties": {
            "campaign": {"type": "string"}, "batch_id": {"type": "string"}, "n_read": {"type": "integer"},
            "accepted": {"type": "integer"}, "rejected": _COUNTS,
            "duplicate": {"type": "boolean", "description": "true: this batch id was already counted"},
        },
    },
    "Estimate": {
        "type": "object",
        "properties": {
            "campaign": {"type": "string"}, "state": {"type": "string"}, "protocol": {"type": "string"},
            "epsilon": {"type": "number"}, "n": {"type": "integer"}, "rejected": _COUNTS, "refused_batches": _COUNTS,
            "batches": {"type": "integer"}, "options": {"type": "object"},
            "estimate": {
                "anyOf": [{"type": "null"}, ref("EstimateResult")],
                "description": "null before the first report; else the estimate's JSON (docs/reference/results.md)",
            },
            "diagnostics": {
                "type": "object",
                "description": "poisoning tests of the aggregate: test, alpha, flagged, items_below, items_above, "
                "count_below, count_above, min_p_value, method, constraint (the likelihood-ratio test against every "
                "input distribution), top (GRR: the estimates' excess above a level against what the rest of the reports "
                "allow), unseen (gain, share: the share of fakes that lifts a rare item to about 1 with no support count out of "
                "place), summary (one line) (docs/how-to/run-a-campaign.md, 'Poisoning diagnostics')",
            },
        },
    },
    "History": {
        "type": "object",
        "properties": {"history": {"type": "array", "items": {"type": "object", "properties": {
            "time": {"type": "string"}, "n": {"type": "integer"}, "batches": {"type": "integer"}}}}},
    },
}
