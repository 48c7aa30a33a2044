"""The OpenAPI 3.1 description of every route of ``dpdist serve`` (served at ``/openapi.json``)."""

from __future__ import annotations

__all__ = ["openapi_schema"]

_ERROR = {"$ref": "#/components/schemas/Error"}
_CAMPAIGN = {"$ref": "#/components/schemas/Campaign"}


def _json(schema, description="OK"):
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes):
    meaning = {
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
        503: "the server holds its limit of request bodies (busy; see Retry-After)",
    }
    return {str(code): _json(_ERROR, meaning[code]) for code in codes}


_CAMPAIGN_PATH = {"name": "campaign", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"}}
_BATCH_PATH = {"name": "batch_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"}}
_ADMIN: list[dict[str, list[str]]] = [{"admin": []}]
_SUBMIT: list[dict[str, list[str]]] = [{}, {"submit": []}]
_ESTIMATE_QUERY = [
    {"name": "level", "in": "query", "schema": {"type": "number", "default": 0.95}, "description": "confidence level of the band"},
    {
        "name": "options",
        "in": "query",
        "style": "form",
        "explode": True,
        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        "description": "any other parameter is passed to the protocol's estimate(), e.g. postprocess=norm-sub; "
        "values are read as JSON when they parse, else as strings",
    },
]

_BATCH_BODY = {
    "required": True,
    "content": {
        "application/octet-stream": {
            "schema": {"type": "string", "format": "binary"},
            "description": "one or more dpdist binary report records (docs/deployment.md, 'Binary records')",
        },
        "application/json": {"schema": {"$ref": "#/components/schemas/JsonBatch"}},
    },
}


def openapi_schema() -> dict:
    from .. import __version__
    from ..estimates import JSON_SCHEMA

    campaign_ops = [_CAMPAIGN_PATH]
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
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "detail"],
                    "properties": {"error": {"type": "string"}, "detail": {"type": "string"}},
                },
                "Counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "Campaign": {
                    "type": "object",
                    "properties": {
                        "campaign": {"type": "string"},
                        "state": {"enum": ["created", "open", "closed"]},
                        "config": {"type": "object"},
                        "client_view": {"type": "object", "description": "config, declared report format and design constants "
                                        "(LocalProtocol.client_view); the JavaScript client checks them against epsilon"},
                        "submit_token_required": {"type": "boolean"},
                        "keep_reports": {"type": "boolean"},
                        "created_at": {"type": "string"},
                        "opened_at": {"type": ["string", "null"]},
                        "closed_at": {"type": ["string", "null"]},
                        "n": {"type": "integer"},
                        "rejected": {"$ref": "#/components/schemas/Counts"},
                        "refused_batches": {"$ref": "#/components/schemas/Counts"},
                        "batches": {"type": "integer"},
                        "max_reports": {"type": ["integer", "null"]},
                        "enrollment": {"type": "boolean"},
                        "relayed": {"type": "boolean", "description": "collected through a relay (dpdist relay)"},
                        "anonymity": {"$ref": "#/components/schemas/Anonymity"},
                    },
                },
                "Anonymity": {
                    "type": "object",
                    "description": "a relayed campaign's guarantees: the local one, the amplified central one at its smallest batch "
                                   "so far (null before the first batch; or a reason), the delta it is stated at, the assumptions",
                    "properties": {"local": {"type": "object"}, "central": {"type": ["object", "null"]}, "delta": {"type": "number"},
                                   "reports": {"type": "integer"}, "smallest_batch": {"type": ["integer", "null"]},
                                   "assumptions": {"type": "array", "items": {"type": "string"}}},
                },
                "NewCampaign": {
                    "type": "object",
                    "required": ["campaign", "config"],
                    "properties": {
                        "campaign": {"type": "string"},
                        "config": {"type": "object", "description": "a protocol config, as LocalProtocol.config()"},
                        "submit_token": {"type": "string", "minLength": 16},
                        "keep_reports": {"type": "boolean", "default": False},
                        "max_reports": {"type": ["integer", "null"], "minimum": 1, "description": "cap on accepted reports"},
                        "enrollment": {"type": "boolean", "default": False,
                                       "description": "devices submit with enrollment tokens (POST .../enrollments), not a submit token"},
                        "relay": {"oneOf": [{"type": "boolean"}, {"type": "object", "properties": {"delta": {"type": "number"}}}],
                                  "default": False, "description": "collected through a relay only (the service's relay token): an HPKE "
                                  "key in its config, direct submissions refused, the amplified guarantee stated at delta (1e-8)"},
                    },
                },
                "PublicConfig": {
                    "type": "object",
                    "properties": {
                        "campaign": {"type": "string"},
                        "state": {"enum": ["created", "open", "closed"]},
                        "config": {"type": "object"},
                        "submit_token_required": {"type": "boolean"},
                        "enrollment_token_required": {"type": "boolean"},
                        "max_body_bytes": {"type": "integer"},
                        "max_records": {"type": "integer"},
                        "max_json_rows": {"type": "integer"},
                        "relay": {"type": "object", "description": "a relayed campaign's HPKE suite, public_key (base64url) and key_id"},
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
                        "campaign": {"type": "string"},
                        "batch_id": {"type": "string"},
                        "n_read": {"type": "integer"},
                        "accepted": {"type": "integer"},
                        "rejected": {"$ref": "#/components/schemas/Counts"},
                        "duplicate": {"type": "boolean", "description": "true: this batch id was already counted"},
                    },
                },
                "EstimateResult": {key: value for key, value in JSON_SCHEMA.items() if key != "$schema"},
                "Estimate": {
                    "type": "object",
                    "properties": {
                        "campaign": {"type": "string"},
                        "state": {"type": "string"},
                        "protocol": {"type": "string"},
                        "epsilon": {"type": "number"},
                        "n": {"type": "integer"},
                        "rejected": {"$ref": "#/components/schemas/Counts"},
                        "refused_batches": {"$ref": "#/components/schemas/Counts"},
                        "batches": {"type": "integer"},
                        "options": {"type": "object"},
                        "estimate": {
                            "anyOf": [{"type": "null"}, {"$ref": "#/components/schemas/EstimateResult"}],
                            "description": "null before the first report; else the estimate's JSON (docs/results.md)",
                        },
                        "diagnostics": {
                            "type": "object",
                            "description": "poisoning test of the aggregate: test, alpha, flagged, items_below, items_above, "
                            "count_below, count_above, min_p_value, method (docs/deployment.md, 'Threat model')",
                        },
                    },
                },
            },
        },
        "paths": {
            "/api/campaigns": {
                "post": {
                    "summary": "Create a campaign (state created)",
                    "security": _ADMIN,
                    "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewCampaign"}}}},
                    "responses": {"201": _json(_CAMPAIGN, "created"), **_errors(400, 401, 409)},
                },
                "get": {
                    "summary": "List campaigns",
                    "security": _ADMIN,
                    "responses": {"200": _json({"type": "object", "properties": {"campaigns": {"type": "array", "items": _CAMPAIGN}}}), **_errors(401)},
                },
            },
            "/api/campaigns/{campaign}": {
                "get": {"summary": "A campaign's state and counts", "security": _ADMIN, "parameters": campaign_ops,
                        "responses": {"200": _json(_CAMPAIGN), **_errors(401, 404)}},
                "delete": {"summary": "Delete a campaign and everything stored for it", "security": _ADMIN, "parameters": campaign_ops,
                           "responses": {"200": _json({"type": "object", "properties": {
                               "campaign": {"type": "string"}, "deleted": {"type": "boolean"}, "batches": {"type": "integer"},
                               "kept_report_batches": {"type": "integer"}}}), **_errors(401, 404)}},
            },
            "/api/campaigns/{campaign}/enrollments": {
                "post": {"summary": "Issue enrollment tokens (campaigns created with enrollment), each good for 'reports' reports",
                         "security": _ADMIN, "parameters": campaign_ops,
                         "requestBody": {"required": True, "content": {"application/json": {"schema": {
                             "type": "object", "required": ["count", "reports"],
                             "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 10000},
                                            "reports": {"type": "integer", "minimum": 1}}}}}},
                         "responses": {"201": _json({"type": "object", "properties": {
                             "campaign": {"type": "string"}, "reports_per_token": {"type": "integer"},
                             "tokens": {"type": "array", "items": {"type": "string"}}}}, "the tokens (shown once; stored hashed)"),
                             **_errors(400, 401, 404, 409)}},
            },
            "/api/campaigns/{campaign}/config": {
                "get": {"summary": "The campaign's public protocol config (no token needed)", "parameters": campaign_ops,
                        "responses": {"200": _json({"$ref": "#/components/schemas/PublicConfig"}), **_errors(404)}},
                "put": {"summary": "Replace the config (and max_reports) of a campaign not yet open", "security": _ADMIN, "parameters": campaign_ops,
                        "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "properties": {
                            "config": {"type": "object"}, "max_reports": {"type": ["integer", "null"]}}}}}},
                        "responses": {"200": _json(_CAMPAIGN), **_errors(400, 401, 404, 409)}},
            },
            "/api/campaigns/{campaign}/explain": {
                "get": {"summary": "What the campaign's epsilon buys: its expected errors at n and each epsilon, from its public "
                                   "config only (dpdist.accuracy.explain; no token needed)",
                        "parameters": [_CAMPAIGN_PATH,
                                       {"name": "n", "in": "query", "schema": {"type": "integer", "minimum": 10},
                                        "description": "users (default: the campaign's max_reports, else its n, else 10000), "
                                                       "rounded to 1-2-5; simulated protocols at most 20000"},
                                       {"name": "shape", "in": "query", "schema": {"type": "string",
                                        "enum": ["uniform", "normal", "skewed", "bimodal", "zipf"]}}],
                        "responses": {"200": _json({"type": "object", "description": "Explanation.to_dict() with campaign, "
                                                    "epsilon, n_requested and plain (the same in sentences, "
                                                    "as the dashboard and participate page show it)"}),
                                      **_errors(400, 404)}},
            },
            "/api/campaigns/{campaign}/open": {
                "post": {"summary": "Open a campaign: it accepts reports; its config is frozen", "security": _ADMIN,
                         "parameters": campaign_ops, "responses": {"200": _json(_CAMPAIGN), **_errors(401, 404, 409)}},
            },
            "/api/campaigns/{campaign}/close": {
                "post": {"summary": "Close a campaign: it accepts no more reports", "security": _ADMIN,
                         "parameters": campaign_ops, "responses": {"200": _json(_CAMPAIGN), **_errors(401, 404, 409)}},
            },
            "/api/campaigns/{campaign}/batches/{batch_id}": {
                "put": {
                    "summary": "Submit a batch of reports under a client-chosen batch id (idempotent; POST accepted too)",
                    "security": _SUBMIT,
                    "parameters": [_CAMPAIGN_PATH, _BATCH_PATH],
                    "requestBody": _BATCH_BODY,
                    "responses": {"200": _json({"$ref": "#/components/schemas/Ack"}, "durably counted (or already counted: duplicate)"),
                                  **_errors(400, 401, 403, 404, 408, 409, 413, 415, 429, 503)},
                },
            },
            "/api/campaigns/{campaign}/relayed/{batch_id}": {
                "put": {
                    "summary": "A relay delivers a shuffled batch of HPKE-sealed reports of a relayed campaign (idempotent by batch id)",
                    "security": [{"relay": []}],
                    "parameters": [_CAMPAIGN_PATH, _BATCH_PATH],
                    "requestBody": {"required": True, "content": {"application/vnd.dpdist.relayed-batch": {
                        "schema": {"type": "string", "format": "binary", "description": "sealed messages, each after its 4-byte length"}}}},
                    "responses": {"200": _json({"$ref": "#/components/schemas/Ack"}, "durably counted (or already counted: duplicate)"),
                                  **_errors(400, 401, 404, 408, 409, 413, 503)},
                },
            },
            "/api/campaigns/{campaign}/batches": {
                "post": {
                    "summary": "Submit binary records whose file id is the batch id",
                    "security": _SUBMIT,
                    "parameters": campaign_ops,
                    "requestBody": {"required": True, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                    "responses": {"200": _json({"$ref": "#/components/schemas/Ack"}), **_errors(400, 401, 403, 404, 408, 409, 413, 415, 429, 503)},
                },
            },
            "/api/campaigns/{campaign}/estimate": {
                "get": {"summary": "The current estimate with its confidence band, n and rejected counts", "security": _ADMIN,
                        "parameters": [_CAMPAIGN_PATH, *_ESTIMATE_QUERY],
                        "responses": {"200": _json({"$ref": "#/components/schemas/Estimate"}), **_errors(400, 401, 404)}},
            },
            "/api/campaigns/{campaign}/estimate.png": {
                "get": {"summary": "The current estimate as a PNG plot", "security": _ADMIN, "parameters": [_CAMPAIGN_PATH, *_ESTIMATE_QUERY],
                        "responses": {"200": {"description": "PNG", "content": {"image/png": {}}}, **_errors(400, 401, 404, 409)}},
            },
            "/api/campaigns/{campaign}/history": {
                "get": {"summary": "Accepted reports over time (cumulative, at most ~200 points)", "security": _ADMIN,
                        "parameters": campaign_ops,
                        "responses": {"200": _json({"type": "object", "properties": {"history": {"type": "array", "items": {
                            "type": "object", "properties": {"time": {"type": "string"}, "n": {"type": "integer"}, "batches": {"type": "integer"}}}}}}),
                            **_errors(401, 404)}},
            },
            "/api/campaigns/{campaign}/reports": {
                "get": {"summary": "Export the kept raw reports as dpdist binary records (one file id per campaign)",
                        "security": _ADMIN, "parameters": campaign_ops,
                        "responses": {"200": {"description": "records", "content": {"application/octet-stream": {}}}, **_errors(401, 404, 409)}},
            },
            "/campaigns/{campaign}/dashboard": {
                "get": {"summary": "Dashboard page (the admin token goes in the URL fragment: #token=...)", "parameters": campaign_ops,
                        "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}},
            },
            "/campaigns/{campaign}/participate": {
                "get": {"summary": "Participation page of the JavaScript client (clients/js/participate.html)", "parameters": campaign_ops,
                        "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}, **_errors(404)}},
            },
            "/static/dpdist-client.js": {
                "get": {"summary": "The JavaScript client as an ES module (re-exports /static/dpdist-client/index.js)",
                        "responses": {"200": {"description": "JavaScript", "content": {"text/javascript": {}}}}},
            },
            "/openapi.json": {"get": {"summary": "This schema", "responses": {"200": _json({"type": "object"})}}},
            "/healthz": {"get": {"summary": "Liveness: the process serves HTTP", "responses": {"200": _json({"type": "object"})}}},
            "/readyz": {
                "get": {"summary": "Readiness: the database could take a write now (503 with a reason if not)",
                        "responses": {"200": _json({"type": "object"}), "503": _json({"type": "object"})}},
            },
            "/metrics": {
                "get": {"summary": "Prometheus metrics (Bearer metrics token; without one, the admin token)",
                        "responses": {"200": {"description": "Prometheus text format", "content": {"text/plain": {}}},
                                      **_errors(401)}},
            },
        },
    }
