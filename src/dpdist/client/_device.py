"""A device's client of ``dpdist serve`` (on httpx; install ``dpdist[serve]``): its submissions, direct or relayed.

Devices fetch a campaign's public config, randomize their values locally with
the CSPRNG, and submit the reports in batches, each under a fresh random batch
id.  A batch is encoded once; every retry sends the same bytes under the same
id, so the server counts it exactly once (and a retry never re-randomizes,
which would spend privacy budget again).  A relayed campaign's reports are each an
RFC 9458 request to the collector, sent to its relay with a Privacy Pass token
(:mod:`._relay_route`, :mod:`._token_store`); a direct campaign's batches may go
through a standard Oblivious HTTP relay (:mod:`._oblivious_transport`).

>>> from dpdist.client import Client
>>> client = Client("http://127.0.0.1:8000")                       # doctest: +SKIP
>>> acks = client.submit_values("commute", minutes, batch_size=1000)  # doctest: +SKIP
"""

from __future__ import annotations

import io
import json
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from .._http._acks import batch_ack_problem, relay_ack_problem
from .._io._binary import decode_payload, encode_record, read_header
from .._io._identity import new_file_id
from .._redact import url_secrets
from .._http._retry import DEFAULT_RETRY_WINDOW_S
from .._rng import secure_generator
from .._http._tls import verifying_context
from .._types import ArrayLike, PathLike
from ..errors import (CampaignIdentityError, InvalidParameterError, MalformedReportError, ServiceRefusedError,
                      ServiceUnavailableError)
from .._http._redirect import HOOKS
from .._validation import (HttpUrl, Described, Implies, InstanceOf, Integer, MappingOf, Optional, Options,
                           check_values_given, validate_params)
from ..local._json_rows import json_rows as rows
from .._http._deadline import ACK_ANSWER_BYTES, CONFIG_ANSWER_BYTES, deadline_of
from .._wire._report_bound import batch_reports, protocol_of_answer, reports_within, rows_per_body
from ._connection import CONNECTION_RULES, Connection, token_rule
from .._ohttp import decode_key_list
from ._operator_calls import OperatorCalls
from ._oblivious_transport import OHTTP_RELAY, ObliviousTransport, campaign_key_config, given_key_config
from ._relay_route import RelayRoute, resolve_route
from ._token_store import TokenStore

if TYPE_CHECKING:
    from ..local import LocalProtocol
    from ..local.ledger import PrivacyLedger

__all__ = ["Client", "DEFAULT_BATCH_SIZE", "FILE_MAX_RECORDS", "FILE_PART_BYTES", "json_rows"]

DEFAULT_BATCH_SIZE = 10_000
#: Largest report payload of one batch when a report file is split (half the server's default body limit).
#: A constant, not the server's limit: a file's parts, hence their batch ids, must be the same on every run.
FILE_PART_BYTES = 8 << 20
#: A binary report file of at most this many records is sent as it is (the server's --max-records is 1024 by
#: default); one with more is re-encoded as one record per part. A constant, so a file's bytes are the same on every run.
FILE_MAX_RECORDS = 64
#: tokens obtained are saved to the token file at least this often while a device gets many (one save per token would
#: write the whole file each time)
_TOKENS_SAVED_EVERY = 256
#: the values the deprecated ``Client(relay_envelope=...)`` takes (no effect: every relayed report is an RFC 9458 request)
RELAY_ENVELOPES = (None, "dpdist", "ohttp")
#: an issuer (dpdist issuer): its base URL
ISSUER_URL = HttpUrl("the http:// or https:// URL of an issuer, with a host", no_userinfo=HttpUrl.TOKEN_SENT,
                     base=True)
#: the rules of :class:`Client`'s arguments (checked once, when it is built)
CLIENT_RULES = {
    **CONNECTION_RULES,
    "ohttp_relay": Optional(OHTTP_RELAY),
    "submit_token": token_rule("a campaign's submit token"),
    "issuer_credential": Optional(Described(InstanceOf(str, "a string"), "a string (an issuer's credential)")),
    "issuer": Optional(ISSUER_URL),
    "pins": Optional(MappingOf(InstanceOf(str, "a string"), InstanceOf(str, "a string"),
                               "a dict {campaign id: pin}, strings both")),
    "relay_envelope": Options(RELAY_ENVELOPES),
    "admin_token": token_rule("the admin token"),
}
#: the rules between them
CLIENT_RELATIONS = (
    Implies("issuer", None, "issuer_credential", None, why="a credential is sent to its issuer only",
            counterexample={"server": "http://collector", "issuer_credential": "credential"}),
    Implies("ohttp_relay", None, "ohttp_keys", None, why="the Oblivious HTTP relay the keys are for",
            counterexample={"server": "http://collector", "ohttp_keys": b"keys"}),
)


class Client(OperatorCalls, Connection):
    """A device's connection to one dpdist collection service (the operator's is :class:`~dpdist.client.AdminClient`).

    Parameters
    ----------
    server : str
        Base URL, e.g. ``"http://127.0.0.1:8000"``.
    submit_token : str, optional
        A campaign's submit token, if it has one.
    retry_window : float
        Seconds during which a request that failed is retried, from its first failure (default 300: a server
        restarting under load, with room): a refused connection (a server not started yet, or restarting), a
        transport error, or an answer that says "later" (408, 425, 429, 5xx).  Batches are idempotent by batch id,
        so resending one is always safe; after the window :class:`~dpdist.errors.ServiceUnavailableError` says how
        long it tried and how to resume (send the same batch again).  0: never retried.  The window bounds when an
        attempt starts: one begun in it runs to ``timeout``, so a request that gets no answer ends up to one
        ``timeout`` after the window.
    retries : int, optional
        At most this many attempts after the first as well (default: as many as ``retry_window`` allows).
    backoff : float
        First wait in seconds between attempts; doubles each time (at most 10 s), jittered over its upper half; a
        ``Retry-After`` of a 429/503 answer is honoured instead (up to 60 s, jittered up to 50% later).
    timeout : float
        Seconds per request.
    transport : httpx transport, optional
        For tests (e.g. ``httpx.ASGITransport(app)``).
    on_retry : callable, optional
        Called as ``on_retry(failure, attempt, wait, remaining)`` after each failed attempt that will be
        retried (``attempt`` counts from 1, ``wait`` is the pause before the next one in seconds,
        ``remaining`` the attempts the window allows at most, pauses at their longest), e.g. to tell a person at
        once that the service is not answering.
    pins : dict, optional
        ``{campaign: pin}``: the pins of relayed campaigns this device was given with ``server`` (which may
        then be the relay itself): a campaign's identity served by ``server`` must hash to its pin.  Without a
        pin, ``server`` must be the campaign's collector (docs/explanation/threat-model.md, "Keys the relay cannot swap").
    issuer_credential : str, optional
        This device's credential for the issuer of relayed campaigns that admit reports by token (one token per
        report, fetched before anything is randomized).
    issuer : str, optional
        The URL of the issuer the credential is for (required with ``issuer_credential``): a campaign that names
        another issuer, or none, is refused.
    token_file : path, optional
        Where this device keeps the tokens it got and has not spent yet, and the token of each report it sent, so that
        a report resent after a failure (or by another run) carries the same token (:mod:`._token_store`); default: in
        memory.
    ohttp_relay : str, optional
        The URL of a standard Oblivious HTTP relay resource (RFC 9458) in front of the collector's gateway: the batches
        of direct campaigns go through it, encapsulated to the campaign's key configuration (:mod:`._oblivious_transport`), so
        the collector never sees this device's address with a report (without ``ohttp_keys`` the campaign's config,
        which states the key configuration, is fetched from ``server`` directly).
    ohttp_keys : bytes, optional
        The gateway's key configurations (``application/ohttp-keys``) as given out of band: then every request, the
        campaign's config included, goes through the relay, encapsulated to the newest of them the campaign's config
        states, and a campaign whose config states none of them is refused before anything is sent
        (``ohttp_key_mismatch``).
    relay_envelope : {None, "dpdist", "ohttp"}
        Deprecated, no effect (removed in dpdist 0.2.0): every report of a relayed campaign travels to its relay as an
        RFC 9458 request (``message/ohttp-req``) encapsulated to the Oblivious HTTP key configuration of the campaign's
        identity; dpdist's own envelope is retired on devices.  A value other than None warns
        (:class:`DeprecationWarning`).
    admin_token : str, optional
        Deprecated: for the operator's calls this client still makes with a :class:`DeprecationWarning`
        (``create_campaign``, ``estimate``, ...: :class:`~dpdist.client.AdminClient` makes them).
    """

    @validate_params(CLIENT_RULES, owner="Client", relations=CLIENT_RELATIONS)
    def __init__(
        self,
        server: str,
        *,
        submit_token: str | None = None,
        retries: int | None = None,
        backoff: float = 0.25,
        timeout: float = 60.0,
        transport: Any = None,
        on_retry: Callable[[str, int, float, int], Any] | None = None,
        pins: dict[str, str] | None = None,
        issuer_credential: str | None = None,
        issuer: str | None = None,
        token_file: PathLike | None = None,
        ohttp_relay: str | None = None,
        ohttp_keys: bytes | None = None,
        retry_window: float = DEFAULT_RETRY_WINDOW_S,
        relay_envelope: str | None = None,
        admin_token: str | None = None,
    ):
        super().__init__(server, retries=retries, backoff=backoff, timeout=timeout, transport=transport,
                         on_retry=on_retry, retry_window=retry_window)
        self.submit_token, self.admin_token = submit_token, admin_token
        self.pins, self.issuer_credential, self.issuer = dict(pins or {}), issuer_credential, issuer
        self._store = TokenStore(token_file)
        self._relays: dict[str, dict | None] = {}  # campaign -> its config's "relay", or None: fetched once
        self._routes: dict[str, RelayRoute | CampaignIdentityError] = {}  # campaign -> where and how its reports go
        self._rounds: dict[str, str | None] = {}  # campaign -> the current round's campaign of a rounds campaign
        self._answer_once: dict[str, str] = {}  # campaign -> the rounds campaign a device answers once (ledger "once")
        self.ohttp_relay, self.ohttp_keys = _check_ohttp(ohttp_relay, ohttp_keys)
        if relay_envelope is not None:
            warnings.warn("Client(relay_envelope=...) is deprecated and has no effect: every relayed report is an RFC 9458 "
                          "request (dpdist's own envelope is retired on devices).", DeprecationWarning, stacklevel=2)
        if self.ohttp_relay is not None and self.ohttp_keys is not None:  # keys given: the configs go through it too
            import httpx  # lazy: optional extra dpdist[serve]

            self._http.close()
            self._http = httpx.Client(base_url=self.server, transport=ObliviousTransport(
                self.ohttp_relay, given_key_config(self.ohttp_keys), transport=transport, timeout=timeout,
                verify=verifying_context() if transport is None else True), event_hooks=HOOKS)
        self._documents: dict[str, dict] = {}  # campaign -> its public config (its "ohttp" key configuration)
        self._oblivious: dict[str, Any] = {}  # campaign -> the httpx client that sends its batches through the OHTTP relay

    def close(self) -> None:
        super().close()
        self._close_operator()
        for client in self._oblivious.values():
            client.close()

    def _secrets(self) -> tuple[str, ...]:
        """The secrets this client holds (its token, its issuer credential, its URLs' passwords), masked wherever a line
        it writes repeats them (:func:`dpdist._shown.masked`)."""
        held = (self.submit_token, self.issuer_credential, self.admin_token)
        urls = (self.server, self.ohttp_relay or "", self.issuer or "")
        return (*(secret for secret in held if secret), *(secret for url in urls for secret in url_secrets(url)))

    def _relay_of(self, via: Any) -> str | None:
        return self.ohttp_relay if via is not None or self.ohttp_keys else None

    def config(self, campaign: str) -> dict[str, Any]:
        """The campaign's public config document (``campaign``, ``state``, ``config``, ``relay`` if relayed, ...)."""
        document = self._document("GET", f"/api/campaigns/{campaign}/config", keys=("config",), limit=CONFIG_ANSWER_BYTES)
        self._documents[campaign] = document if isinstance(document, dict) else {}
        self._oblivious.pop(campaign, None)
        self._relays[campaign] = document.get("relay") if isinstance(document, dict) else None
        self._routes.pop(campaign, None)
        if self._relays[campaign] is not None:  # a device sends only under the identity it trusts (said when it sends)
            try:
                self._routes[campaign] = resolve_route(
                    campaign, self.server, document, self.pins.get(campaign),
                    lambda: self._request("GET", f"/api/campaigns/{campaign}/identity", limit=CONFIG_ANSWER_BYTES).content)
            except CampaignIdentityError as refusal:
                self._routes[campaign] = refusal
        # a campaign that runs in rounds: the current round's campaign counts the reports (its config's round)
        self._rounds[campaign] = document.get("submit_to") if isinstance(document, dict) else None
        # the question a device answers once: a rounds campaign (any of its rounds), or the campaign a round is of
        if isinstance(document, dict) and (document.get("rounds") is not None or document.get("round_of")):
            # the server's own id (a path's percent-escapes are decoded there): one question however the id is typed
            self._answer_once[campaign] = str(document.get("round_of") or document.get("campaign") or campaign)
        return document

    def protocol(self, campaign: str) -> LocalProtocol:
        """The campaign's protocol, rebuilt from its public config."""
        document = self.config(campaign)
        route = self._route(campaign)
        return protocol_of_answer(campaign, route.config if route is not None else document["config"])

    def relay(self, campaign: str) -> dict | None:
        """The campaign's relay (``config["relay"]``: its URL, key, pin and issuer) if it is collected through a relay,
        else None.

        Read from the campaign's config, fetched here once if no earlier call fetched it (``submit_values``
        and ``protocol`` do). ``submit_reports`` and ``submit_body`` use what is known without fetching:
        call this first when sending through a relay without them.
        """
        if campaign not in self._relays:
            try:
                self.config(campaign)
            except ServiceRefusedError:  # no such campaign (yet): the submission itself will say so
                return None
        return self._relays[campaign]

    def _through_ohttp(self, campaign: str) -> Any:
        """The httpx client that sends ``campaign``'s batches through the Oblivious HTTP relay (None without one), its
        key configuration checked (:func:`._oblivious_transport.campaign_key_config`) before anything is randomized or sent."""
        if self.ohttp_relay is None:
            return None
        if campaign not in self._oblivious:
            import httpx  # lazy: optional extra dpdist[serve]

            if campaign not in self._documents:
                self.config(campaign)
            config = campaign_key_config(campaign, self._documents[campaign], self.ohttp_keys)
            transport = ObliviousTransport(self.ohttp_relay, config, transport=self._transport, timeout=self._timeout,
                                           verify=verifying_context() if self._transport is None else True)
            self._oblivious[campaign] = httpx.Client(base_url=self.server, transport=transport, event_hooks=HOOKS)
        return self._oblivious[campaign]

    def _route(self, campaign: str) -> RelayRoute | None:
        """The route of a relayed campaign whose config was fetched (None: not relayed, or not fetched); the
        :class:`~dpdist.errors.CampaignIdentityError` of a campaign this device must not send to."""
        route = self._routes.get(campaign) if self._relays.get(campaign) is not None else None
        if isinstance(route, CampaignIdentityError):
            raise route
        return route

    def keep_tokens(self, path: PathLike) -> None:
        """Keep this device's tokens in the file ``path`` from now on (read if it exists; see ``token_file``)."""
        self._store = TokenStore(path)

    def prepare_tokens(self, campaign: str, count: int) -> int:
        """Get now, from the issuer of the relayed ``campaign``, the tokens of ``count`` more reports (kept until they
        are sent, in ``token_file`` if given): a device that gets its tokens well before it sends keeps the issuer from
        matching the time of issuance to the time a report reaches the relay.  Returns the spare tokens held."""
        if self._relays.get(campaign) is None:
            self.config(campaign)
        route = self._route(campaign)
        if route is None:
            raise InvalidParameterError(f"Campaign {campaign!r} is not collected through a relay: it takes no tokens.")
        self._prepare(route, count)
        return self._store.spare(route.pin)

    def _prepare(self, route: RelayRoute, count: int) -> None:
        """At least ``count`` spare tokens for ``route`` (none for a campaign without an issuer), after the route's checks
        (a credential for another issuer, or for a campaign that takes none, is refused here: before anything is drawn).

        Every token obtained is kept, also when the issuer refuses a later one (a credential exhausted) or stops
        answering: the refusal says how many were kept, and they serve the campaign's next reports."""
        missing = max(0, count - self._store.spare(route.pin)) if route.issuer is not None else 0
        fetched: list[tuple[bytes, bytes]] = []
        obtained = 0
        try:
            deadline = deadline_of(self._timeout)  # the issuer's answer, too, within the client's timeout (fetch_token's
            timeout = 600.0 if not deadline else min(deadline, 600.0)  # most: 600 s)
            for token in route.tokens(missing, self.issuer_credential, self.issuer, transport=self._transport,
                                      retry_window=self.retry_window, timeout=timeout):
                fetched.append(token)
                obtained += 1
                if len(fetched) == _TOKENS_SAVED_EVERY and route.issuer is not None:  # a killed process loses fewer
                    self._store.add(route.pin, fetched)
                    fetched = []
        except (ServiceRefusedError, ServiceUnavailableError) as error:
            if not obtained:
                raise
            where = f" (in {self._store.path})" if self._store.path is not None else ""
            message = (f"{error} The {obtained} token(s) obtained before this refusal are kept{where} for the next reports "
                       f"of campaign {route.campaign!r}: {self._store.spare(route.pin) + len(fetched)} held of the "
                       f"{count} needed. Nothing was randomized or sent.")
            if isinstance(error, ServiceRefusedError):
                raise ServiceRefusedError(message, error.status, error.code) from error
            raise ServiceUnavailableError(message) from error
        finally:  # whatever stopped the fetching, a token obtained is never dropped
            if fetched and route.issuer is not None:
                self._store.add(route.pin, fetched)

    def _submit_through_relay(self, route: RelayRoute, protocol: LocalProtocol, reports: np.ndarray, batch_id: str) -> dict:
        """Each report encapsulated to the campaign's Oblivious HTTP key configuration and sent alone to its relay under
        ``<batch_id>.<row>``, with its token (the one bound to the report if it was sent before, with the bytes it was
        encapsulated in then, else a spare one, else one fetched now), no batch id inside: the relay counts a report id
        once, and a token once."""
        ids = [f"{batch_id}.{index}" for index in range(len(reports))]
        bodies = [encode_record(protocol, reports[index : index + 1]) for index in range(len(reports))]
        return self._send_reports(route, ids, bodies, "application/octet-stream", batch_id)

    def _send_reports(self, route: RelayRoute, ids: list[str], bodies: list[bytes], content_type: str, batch_id: str) -> dict:
        """The reports ``bodies`` sent to the relay under ``ids``: every report's token first (:meth:`_prepare`), then
        each report encapsulated with its token's key, kept (saved once, before any leaves), then sent."""
        if route.issuer is not None:
            self._prepare(route, sum(not self._store.bound(route.pin, report_id) for report_id in ids))
        messages = []
        for report_id, body in zip(ids, bodies):
            if route.issuer is None:
                messages.append((b"", route.seal(body, content_type)))
                continue
            token, seed, sealed = self._store.take(route.pin, report_id)
            if sealed is None:  # encapsulated once with its token's key, these bytes sent with every resend
                sealed = route.seal(body, content_type, seed)
                self._store.seal(route.pin, report_id, sealed)
            messages.append((token, sealed))
        self._store.save()
        try:
            duplicates = sum(self._send_sealed(route, report_id, token, sealed)
                             for report_id, (token, sealed) in zip(ids, messages))
        finally:
            self._store.save()  # the seeds of the reports the relay acknowledged, forgotten
        return {"campaign": route.campaign, "batch_id": batch_id, "relayed": len(ids), "duplicates": duplicates}

    def _send_sealed(self, route: RelayRoute, report_id: str, token: bytes, sealed: bytes) -> int:
        """PUT one report (an RFC 9458 request) to the relay, under the identity's pin and with the report's token; 1 if
        the relay had it already (the report's seed then forgotten).  A token the relay saw spent on another report is
        forgotten, so that a resend takes another (and encapsulates the report again, with that token's key); a token
        the relay does not admit (401, or 403 ``token_not_bound``) while it verifies under the campaign's identity and
        is bound to the report is kept (the relay checks otherwise: a resend with another token would be refused too,
        and spend it)."""
        from ..privacypass import format_authorization  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._identity import PIN_HEADER  # lazy: relayed campaigns only (~50 ms at import)
        from .._ohttp import REQUEST_CONTENT_TYPE  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._ohttp_report import is_encapsulated  # lazy: relayed campaigns only (~50 ms at import)

        headers, path = {"Content-Type": REQUEST_CONTENT_TYPE, PIN_HEADER: route.pin}, "ohttp"
        if not is_encapsulated(sealed):  # kept in a token file by an earlier version, which sealed in dpdist's envelope
            headers["Content-Type"], path = "application/vnd.dpdist.sealed-report", "reports"  # resent as it was
        if route.issuer is not None:
            headers["Authorization"] = format_authorization(token)
        try:
            response = self._request("PUT", f"{route.url}/relay/v1/campaigns/{route.campaign}/{path}/{report_id}",
                                     content=sealed, headers=headers, limit=ACK_ANSWER_BYTES,
                                     acknowledges=lambda answer: relay_ack_problem(answer, route.campaign, report_id))
        except ServiceRefusedError as refusal:
            refused_token = refusal.code in ("token_required", "invalid_token", "token_not_bound")
            if refused_token and route.valid_token(token, sealed):
                raise ServiceRefusedError(
                    f"{refusal} This report's token verifies under the issuer key and the token challenge of the campaign's "
                    "identity, bound to the report: the relay checks tokens otherwise (a relay older than the identity's "
                    "redemption context, or one that does not verify as the campaign states). The token is kept for the "
                    "report's resend.", refusal.status, refusal.code) from refusal
            if refused_token or refusal.code == "token_spent":
                self._store.drop(route.pin, report_id)
            raise
        self._store.acknowledged(route.pin, report_id)
        return int(bool(response.json().get("duplicate")))

    def submit_reports(
        self, campaign: str, protocol: LocalProtocol, reports: ArrayLike, *, batch_id: str | None = None
    ) -> dict:
        """Submit one batch of already randomized reports; return the server's acknowledgement.

        The batch is encoded once as a dpdist binary record whose file id is the
        batch id; retries resend the same bytes.  Without ``batch_id`` (a fresh
        random id) the reports are first put in a uniformly random order drawn
        from the CSPRNG, so their order in the batch says nothing about the order
        of the values they came from.  With ``batch_id`` (resending a batch kept
        by the caller, whose bytes must be the same as the first time) they are
        sent in the order given: give them shuffled, e.g. as read from a file of
        ``dpdist privatize``.  A campaign collected through a relay (:meth:`relay`) gets each
        report sealed and sent alone, under ``<batch_id>.<row>``.
        """
        if batch_id is None:
            batch_id = new_file_id()
            reports = np.asarray(reports)
            reports = reports[secure_generator().permutation(len(reports))]
        route = self._route(campaign)
        if route is not None:
            return self._submit_through_relay(route, protocol, np.asarray(reports), batch_id)
        record_id = batch_id if _is_file_id(batch_id) else None
        body = encode_record(protocol, reports, record_id)
        return self.submit_body(campaign, batch_id, body)

    def submit_body(self, campaign: str, batch_id: str, body: bytes, content_type: str = "application/octet-stream") -> dict:
        """PUT an encoded batch (binary records or JSON) under ``batch_id``, with retries (to a relayed
        campaign: binary records' reports each sealed and sent alone, as :meth:`submit_reports` does; a JSON body
        sealed as it is, one report)."""
        route = self._route(campaign)
        if route is not None and content_type.split(";")[0].strip() == "application/octet-stream":
            protocol = self.protocol(campaign)
            return self._submit_through_relay(route, protocol, _record_reports(protocol, body), batch_id)
        if route is not None:
            return self._send_reports(route, [batch_id], [body], content_type, batch_id)
        target = self._rounds.get(campaign) or campaign  # a campaign in rounds: the round's campaign counts the batch
        sent = _rows_sent(body, content_type)  # an acknowledgement counting more reports than these is none (_acks)
        response = self._request(
            "PUT",
            f"/api/campaigns/{target}/batches/{batch_id}",
            token=self.submit_token,
            content=body,
            headers={"Content-Type": content_type},
            via=self._through_ohttp(campaign),
            limit=ACK_ANSWER_BYTES,
            acknowledges=lambda answer: batch_ack_problem(answer, target, batch_id, sent),
        )
        return response.json()

    @validate_params({"batch_size": Integer(low=1)})
    def submit_values(
        self, campaign: str, values: ArrayLike, *, batch_size: int = DEFAULT_BATCH_SIZE,
        protocol: LocalProtocol | None = None, ledger: PrivacyLedger | None = None,
    ) -> list[dict]:
        """Randomize ``values`` with the campaign's protocol (CSPRNG) and submit them in batches.

        Without ``ledger`` every value is a different user's (a proxy for many devices, a simulation).
        With ``ledger`` (a :class:`~dpdist.local.ledger.PrivacyLedger`, e.g. from ``dpdist.io.open_ledger``)
        the values are this one device's: they are charged to its ledger (through its memo for a
        longitudinal protocol), which refuses them past its budget, with this client's server as the
        collector.  A campaign in rounds then takes one value, and refuses a device that answered any
        earlier round of the same campaign (its epsilon per user holds for one round per user).

        The values are taken in a uniformly random order (a CSPRNG permutation), so
        which batch a report is in, and where in it, says nothing about the value's
        position in ``values`` (a sorted array would otherwise give the values away).
        Permuting the values before randomizing them independently is the same, in
        law, as permuting the reports.  A batch holds at most ``batch_size`` reports, and no more than fit the
        body the config answer says the service takes (:meth:`batch_rows`: a config whose one report does not fit
        is refused before anything is drawn or charged).  Each batch is randomized once, then sent (and
        resent with the same bytes on failure) before the next batch is randomized.
        If the service stays unreachable past the retries,
        :class:`~dpdist.errors.ServiceUnavailableError` is raised and the remaining
        values are not submitted; the acknowledged batches stay counted.  ``None``, a generator or an iterator is
        refused, naming ``values``, as ``protocol.privatize`` refuses it (:class:`~dpdist.errors.InvalidValueTypeError`).
        """
        check_values_given(values, "Client.submit_values")  # before the network: np.asarray(None) has no length
        values = np.asarray(values)
        if ledger is not None:
            return self._submit_device_values(campaign, values, ledger, protocol)
        protocol = protocol if protocol is not None else self.protocol(campaign)
        batch_size = self.batch_rows(campaign, protocol, batch_size)  # before anything is drawn: a refusal spends nothing
        order = secure_generator().permutation(len(values))
        route = self._route(campaign)
        if route is None:
            self._through_ohttp(campaign)  # an OHTTP relay's key configuration checked before anything is drawn
        else:  # every value checked before a token is fetched: an out-of-domain value must not use up a credential's token
            protocol._check_values(values)  # the check privatize makes first (nothing is drawn, nothing leaves the device)
        acks = []
        for start in range(0, len(values), batch_size):
            chosen = values[order[start : start + batch_size]]
            if route is not None:
                self._prepare(route, len(chosen))  # the batch's tokens before anything is drawn
            reports = protocol.privatize(chosen, secure=True)
            if route is not None:
                acks.append(self._submit_through_relay(route, protocol, reports, _new_batch_id()))
            else:
                acks.append(self.submit_reports(campaign, protocol, reports))
        return acks

    def _submit_device_values(
        self, campaign: str, values: np.ndarray, ledger: PrivacyLedger, protocol: LocalProtocol | None
    ) -> list[dict]:
        """One device's ``values``, charged to its ``ledger`` and sent as one batch (see :meth:`submit_values`).

        A ledger opened from a file (``dpdist.io.open_ledger``) is saved by ``report`` before the reports are
        returned, hence before they are sent: a device killed or cut off mid-send keeps its charge and its
        answer. A campaign in rounds whose round is not open now is refused before anything is drawn (its
        one answer would be spent on a batch the service must refuse).
        """
        document = self.config(campaign)  # the round now, and whether the device answers once
        route = self._route(campaign)
        if protocol is None:  # the round's config from the same fetch as its submit_to (a relayed one's trusted config)
            protocol = protocol_of_answer(campaign, route.config if route is not None else document["config"])
        once = self._answer_once.get(campaign)
        if once is not None:
            rounds = document.get("rounds") or {}
            state = rounds.get("round_state", document.get("state"))
            if state != "open" or (document.get("rounds") is not None and not document.get("submit_to")):
                raise ServiceRefusedError(
                    f"Campaign {campaign!r} runs in rounds and no round is open now (state {state!r}); nothing was "
                    "drawn, and the device keeps its one answer for an open round.", status=409, code="no_open_round",
                )
            self._check_own_round(campaign, document, once, ledger)
        rows = self.batch_rows(campaign, protocol, max(len(values), 1))  # before the ledger draws: a refusal spends no budget
        if route is not None:
            self._prepare(route, len(values))  # the tokens before the ledger draws anything
        else:
            self._through_ohttp(campaign)  # an OHTTP relay's key configuration checked before the ledger draws anything
        reports = ledger.report(protocol, values, self.server, once=once)
        if route is not None and len(reports):
            return [self._submit_through_relay(route, protocol, reports, _new_batch_id())]
        return [self.submit_reports(campaign, protocol, reports[start : start + rows])
                for start in range(0, len(reports), rows)]

    def batch_rows(self, campaign: str, protocol: LocalProtocol, wanted: int) -> int:
        """The reports of ``protocol`` one batch to ``campaign`` carries: at most ``wanted``, and as many as fit the
        body its last config answer says the service takes (``max_body_bytes``, capped on the device:
        :data:`dpdist._wire._report_bound.DEFAULT_MAX_BODY_BYTES`). A config whose one report does not fit is refused,
        :class:`~dpdist.errors.ServiceRefusedError` ``unexpected_answer``, before anything is drawn."""
        return rows_per_body(protocol, self._documents.get(campaign), campaign, wanted)

    def _check_own_round(self, campaign: str, document: dict, once: str, ledger: PrivacyLedger) -> None:
        """Refuse, before anything is drawn, an answer outside the round this device drew (``ledger.round_for``).

        The device answers the round it drew once, at random in proportion to the rounds' sizes: not the round
        open when it arrives, which would fill each round with whoever answers first (docs/explanation/adaptive-quantiles.md, "Campaigns in rounds").  A round
        before it still open: ``wait_for_round`` (submit again later); its round over: ``round_over`` (it
        answers no other round).  Both depend on the draw and the public round only, never on the value.
        """
        if ledger.answered(once, self.server):
            return  # the ledger refuses the second answer, saying so
        status = document.get("rounds") or {}
        sizes = status.get("sizes", document.get("round_sizes"))  # a round's own campaign: "round_sizes"
        if not sizes:
            raise ServiceRefusedError(f"Campaign {campaign!r} runs in rounds but its config gives no rounds' sizes "
                                      "(a server before dpdist's random split of devices into rounds); nothing was drawn.",
                                      status=409, code="no_round_sizes")
        own = ledger.round_for(once, self.server, sizes)
        asked = (document.get("config") or {}).get("round", status.get("round"))
        if asked == own:
            return
        if isinstance(asked, int) and asked < own:
            raise ServiceRefusedError(
                f"This device answers round {own} of campaign {once!r} (drawn at random, in proportion to the rounds' "
                f"sizes); round {asked} is open now. Nothing was drawn: submit again once round {own} is open.",
                status=409, code="wait_for_round",
            )
        raise ServiceRefusedError(
            f"This device answers round {own} of campaign {once!r} (drawn at random), which is over (round {asked} is "
            "open now); it answers no other round, so its one answer is not given. Nothing was drawn.",
            status=409, code="round_over",
        )

    def submit_file(self, campaign: str, path: PathLike) -> list[dict]:
        """Submit a report file written by ``dpdist privatize``, under batch ids derived from the file's id.

        A file of at most :data:`FILE_PART_BYTES` of reports, and of at most the reports a batch may
        cost the service to count at its default ``--max-batch-work`` (``max_batch_reports``: 663 OLH
        reports at d = 10^5), is one batch whose id is the file's id (binary records are sent as they
        are). A larger file is sent in parts of at most that many bytes and reports, part ``k`` under
        the batch id ``<file id>.part<k>``. The parts depend on the file
        alone, so submitting the file again, after any failure, counts each part once.
        """
        return list(self.submit_file_parts(campaign, path))

    def submit_file_parts(self, campaign: str, path: PathLike) -> Iterator[dict]:
        """:meth:`submit_file`, each part's acknowledgement as soon as it is acknowledged: a caller learns what was
        counted before a later part fails (``dpdist submit --reports`` says so).  A generator: the file is checked and
        its parts sent as it is iterated, nothing before."""
        from .._io._dedupe import identities_of  # lazy: report files only (dpdist.io: ~70 ms at import)
        from .._io._files import summarize_file  # lazy: report files only (dpdist.io: ~70 ms at import)
        from .._io._shuffle import rechunk_rows  # lazy: report files only (dpdist.io: ~70 ms at import)
        from ..io import iter_report_batches  # lazy: report files only (dpdist.io: ~70 ms at import)

        relayed = self.relay(campaign) is not None
        summary = summarize_file(path)  # the one reading of the file's headers; then its reports, once
        identities = identities_of(summary)
        identity = identities[0]
        batch_id = identity.split(":", 1)[1] if identity.startswith("id:") else identity.replace("sha256:", "sha256-")[:100]
        protocol = summary.protocol()
        self.batch_rows(campaign, protocol, 1)  # a report the service's body cannot hold: refused before anything is sent
        # at most the reports a batch may cost to count at the service's default --max-batch-work: the parts still
        # depend on the file alone (a bound read from the server could differ at the next try and split it otherwise)
        rows_per_part = max(1, min(FILE_PART_BYTES // max(protocol.report_format.row_bytes, 1), reports_within(protocol)))
        _check_part(campaign, self._documents.get(campaign), min(summary.rows, rows_per_part), rows_per_part)
        if summary.rows <= rows_per_part:
            if (summary.format == "binary" and identity.startswith("id:") and len(identities) == 1
                    and len(summary.record_ids) <= FILE_MAX_RECORDS and not relayed):
                yield self.submit_body(campaign, batch_id, Path(path).read_bytes())
                return
            reports = [batch.reports for batch in iter_report_batches(path, protocol)]
            array: Any = np.concatenate(reports) if reports else None  # an empty file: no rows
            yield self.submit_reports(campaign, protocol, array, batch_id=batch_id)
            return
        batches = (batch.reports for batch in iter_report_batches(path, protocol, batch_rows=rows_per_part))
        for index, part in enumerate(rechunk_rows(batches, rows_per_part)):
            yield self.submit_reports(campaign, protocol, part, batch_id=f"{batch_id}.part{index}")


def json_rows(reports: ArrayLike) -> list:
    """Reports as the rows of a JSON batch: ``ndarray.tolist()``, structured rows as ``{field: value}`` objects
    (what ``protocol.report_format.to_json_rows`` gives and ``from_json_rows`` reads)."""
    return rows(reports)


def _rows_sent(body: bytes, content_type: str) -> int | None:
    """The reports (rows) a batch body carries, read from its records' headers or its JSON ``reports``; None if the body
    cannot be read so (the service refuses it then: no acknowledgement is checked against a count)."""
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind == "application/json":
            document = json.loads(body)
            return len(document["reports"]) if isinstance(document, dict) and isinstance(document.get("reports"), list) else None
        stream, rows = io.BytesIO(body), 0
        while (header := read_header(stream, "batch")) is not None:
            rows += int(header["shape"][0])
            stream.seek(int(header["payload_bytes"]), io.SEEK_CUR)
        return rows
    except (ValueError, UnicodeDecodeError, MalformedReportError):
        return None


def _record_reports(protocol: LocalProtocol, body: bytes) -> np.ndarray:
    """The reports of a body of dpdist binary records, in order."""
    stream, parts = io.BytesIO(body), []
    while (header := read_header(stream, "batch")) is not None:
        parts.append(decode_payload(protocol, header, stream.read(header["payload_bytes"]), "batch").reports)
    if not parts:
        raise InvalidParameterError("A batch body of dpdist binary records holds no record.")
    return np.concatenate(parts)


def _check_part(campaign: str, document: Any, part: int, rows_per_part: int) -> None:
    """Refuse, before anything is sent, a report file whose parts (``part`` reports each) hold more reports than a
    batch of ``campaign`` may (its config answer's ``max_batch_reports``, under a ``--max-batch-work`` below the
    default): each would be refused 413 ``too_many_rows``, which the caller cannot act on."""
    stated = batch_reports(document, campaign)
    if part > stated:
        raise ServiceRefusedError(
            f"Campaign {campaign!r} takes at most {stated} report(s) a batch (its service's --max-batch-work is below the "
            f"default), and this report file goes in parts of {part}: a file's parts depend on the file alone (at most "
            f"{rows_per_part} reports each, what the default takes), so that sending it again counts each part once. "
            f"Nothing was sent: write the reports in files of at most {stated} each, or submit the values (--column), "
            "which go in batches the campaign takes.", status=413, code="too_many_rows")


def _check_ohttp(relay, keys) -> tuple[str | None, bytes | None]:
    """The ``ohttp_relay`` and ``ohttp_keys`` of :class:`Client`, checked (a relay URL; keys that parse)."""
    if relay is None:  # keys without a relay: CLIENT_RELATIONS
        return None, None
    if keys is not None:
        try:
            decode_key_list(bytes(keys) if isinstance(keys, (bytes, bytearray)) else b"")
        except MalformedReportError as error:
            raise InvalidParameterError(f"The 'ohttp_keys' parameter of Client must be the bytes of an "
                                        f"application/ohttp-keys document (RFC 9458 section 3.2): {error}") from None
    return relay, None if keys is None else bytes(keys)


def _new_batch_id() -> str:
    return new_file_id()


def _is_file_id(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{32}", text))
