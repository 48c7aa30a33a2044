"""``/api/campaigns``: create, list, show, configure, open, close, enroll and delete campaigns (admin)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._explain import explain_json
from .._http import json_body
from .._ingest import max_batch_reports
from .._openapi import documented, json_answer, ref
from .._ohttp_keys import public_fields as ohttp_fields
from ..._guard._refusals import Conflict, InvalidRequest
from ._common import as_admin, service_of

__all__ = ["ROUTES"]

_CAMPAIGN = ref("Campaign")


def _json_request(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


@documented("Create a campaign (state created)", security="admin", body=_json_request(ref("NewCampaign")),
            answers={201: json_answer(_CAMPAIGN, "created")}, errors=(400, 401, 409))
async def create_campaign(request: Request) -> JSONResponse:
    service = as_admin(request)
    document = await json_body(request)
    keep = document.get("keep_reports", False)
    if not isinstance(keep, bool):
        raise InvalidRequest("invalid_keep_reports", f"'keep_reports' must be true or false. Got {keep!r}.")
    options = {"submit_token": document.get("submit_token"), "keep_reports": keep,
               "max_reports": document.get("max_reports"), "enrollment": document.get("enrollment", False)}
    if document.get("relay", False) is not False:  # collected through a relay only (:mod:`.._relayed`)
        campaign = await run_in_threadpool(service.relayed.create, document, **options)
    elif document.get("rounds") is not None:  # runs in rounds: adaptive LDP quantiles (:mod:`.._rounds`)
        campaign = await run_in_threadpool(service.rounds.create, document, **options)
    else:
        reserved = await run_in_threadpool(service.rounds.reserved, document.get("campaign"))
        if reserved is not None:
            raise reserved
        campaign = await run_in_threadpool(service.store.create, document.get("campaign"), document.get("config"), **options)
    return JSONResponse(await _summary(service, campaign), status_code=201)


async def _summary(service, campaign) -> dict:
    """The admin summary of a campaign, with whether it is relayed (and then its stated guarantees), and its rounds."""
    return {**campaign.summary(), **await run_in_threadpool(service.relayed.summary_fields, campaign),
            **await run_in_threadpool(service.rounds.summary_fields, campaign)}


@documented("List campaigns", security="admin", errors=(401,),
            answers={200: json_answer({"type": "object", "properties": {"campaigns": {"type": "array", "items": _CAMPAIGN}}})})
async def list_campaigns(request: Request) -> JSONResponse:
    service = as_admin(request)
    campaigns = await run_in_threadpool(service.store.list)
    return JSONResponse({"campaigns": [await _summary(service, campaign) for campaign in campaigns]})


@documented("A campaign's state and counts", security="admin", answers={200: json_answer(_CAMPAIGN)}, errors=(401, 404))
async def show_campaign(request: Request) -> JSONResponse:
    service = as_admin(request)
    campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
    return JSONResponse(await _summary(service, campaign))


_DELETED = {"type": "object", "properties": {"campaign": {"type": "string"}, "deleted": {"type": "boolean"},
                                             "batches": {"type": "integer"}, "kept_report_batches": {"type": "integer"}}}


@documented("Delete a campaign and everything stored for it", security="admin", answers={200: json_answer(_DELETED)},
            errors=(401, 404))
async def delete_campaign(request: Request) -> JSONResponse:
    service = as_admin(request)
    service.changed(request.path_params["campaign"])
    deleted = await run_in_threadpool(service.store.delete, request.path_params["campaign"])
    await run_in_threadpool(service.relayed.forget, request.path_params["campaign"])  # its keys too
    await run_in_threadpool(service.rounds.forget, request.path_params["campaign"])  # its rounds' campaigns too
    return JSONResponse(deleted)


_ENROLL = {"type": "object", "required": ["count", "reports"],
           "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 10000}, "reports": {"type": "integer", "minimum": 1}}}
_TOKENS = {"type": "object", "properties": {"campaign": {"type": "string"}, "reports_per_token": {"type": "integer"},
                                            "tokens": {"type": "array", "items": {"type": "string"}}}}


@documented("Issue enrollment tokens (campaigns created with enrollment), each good for 'reports' reports",
            security="admin", body=_json_request(_ENROLL), answers={201: json_answer(_TOKENS, "the tokens (shown once; stored hashed)")},
            errors=(400, 401, 404, 409))
async def enroll(request: Request) -> JSONResponse:
    service = as_admin(request)
    document = await json_body(request)
    campaign_id = request.path_params["campaign"]
    tokens = await run_in_threadpool(service.store.enroll, campaign_id, document.get("count"), document.get("reports"))
    return JSONResponse({"campaign": campaign_id, "reports_per_token": document["reports"], "tokens": tokens}, status_code=201)


@documented("The campaign's public protocol config (no token needed)", answers={200: json_answer(ref("PublicConfig"))},
            errors=(404,))
async def public_config(request: Request) -> JSONResponse:
    service = service_of(request)
    campaign = await service.settings(request.path_params["campaign"])
    relayed = await run_in_threadpool(service.relayed.public_fields, campaign)
    return JSONResponse(
        {
            "campaign": campaign.id,
            "state": campaign.state,
            "config": campaign.config,
            "client_view": campaign.protocol.client_view(),
            "submit_token_required": campaign.submit_token_sha256 is not None,
            "enrollment_token_required": campaign.enrollment,
            "max_body_bytes": service.max_body_bytes,
            "max_records": service.limits.max_records,
            "max_json_rows": service.limits.max_json_rows,
            "max_batch_reports": max_batch_reports(campaign.protocol, service.limits),
            **relayed,
            **await run_in_threadpool(service.rounds.public_fields, campaign),
            **await run_in_threadpool(ohttp_fields, request.app, bool(relayed)),  # the OHTTP gateway's keys (direct campaigns)
        }
    )


@documented("A relayed campaign's identity document, byte for byte: its config, HPKE key, relay URL and issuer. Its "
            "SHA-256 is the campaign's pin, which a device given the pin checks before it trusts a config served by "
            "anyone else, the relay included (no token needed)",
            answers={200: json_answer({"type": "object", "description": "campaign, config, relay, issuer, colluding, delta"})},
            errors=(404,))
async def identity(request: Request) -> Response:
    service = service_of(request)
    campaign = await run_in_threadpool(service.store.row, request.path_params["campaign"])
    return Response(await run_in_threadpool(service.relayed.identity, campaign), media_type="application/json")


_ENVELOPES = {"type": "object", "required": ["sealed_v1"], "properties": {"sealed_v1": {"type": "boolean"}}}


@documented("Turn dpdist's own envelope on or off for a relayed campaign (off: its relay takes Oblivious HTTP requests "
            "only and refuses dpdist's envelope, 409 sealed_v1_off; the reports it acknowledged before are still "
            "delivered and counted)", security="admin",
            body=_json_request(_ENVELOPES),
            answers={200: json_answer({"type": "object", "properties": {"campaign": {"type": "string"},
                                                                         "envelopes": {"type": "object"}}})},
            errors=(400, 401, 404, 409))
async def set_envelopes(request: Request) -> JSONResponse:
    service = as_admin(request)
    document = await json_body(request)
    answer = await run_in_threadpool(service.relayed.set_envelopes, request.path_params["campaign"], document)
    service.changed(answer["campaign"])
    return JSONResponse(answer)


_EXPLAIN_QUERY = (
    {"name": "n", "in": "query", "schema": {"type": "integer", "minimum": 10},
     "description": "users (default: the campaign's max_reports, else its n, else 10000), rounded to 1-2-5; simulated "
                    "protocols at most 20000"},
    {"name": "shape", "in": "query", "schema": {"type": "string", "enum": ["uniform", "normal", "skewed", "bimodal", "zipf"]}},
)


@documented("What the campaign's epsilon buys: its expected errors at n and each epsilon, and what an attacker can "
            "learn of a device's value, from its public config only (dpdist.accuracy.explain, "
            "dpdist.accounting.guess_odds and tradeoff; no token needed)", query=_EXPLAIN_QUERY,
            answers={200: json_answer({"type": "object", "description": "Explanation.to_dict() with campaign, epsilon, "
                                                                       "n_requested, plain and attacker"})}, errors=(400, 404))
async def explain(request: Request) -> JSONResponse:
    service = service_of(request)
    campaign = await run_in_threadpool(service.store.get, request.path_params["campaign"])
    query = request.query_params
    return JSONResponse(await run_in_threadpool(explain_json, campaign, query.get("n"), query.get("shape")))


_NEW_CONFIG = {"type": "object", "properties": {"config": {"type": "object"}, "max_reports": {"type": ["integer", "null"]}}}


@documented("Replace the config (and max_reports) of a campaign not yet open", security="admin",
            body=_json_request(_NEW_CONFIG), answers={200: json_answer(_CAMPAIGN)}, errors=(400, 401, 404, 409))
async def set_config(request: Request) -> JSONResponse:
    service = as_admin(request)
    document = await json_body(request)
    changes = {"max_reports": document["max_reports"]} if "max_reports" in document else {}
    await run_in_threadpool(service.relayed.check_reconfig, request.path_params["campaign"], document.get("config"))
    campaign = await run_in_threadpool(service.store.set_config, request.path_params["campaign"], document.get("config"), **changes)
    await run_in_threadpool(service.relayed.reconfigured, campaign)  # a relayed campaign's identity names its config
    service.changed(campaign.id)
    return JSONResponse(await _summary(service, campaign))


async def _transition(request: Request, target: str) -> JSONResponse:
    service = as_admin(request)
    service.changed(request.path_params["campaign"])
    campaign = await run_in_threadpool(service.store.transition, request.path_params["campaign"], target)
    await run_in_threadpool(service.rounds.transitioned, campaign)  # a rounds campaign opens or closes its round
    service.changed(campaign.id)
    return JSONResponse(await _summary(service, campaign))


_ROUNDS = {"type": "object", "description": "the plan, every round's campaign with its counts, the quantiles "
                                            "released from the rounds so far (QuantileRelease.to_dict(), or null), "
                                            "and the rounds' history (as GET .../history, each round's n and batches added to the "
                                            "rounds' before it)"}


@documented("A rounds campaign's rounds and its current quantiles (adaptive LDP quantiles)", security="admin",
            answers={200: json_answer(_ROUNDS)}, errors=(401, 404, 409))
async def rounds(request: Request) -> JSONResponse:
    service = as_admin(request)
    return JSONResponse(await run_in_threadpool(service.rounds.report, request.path_params["campaign"]))


@documented("Close the current round now and publish the next one's config (derived from the rounds so far)",
            security="admin", answers={200: json_answer(_ROUNDS)}, errors=(401, 404, 409))
async def advance_round(request: Request) -> JSONResponse:
    service = as_admin(request)
    campaign_id = request.path_params["campaign"]
    found = await run_in_threadpool(service.rounds.advance, campaign_id, force=True)
    if found is None:
        raise Conflict("not_rounds", f"Campaign {campaign_id!r} does not run in rounds.")
    return JSONResponse(await run_in_threadpool(service.rounds.report, campaign_id))


@documented("Open a campaign: it accepts reports; its config is frozen", security="admin",
            answers={200: json_answer(_CAMPAIGN)}, errors=(401, 404, 409))
async def open_campaign(request: Request) -> JSONResponse:
    return await _transition(request, "open")


@documented("Close a campaign: it accepts no more reports", security="admin", answers={200: json_answer(_CAMPAIGN)},
            errors=(401, 404, 409))
async def close_campaign(request: Request) -> JSONResponse:
    return await _transition(request, "closed")


ROUTES = [
    Route("/api/campaigns", create_campaign, methods=["POST"]),
    Route("/api/campaigns", list_campaigns, methods=["GET"]),
    Route("/api/campaigns/{campaign}", show_campaign, methods=["GET"]),
    Route("/api/campaigns/{campaign}", delete_campaign, methods=["DELETE"]),
    Route("/api/campaigns/{campaign}/enrollments", enroll, methods=["POST"]),
    Route("/api/campaigns/{campaign}/config", public_config, methods=["GET"]),
    Route("/api/campaigns/{campaign}/config", set_config, methods=["PUT"]),
    Route("/api/campaigns/{campaign}/identity", identity, methods=["GET"]),
    Route("/api/campaigns/{campaign}/envelopes", set_envelopes, methods=["PUT"]),
    Route("/api/campaigns/{campaign}/explain", explain, methods=["GET"]),
    Route("/api/campaigns/{campaign}/open", open_campaign, methods=["POST"]),
    Route("/api/campaigns/{campaign}/close", close_campaign, methods=["POST"]),
    Route("/api/campaigns/{campaign}/rounds", rounds, methods=["GET"]),
    Route("/api/campaigns/{campaign}/rounds/advance", advance_round, methods=["POST"]),
]
