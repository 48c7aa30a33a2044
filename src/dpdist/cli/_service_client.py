"""What the commands that speak to a running service share: ``--server``, the admin token, the client.

``dpdist serve`` checks the admin token it is given; ``dpdist campaign ...`` (the admin) and ``dpdist submit``
(a device) reach the service through :func:`admin_client` and :func:`device_client`, which say once when they
start retrying.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .._http._retry import DEFAULT_RETRY_WINDOW_S, NOT_ACKNOWLEDGED, describe_window
from .._validation import HttpUrl, Integer, Interval
from ..errors import InvalidParameterError, MissingDependencyError
from ._arguments import Needs, state_rules, token_rule

__all__ = ["DEFAULT_SERVER", "TOKEN_HELP", "add_ohttp_arguments", "admin_token", "checked_token", "missing_extra", "server_options",
           "admin_client", "device_client"]

DEFAULT_SERVER = "http://127.0.0.1:8000"
TOKEN_HELP = "admin token (default: the DPDIST_ADMIN_TOKEN environment variable; prefer it: options show in `ps`)"


def server_options(parser, *, admin: bool) -> None:
    parser.add_argument(
        "--server",
        default=os.environ.get("DPDIST_SERVER", DEFAULT_SERVER),
        help=f"base URL of the service (default: $DPDIST_SERVER, else {DEFAULT_SERVER})",
    )
    if admin:
        parser.add_argument("--admin-token", default=None, help=TOKEN_HELP)
        state_rules(parser, {"--admin-token": token_rule(source="DPDIST_ADMIN_TOKEN")})
    parser.add_argument(
        "--retry-window", type=float, default=DEFAULT_RETRY_WINDOW_S, metavar="SECONDS",
        help="how long a request that failed (a refused connection, a network error, 408, 425, 429, 5xx) is sent "
        f"again, from its first failure, pausing with jittered exponential backoff or as Retry-After asks "
        f"(default {DEFAULT_RETRY_WINDOW_S:.0f}: a server restarting under load); 0: never. An attempt begun in the "
        "window runs to its own timeout")
    parser.add_argument("--retries", type=int, default=None,
                        help="at most this many attempts after the first, as well (default: as many as --retry-window allows)")
    state_rules(parser, {"--retries": Integer(low=0), "--retry-window": Interval(0.0, float("inf"), closed="left"),
                         "--server": HttpUrl("the http:// or https:// URL of the service, with a host",
                                             no_userinfo=HttpUrl.TOKEN_SENT, base=True)})


def missing_extra(command: str, error: ImportError):
    module = getattr(error, "name", None) or str(error)
    return MissingDependencyError(
        f"'{command}' needs the serve extra ({module} is not installed): pip install 'dpdist[serve]'."
    )


def admin_token(args) -> str:
    token = args.admin_token or os.environ.get("DPDIST_ADMIN_TOKEN")
    if not token:
        raise InvalidParameterError("The admin token is missing: set DPDIST_ADMIN_TOKEN or pass --admin-token.")
    checked_token(token, "--admin-token (or DPDIST_ADMIN_TOKEN)")
    return token


def checked_token(token: str | None, option: str) -> str | None:
    """``token`` (from its option or its environment variable) if it can be sent in an HTTP header (printable ASCII),
    else refused naming ``option``, shown by its length only (it is a secret)."""
    if token and not (token.isascii() and token.isprintable()):
        raise InvalidParameterError(f"The {option} token must be printable ASCII characters (it is sent in an HTTP "
                                    f"header). Got {len(token)} characters, not all of them printable ASCII, instead.")
    return token


def _clients(args):
    """:mod:`dpdist.client`, or one line naming the extra it needs."""
    try:
        import httpx  # noqa: F401 - the client's transport  # lazy: optional extra dpdist[serve]

        from .. import client  # lazy: the client's code loads only when it runs (dpdist[serve])
    except ImportError as error:
        raise missing_extra(f"dpdist {args.command}", error) from None
    return client


def admin_client(args):
    """The :class:`~dpdist.client.AdminClient` of ``dpdist campaign ...``, with the options of the command."""
    return _clients(args).AdminClient(args.server, admin_token=admin_token(args), retries=args.retries,
                                      retry_window=args.retry_window, on_retry=_say_retrying(args.server, args.retry_window))


def device_client(args):
    """The device's :class:`~dpdist.client.Client` of ``dpdist submit``, with the options of the command."""
    clients = _clients(args)
    credential = getattr(args, "issuer_credential", None) or os.environ.get("DPDIST_ISSUER_CREDENTIAL")
    issuer = getattr(args, "issuer", None)
    if credential and not (isinstance(issuer, str) and issuer.startswith(("http://", "https://"))):
        raise InvalidParameterError("The '--issuer' option (or DPDIST_ISSUER) must be the http:// or https:// URL of the issuer "
                                    f"the issuer credential is for: a credential is sent to that issuer only. Got {issuer!r}.")
    relay, keys = _ohttp_options(args)
    return clients.Client(
        args.server,
        ohttp_relay=relay,
        ohttp_keys=keys,
        submit_token=checked_token(getattr(args, "submit_token", None) or os.environ.get("DPDIST_SUBMIT_TOKEN"),
                                   "--submit-token (or DPDIST_SUBMIT_TOKEN)"),
        retries=args.retries,
        retry_window=args.retry_window,
        on_retry=_say_retrying(args.server, args.retry_window, relay),
        pins={args.campaign: args.pin} if getattr(args, "pin", None) else None,
        issuer_credential=credential,
        issuer=issuer,
    )


def add_ohttp_arguments(parser) -> None:
    """``--ohttp-relay`` and ``--ohttp-keys``: a device's batches through a standard Oblivious HTTP relay."""
    parser.add_argument(
        "--ohttp-relay", default=None, metavar="URL",
        help="send the batches through this standard Oblivious HTTP relay resource (RFC 9458) to the collector's gateway, "
        "encapsulated to the campaign's key configuration: the collector never sees this machine's address with a "
        "report (without --ohttp-keys the campaign's config, which states the keys, is fetched from --server directly; "
        "docs/how-to/run-a-campaign.md, 'Anonymous collection')")
    parser.add_argument(
        "--ohttp-keys", default=None, metavar="FILE",
        help="with --ohttp-relay: the gateway's key configurations (application/ohttp-keys) as given out of band: "
        "then the campaign's config goes through the relay too, and a campaign whose config states other keys is refused "
        "before anything is randomized or sent")
    state_rules(parser, {"--ohttp-relay": HttpUrl("the http:// or https:// URL of an Oblivious HTTP relay resource, with a host")},
                (Needs("--ohttp-keys", "--ohttp-relay", "the relay the keys are for"),))


def _ohttp_options(args) -> tuple[str | None, bytes | None]:
    """``--ohttp-relay`` and the bytes of ``--ohttp-keys``, refused by option name."""
    relay, keys_file = getattr(args, "ohttp_relay", None), getattr(args, "ohttp_keys", None)
    # --ohttp-relay a URL, --ohttp-keys only with it: the option table
    if keys_file is None:
        return relay, None
    try:
        keys = Path(keys_file).read_bytes()
    except OSError as error:
        raise InvalidParameterError(f"The '--ohttp-keys' option names a file that cannot be read: {error}.") from None
    from ..errors import MalformedReportError  # lazy: OHTTP devices only
    from .._ohttp import decode_key_list  # lazy: OHTTP devices only

    try:
        decode_key_list(keys)
    except MalformedReportError as error:
        raise InvalidParameterError(f"The '--ohttp-keys' option must name an application/ohttp-keys file (RFC 9458 "
                                    f"section 3.2, as GET /ohttp/keys serves it): {error}") from None
    return relay, keys


def _say_retrying(server: str, window: float, relay: str | None = None):
    """An ``on_retry`` that prints one line at the first failure of a request: no silence while the client retries.
    Through an Oblivious HTTP ``relay`` the failure is the relay's or the collector's behind it: the line names both
    (a relay's 502 was blamed on the collector before).  An answer that is not the acknowledgement of
    the batch sent is said as such (docs/explanation/delivery.md, "What counts as an acknowledgement")."""
    said = False

    def on_retry(failure: str, attempt: int, wait: float, remaining: int) -> None:
        nonlocal said
        if attempt == 1 or not said:
            said = True
            who = server if relay is None else f"the Oblivious HTTP relay {relay} (or {server} behind it)"
            # an answer that is not the acknowledgement of the batch sent (a proxy's, a captive portal's): not counted
            did = "did not acknowledge the batch" if failure.startswith(NOT_ACKNOWLEDGED) else "did not answer"
            print(f"dpdist: {who} {did} ({failure}); sending the same request again for up to "
                  f"{describe_window(window)} (--retry-window; Ctrl-C to stop).", file=sys.stderr, flush=True)

    return on_retry
