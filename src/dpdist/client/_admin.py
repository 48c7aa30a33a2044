"""The operator's client of ``dpdist serve``: campaigns, estimates, exports and rounds, under the admin token.

An :class:`AdminClient` makes the calls of ``dpdist campaign ...`` (docs/how-to/run-a-campaign.md, "Running a campaign"); a
device's submissions are :class:`~dpdist.client.Client`'s.  Both send through one :class:`._connection.Connection`:
the same retries, deadlines and one-line refusals.

>>> from dpdist.client import AdminClient
>>> admin = AdminClient("http://127.0.0.1:8000", admin_token=token)                  # doctest: +SKIP
>>> admin.create_campaign("commute", proto.config()); admin.open_campaign("commute")  # doctest: +SKIP
>>> admin.estimate("commute", postprocess="norm-sub")["estimate"]                     # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit

from .._http._answer import NULL, answer_document
from .._http._decoded import ACCEPTED_ENCODING, CorruptBody, Decoder
from .._http._deadline import ACK_ANSWER_BYTES, CONFIG_ANSWER_BYTES, request_within
from .._redact import redacted_url, url_secrets
from .._http._redirect import HOOKS, redirect_refusal
from .._http._retry import DEFAULT_RETRY_WINDOW_S
from .._shown import masked
from .._http._tls import verifying_context
from .._types import PathLike
from .._validation import Boolean, Described, HttpUrl, Text, Token, validate_params
from .._wire._report_bound import protocol_of_answer
from ..errors import InvalidParameterError, ServiceRefusedError, ServiceUnavailableError
from ._connection import CONNECTION_RULES, Connection, origin_of, refusal
from ._estimate_answer import ESTIMATE

if TYPE_CHECKING:
    from ..local import ReportBatch

__all__ = ["AdminClient", "issuer_of"]

#: what an admin answer holds (the keys callers and ``dpdist campaign`` read; docs/how-to/run-a-campaign.md): a campaign's summary
#: (create, open, close, each of the list), a deletion, an estimate
_SUMMARY = {"campaign": str, "state": str, "n": int, "batches": int}
_DELETED = {"batches": int, "kept_report_batches": int}
_ESTIMATE = {**_SUMMARY, **ESTIMATE}
_LISTED = {"campaigns": [{**_SUMMARY, "config": (dict, NULL)}]}
#: the first bytes of a PNG file
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the issuer of a relayed campaign, as the campaign names it to every device
PUBLISHED_ISSUER_URL = HttpUrl("the http:// or https:// URL of an issuer, with a host", no_userinfo=HttpUrl.PUBLISHED,
                               base=True)
#: the relay of a relayed campaign, as the campaign names it to every device
PUBLISHED_RELAY_URL = HttpUrl("the http:// or https:// URL of the relay, with a host", no_userinfo=HttpUrl.PUBLISHED)
#: the rules of :class:`AdminClient`'s arguments (checked once, when it is built)
ADMIN_RULES = {**CONNECTION_RULES, "admin_token": Token(1, "a non-empty string of printable ASCII characters (the admin "
                                                          "token: it is sent in an HTTP header)", spaces=True)}


class AdminClient(Connection):
    """The operator's connection to one dpdist collection service: every call sends the admin token.

    Parameters
    ----------
    server : str
        Base URL, e.g. ``"http://127.0.0.1:8000"``.
    admin_token : str
        The service's admin token (``dpdist serve --admin-token``, ``DPDIST_ADMIN_TOKEN``).
    retries, backoff, timeout, transport, on_retry, retry_window
        As :class:`~dpdist.client.Client` takes them: a request that failed is sent again for ``retry_window`` seconds.
    """

    @validate_params(ADMIN_RULES, owner="AdminClient")
    def __init__(
        self,
        server: str,
        *,
        admin_token: str,
        retries: int | None = None,
        backoff: float = 0.25,
        timeout: float = 60.0,
        transport: Any = None,
        on_retry: Callable[[str, int, float, int], Any] | None = None,
        retry_window: float = DEFAULT_RETRY_WINDOW_S,
    ):
        super().__init__(server, retries=retries, backoff=backoff, timeout=timeout, transport=transport,
                         on_retry=on_retry, retry_window=retry_window)
        self.admin_token = admin_token

    def _secrets(self) -> tuple[str, ...]:
        return (self.admin_token, *super()._secrets())

    def create_campaign(
        self,
        campaign: str,
        config: dict | None,
        *,
        submit_token: str | None = None,
        keep_reports: bool = False,
        max_reports: int | None = None,
        enrollment: bool = False,
        relay: dict | None = None,
        rounds: dict | None = None,
    ) -> dict:
        """Create a campaign (state ``created``); ``max_reports`` caps its reports, ``enrollment`` makes
        every device submit with its own enrollment token (:meth:`enroll`), ``relay`` makes it collected through a
        relay only: ``{"url": <the relay's URL>, "issuer": {...} or None, "colluding": m, "delta": d}`` (the issuer:
        ``url``, ``name``, ``key``, ``token_key``, ``independent`` and ``tokens_each``, as :func:`issuer_of` reads them
        from an issuer; ``colluding``: devices, each counted as ``tokens_each`` reports; docs/how-to/anonymous-collection.md, "Anonymous
        collection").  ``rounds`` (with
        ``config`` None): a campaign that runs adaptive quantile rounds, an ``AdaptiveQuantiles`` plan's config
        with ``"reports"``, the users of all rounds (docs/explanation/adaptive-quantiles.md)."""
        document: dict[str, Any] = {"campaign": campaign, "keep_reports": keep_reports}
        if config is not None:
            document["config"] = config
        if rounds is not None:
            document["rounds"] = rounds
        if submit_token is not None:
            document["submit_token"] = submit_token
        if max_reports is not None:
            document["max_reports"] = max_reports
        if enrollment:
            document["enrollment"] = True
        if relay is not None:
            document["relay"] = _published_relay(relay)
        return self._document("POST", "/api/campaigns", keys=_SUMMARY, token=self.admin_token, json=document)

    def config(self, campaign: str) -> dict[str, Any]:
        """The campaign's public config document, as its devices read it (``relay``, with its pin, if relayed)."""
        return self._document("GET", f"/api/campaigns/{campaign}/config", keys=("config",), limit=CONFIG_ANSWER_BYTES)

    def rounds(self, campaign: str) -> dict:
        """A campaign in rounds: every round's campaign with its counts, and the quantiles released so far."""
        return self._document("GET", f"/api/campaigns/{campaign}/rounds", token=self.admin_token)

    def advance_round(self, campaign: str) -> dict:
        """Close a campaign's current round now and publish the next one; the campaign's rounds after it."""
        return self._document("POST", f"/api/campaigns/{campaign}/rounds/advance", token=self.admin_token)

    def enroll(self, campaign: str, count: int, reports: int) -> list[str]:
        """Issue ``count`` enrollment tokens, each good for ``reports`` reports to ``campaign`` (shown only now)."""
        document = {"count": count, "reports": reports}
        return self._document("POST", f"/api/campaigns/{campaign}/enrollments", keys={"tokens": [str]}, token=self.admin_token,
                              json=document)["tokens"]

    def delete_campaign(self, campaign: str) -> dict:
        """Delete a campaign and everything the server stores for it."""
        return self._document("DELETE", f"/api/campaigns/{campaign}", keys=_DELETED, token=self.admin_token)

    def set_config(self, campaign: str, config: dict) -> dict:
        return self._document("PUT", f"/api/campaigns/{campaign}/config", token=self.admin_token, json={"config": config})

    def open_campaign(self, campaign: str) -> dict:
        return self._document("POST", f"/api/campaigns/{campaign}/open", keys=_SUMMARY, token=self.admin_token)

    def close_campaign(self, campaign: str) -> dict:
        return self._document("POST", f"/api/campaigns/{campaign}/close", keys=_SUMMARY, token=self.admin_token)

    @validate_params({"sealed_v1": Boolean()})
    def set_relay_envelopes(self, campaign: str, *, sealed_v1: bool) -> dict:
        """Turn dpdist's own envelope on or off for a relayed campaign (``sealed_v1=False``: its relay takes RFC 9458
        requests only and refuses dpdist's envelope, 409 ``sealed_v1_off``; reports it acknowledged before still count);
        ``{"campaign", "envelopes": {"sealed_v1", "ohttp"}}``."""
        return self._document("PUT", f"/api/campaigns/{campaign}/envelopes", token=self.admin_token,
                              json={"sealed_v1": sealed_v1})

    def campaign(self, campaign: str) -> dict:
        return self._document("GET", f"/api/campaigns/{campaign}", keys=("state", "config"),
                              token=self.admin_token)

    def campaigns(self) -> list[dict]:
        return self._document("GET", "/api/campaigns", keys=_LISTED, token=self.admin_token)["campaigns"]

    def estimate(self, campaign: str, **options: Any) -> dict:
        """The estimate document; ``options`` go to the protocol's ``estimate`` (and ``level`` to the band)."""
        return self._document("GET", f"/api/campaigns/{campaign}/estimate", keys=_ESTIMATE, token=self.admin_token,
                              params=_query(options))

    def estimate_png(self, campaign: str, **options: Any) -> bytes:
        """The estimate's plot, the bytes of a PNG file (an answer that is not one is refused, ``unexpected_answer``)."""
        path = f"/api/campaigns/{campaign}/estimate.png"
        answer = self._request("GET", path, token=self.admin_token, params=_query(options))
        kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "image/png" or not answer.content.startswith(_PNG_SIGNATURE):
            answer_document("GET", self.server + path, answer,
                            why="not a PNG image")
        return answer.content

    def history(self, campaign: str) -> list[dict]:
        return self._document("GET", f"/api/campaigns/{campaign}/history", keys={"history": [dict]}, token=self.admin_token)["history"]

    def export(self, campaign: str, out: PathLike) -> int:
        """Write the campaign's kept reports to ``out`` (binary records; Parquet for .parquet/.pq); return the count.

        The answer is streamed to a hidden ``.<name>.download`` beside ``out`` and refused at its first bytes if they
        start neither a Parquet file nor a dpdist report file (``unexpected_answer``); that file is removed however the
        export ends."""
        from .._io._files import summarize_file  # lazy: report files only (dpdist.io: ~70 ms at import)
        from ..io import ReportWriter, iter_report_batches  # lazy: report files only (dpdist.io: ~70 ms at import)

        out = Path(out)
        partial = out.with_name(f".{out.name}.download")
        try:
            self._download_export(campaign, partial)
            summary = summarize_file(partial)
            batches: Iterable[ReportBatch] = ()
            if not summary.record_ids:
                protocol = protocol_of_answer(campaign, self.config(campaign)["config"])  # an empty export
            else:
                protocol = summary.protocol()
                batches = iter_report_batches(partial, protocol)
            file_id = summary.record_ids[0] if summary.record_ids else None
            with ReportWriter(out, protocol, file_id=file_id) as writer:
                for batch in batches:
                    writer.write(batch.reports)
            return writer.n_written
        finally:  # every way out: refused, cut short, not decoded, interrupted, written
            partial.unlink(missing_ok=True)

    def _download_export(self, campaign: str, partial: Path) -> None:
        """Stream the answer of ``GET /api/campaigns/{campaign}/reports`` into ``partial``, decoded, checking its
        leading bytes as they arrive (a 2 MB gzip bomb of NULs grew the file to 2 GB before any was read);
        a network failure is one line (:class:`ServiceUnavailableError`), not retried."""
        import httpx  # lazy: optional extra dpdist[serve]

        path = f"/api/campaigns/{campaign}/reports"
        headers = {"Authorization": f"Bearer {self.admin_token}", "Accept-Encoding": ACCEPTED_ENCODING}
        try:
            self._stream_export(campaign, path, headers, partial)
        except httpx.TransportError as error:  # no server, or cut off: one line, not "internal error ConnectError"
            raise ServiceUnavailableError(masked(
                f"GET {self.server}{path} failed: {type(error).__name__}: {error} (is the server running at "
                f"{origin_of(self.server)}?). Nothing was written: run the export again.", self._secrets())) from None

    def _stream_export(self, campaign: str, path: str, headers: dict[str, str], partial: Path) -> None:
        """The body of :meth:`_download_export`: the request, its refusals, the stream decoded into ``partial``."""
        from .._io._files import LEADING_BYTES, may_start_report_file  # lazy: report files only (dpdist.io: ~70 ms)

        with self._http.stream("GET", path, headers=headers) as response:
            if response.status_code >= 400:
                response.read()
                raise refusal("GET", path, response, self._secrets())
            try:  # inflated by dpdist, a bounded step at a time (a stacked coding unpacked gigabytes in one read)
                decoder = Decoder(response)
            except ValueError as error:
                raise ServiceRefusedError(f"The export of {campaign!r} came in a coding dpdist does not read: {error}.",
                                          status=response.status_code, code="unexpected_answer") from None
            head = b""
            try:
                with open(partial, "wb") as handle:
                    for chunk in _decoded(decoder, response):
                        if len(head) < LEADING_BYTES:
                            head += chunk[:LEADING_BYTES - len(head)]
                            if not may_start_report_file(head):
                                raise ServiceRefusedError(masked(
                                    f"The answer to GET {self.server}{path} is neither a Parquet file nor a dpdist "
                                    f"report file (it starts {head!r}): refused at its first bytes, nothing written.",
                                    self._secrets()),
                                    status=response.status_code, code="unexpected_answer")
                        handle.write(chunk)
            except CorruptBody as error:
                raise ServiceRefusedError(f"The export of {campaign!r} does not decode: {error}.",
                                          status=response.status_code, code="unexpected_answer") from None


def _decoded(decoder: Decoder, response) -> Iterator[bytes]:
    """The decoded bytes of ``response``'s body as its raw bytes arrive (:class:`~dpdist._http._decoded.Decoder`)."""
    for raw in response.iter_raw():
        yield from decoder.feed(raw)
    yield from decoder.end()


@validate_params({"url": PUBLISHED_ISSUER_URL, "key": Described(Text(), "the name of the issuer's key (a non-empty str)"),
                  "independent": Boolean()})
def issuer_of(url: str, key: str, *, independent: bool = True, transport: Any = None) -> dict:
    """The ``"issuer"`` of a relayed campaign (:meth:`AdminClient.create_campaign`): the issuer at ``url``'s key ``key`` for
    the campaign and its ceiling ``tokens_each`` (the most tokens one credential gives), read from the issuer
    (``GET /issuer/v1/keys/{key}``), and whether it is ``independent`` of the collector.  The issuer's name in the
    campaign's token challenge is the one its directory states (``dpdist-issuer-name``), else its URL's host.  An
    issuer that publishes no ceiling (one older than this dpdist) is refused: the campaign's guarantee counts each
    colluding credential as that many reports."""
    import httpx  # lazy: optional extra dpdist[serve]

    address = f"{url.rstrip('/')}/issuer/v1/keys/{key}"
    try:
        with httpx.Client(timeout=30.0, transport=transport, event_hooks=HOOKS,
                          verify=verifying_context() if transport is None else True) as client:
            # a key and a directory are a few hundred bytes: read as an acknowledgement is (not 128 MiB parsed)
            answer = request_within(client, "GET", address, 30.0, limit=ACK_ANSWER_BYTES)
            directory = request_within(client, "GET", f"{url.rstrip('/')}/.well-known/private-token-issuer-directory",
                                       30.0, limit=ACK_ANSWER_BYTES)
    except httpx.HTTPError as error:
        raise ServiceUnavailableError(masked(f"GET {address} failed: {type(error).__name__}: {error}.",
                                             url_secrets(address))) from None
    redirected = redirect_refusal("GET", address, answer, "the issuer (--issuer; issuer_of's url)")
    if redirected is not None:
        raise redirected
    if answer.status_code != 200:
        raise refusal("GET", address, answer)
    document = answer_document("GET", address, answer, {"token_key": str}, "a dpdist issuer")
    ceiling = document.get("tokens_each")
    if not isinstance(ceiling, int) or isinstance(ceiling, bool) or ceiling < 1:
        raise InvalidParameterError(
            f"The issuer at {redacted_url(url)} publishes no 'tokens_each' for key {key!r} (the most tokens one of its credentials gives; "
            f"an issuer older than this dpdist: upgrade it): a relayed campaign counts each colluding credential as that "
            f"many reports. Got {ceiling!r}.")
    try:
        stated = directory.json().get("dpdist-issuer-name") if directory.status_code == 200 else None
    except (ValueError, AttributeError):  # not the issuer's directory: the name is its URL's host
        stated = None
    name = stated if isinstance(stated, str) and stated else urlsplit(url).netloc
    return {"url": url.rstrip("/"), "name": name, "key": key, "token_key": document["token_key"], "independent": independent,
            "tokens_each": ceiling}


def _published_relay(relay: Any) -> Any:
    """The ``relay`` of :meth:`AdminClient.create_campaign`, refused here if the relay's or the issuer's URL carries a
    ``user:password@`` (the campaign would publish it to every device: it is not even sent); the service checks the
    rest."""
    if not isinstance(relay, dict):
        return relay
    issuer = relay.get("issuer")
    urls = (("relay['url']", relay.get("url"), PUBLISHED_RELAY_URL),
            ("relay['issuer']['url']", issuer.get("url") if isinstance(issuer, dict) else None, PUBLISHED_ISSUER_URL))
    for name, url, rule in urls:  # the rest of a URL the service checks (invalid_relay)
        try:
            userinfo = isinstance(url, str) and "@" in urlsplit(url).netloc
        except ValueError:  # unreadable: the service names it
            userinfo = False
        if userinfo:
            raise InvalidParameterError(f"The {name} of AdminClient.create_campaign must be {rule.describe()}. "
                                        f"Got {rule.shown(url)} instead.")
    return relay


def _query(options: dict) -> dict:
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in options.items()}

