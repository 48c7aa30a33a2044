"""``dpdist issuer``: run the token issuer of relayed campaigns, create its keys, mint its credentials (docs/how-to/run-the-issuer.md, "The issuer").

::

    DPDIST_ISSUER_ADMIN_TOKEN=... dpdist issuer serve --issuer-db issuer.sqlite --issuer-name issuer.example.org
    dpdist issuer key commute --tokens-each 1 --issuer https://issuer.example.org   # one key per campaign
    dpdist issuer credentials commute --count 1000 --tokens-each 1 --out credentials.txt
    dpdist issuer status --issuer https://issuer.example.org

The issuer's own variables are ``DPDIST_ISSUER_*`` (``DPDIST_ISSUER_ADMIN_TOKEN``, ``DPDIST_ISSUER_DB``,
``DPDIST_ISSUER``): the issuer is meant to be another party than the collector, and its admin token
mints tokens, so it is never taken from the collector's ``DPDIST_ADMIN_TOKEN``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from .._io._atomic import write_text_atomically
from .._redact import redacted_url
from .._http._answer import answer_document, refusal_shown
from .._http._redirect import HOOKS, redirect_refusal
from .._http._retry import DEFAULT_RETRY_WINDOW_S
from .._validation import HttpUrl, Integer, Interval, Token
from ..errors import (
    InvalidParameterError,
    MissingDependencyError,
    ServiceRefusedError,
    ServiceUnavailableError,
)
from ..issuer._arguments import ADMIN_TOKEN, CORS_ORIGINS, SERVER_NAME, STORE
from ..issuer._limits import add_arguments as add_limit_arguments, from_args, uvicorn_options
from ._arguments import PORT, state_rules
from ._env import check_environment, environment_defaults
from ._listen import check_address
from ._commands import HELP

__all__ = ["add_commands"]

_DEFAULT_ISSUER = "http://127.0.0.1:8002"
#: the tokens each credential of a key gives, at most
_TOKENS_EACH = Integer(low=1, high=10_000)
_TOKEN_HELP = ("the issuer's admin token (default: $DPDIST_ISSUER_ADMIN_TOKEN; prefer it: options show in `ps`); "
               "whoever holds it mints credentials, hence tokens")


def add_commands(subparsers) -> None:
    issuer = subparsers.add_parser(
        "issuer",
        help=HELP["issuer"],
        description="An issuer of one-time Privacy Pass tokens (RFC 9578, type 0x0002: blind RSA): each credential it "
        "mints gives at most --tokens-each tokens of one key (one key per campaign); the relay and the collector admit "
        "a report only with a token of the campaign's key, spent once. The issuer signs blind: it learns who got a "
        "token, not which token. Needs dpdist[relay].",
    )
    actions = issuer.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_serve(actions)
    key = actions.add_parser("key", help="create a key NAME (one per campaign) and print its token key",
                             description="Create the issuer key NAME (RSA-2048, in the issuer's database) and print it as "
                             "JSON: name, token_type, token_key (base64url SubjectPublicKeyInfo), token_key_id, tokens_each "
                             "(the key's ceiling). A name already taken prints the existing key (a key is never replaced, "
                             "nor its ceiling changed).")
    key.add_argument("name", metavar="NAME", help="the key's name: 1-128 of A-Z a-z 0-9 . _ - (the campaign's id is a good one)")
    key.add_argument("--tokens-each", type=int, default=1,
                     help="the key's ceiling: no credential of it gives more tokens (1..10000; default 1: one report per "
                     "device). Published with the key: a relayed campaign counts each credential the collector may hold "
                     "(--colluding) as this many reports")
    _admin_options(key, _run_key)
    state_rules(key, {"--tokens-each": _TOKENS_EACH})
    credentials = actions.add_parser(
        "credentials", help="mint credentials for key NAME (each gives --tokens-each tokens); printed once",
        description="Mint --count credentials for key NAME, each good for --tokens-each tokens, and print them one per "
        "line (or write them to --out). The issuer keeps only their SHA-256: they are shown this once. Hand one to "
        "each device you admit (an enrollment list, an account system).",
    )
    credentials.add_argument("name", metavar="NAME", help="the key's name")
    credentials.add_argument("--count", type=int, required=True, help="credentials to mint, at most 10000 per call")
    credentials.add_argument("--tokens-each", type=int, default=1,
                             help="tokens each credential gives, at most the key's ceiling (default 1: one report per device)")
    credentials.add_argument("--out", default=None, help="write the credentials to this file (created readable by its owner only)")
    _admin_options(credentials, _run_credentials)
    state_rules(credentials, {"--count": Integer(low=1, high=10_000), "--tokens-each": _TOKENS_EACH})
    status = actions.add_parser("status", help="print each key's credentials and tokens issued, as JSON",
                                description="Per key: credentials minted, tokens they allow, tokens issued, tokens left.")
    _admin_options(status, _run_status)


def _add_serve(actions) -> None:
    serve = actions.add_parser(
        "serve", help="run the issuer (HTTP)",
        description="Serve the issuer directory (/.well-known/private-token-issuer-directory), the keys and token "
        "requests (POST /issuer/v1/keys/NAME/token-request with 'Authorization: Bearer <credential>'), and the admin "
        "API (Bearer admin token). Keys (private keys included), hashed credentials and the answers given are kept in "
        "--issuer-db. No client address is logged.",
    )
    serve.add_argument("--issuer-db", required=True,
                       help="SQLite file of the issuer (created if missing; WAL mode). It holds the private keys: protect it")
    serve.add_argument("--issuer-name", required=True,
                       help="the issuer's server name as TokenChallenges name it (host name, optional :port), e.g. issuer.example.org")
    serve.add_argument("--issuer-admin-token", default=None, help=_TOKEN_HELP + "; at least 16 characters")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8002, help="TCP port (default 8002)")
    serve.add_argument("--cors-origin", default="",
                       help="comma-separated origins (https://example.org) whose pages may request tokens from a browser, "
                       "or '*' (default: none)")
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="log level")
    add_limit_arguments(serve)
    serve.set_defaults(handler=_run_serve)
    state_rules(serve, {  # the rules of dpdist.issuer.create_app, as options (a token: shown by its length only)
        "--port": PORT, "--issuer-db": STORE, "--issuer-name": SERVER_NAME, "--cors-origin": CORS_ORIGINS.inner,
        "--issuer-admin-token": Token(16, ADMIN_TOKEN.what + " (or DPDIST_ISSUER_ADMIN_TOKEN)", spaces=True),
    })
    environment_defaults(serve)


#: the arguments of dpdist.issuer.create_app and the options that set them
_OPTIONS = {"db_path": "--issuer-db", "name": "--issuer-name", "admin_token": "--issuer-admin-token", "cors_origins": "--cors-origin"}


def _admin_options(parser, handler) -> None:
    parser.add_argument("--issuer", default=os.environ.get("DPDIST_ISSUER", _DEFAULT_ISSUER),
                        help=f"base URL of the issuer (default: $DPDIST_ISSUER, else {_DEFAULT_ISSUER})")
    parser.add_argument("--issuer-admin-token", default=None, help=_TOKEN_HELP)
    parser.add_argument("--retry-window", type=float, default=DEFAULT_RETRY_WINDOW_S, metavar="SECONDS",
                        help="how long a refused connection (an issuer still starting; nothing was sent) is tried again "
                        f"(default {DEFAULT_RETRY_WINDOW_S:.0f}); 0: never. No other failure is: a request the issuer "
                        "may have read could have minted")
    parser.set_defaults(handler=handler)
    state_rules(parser, {"--retry-window": Interval(0.0, float("inf"), closed="left"),
                         "--issuer": HttpUrl(no_userinfo=HttpUrl.TOKEN_SENT, base=True),
                         "--issuer-admin-token": Token(16, ADMIN_TOKEN.what + " (or DPDIST_ISSUER_ADMIN_TOKEN)",
                                                       spaces=True)})


def _admin_token(args) -> str:
    token = args.issuer_admin_token or os.environ.get("DPDIST_ISSUER_ADMIN_TOKEN") or ""
    if len(token) < 16:
        raise InvalidParameterError("The issuer's admin token (DPDIST_ISSUER_ADMIN_TOKEN or --issuer-admin-token) must be "
                                    "at least 16 characters." if token else
                                    "The issuer's admin token is missing: set DPDIST_ISSUER_ADMIN_TOKEN or pass --issuer-admin-token.")
    return token


def _run_serve(args) -> int:
    check_environment(args)
    try:
        import cryptography  # noqa: F401 - the keys  # lazy: optional extra (cryptography)
        import uvicorn  # lazy: optional extra dpdist[serve]

        from ..issuer import create_app  # lazy: the service's code loads only when it runs (dpdist[serve])
        from ..issuer._store import IssuerStore  # lazy: the service's code loads only when it runs (dpdist[serve])
    except ImportError as error:
        module = getattr(error, "name", None) or str(error)
        raise MissingDependencyError(f"'dpdist issuer' needs the relay extra ({module} is not installed): pip install 'dpdist[relay]'.") from None
    token = _admin_token(args)
    check_address(args.host, args.port, "dpdist issuer")  # in use: one line naming --port, before the database opens
    limits = from_args(args)
    try:
        app = create_app(args.issuer_db, name=args.issuer_name, admin_token=token, limits=limits, cors_origins=args.cors_origin)
    except InvalidParameterError as error:  # named as the options the user typed
        text = str(error)
        for argument, option in _OPTIONS.items():
            for named in (f"The '{argument}' argument", f"The '{argument}' parameter of issuer.create_app"):
                text = text.replace(named, f"The '{option}' option")
        raise InvalidParameterError(text) from None
    try:  # a wrong --issuer-db is one line naming it, before the server starts
        IssuerStore(args.issuer_db).close()
    except Exception as error:
        raise InvalidParameterError(f"The '--issuer-db' option: {args.issuer_db} cannot be opened as the issuer's SQLite file ({error}).") from None
    print(f"dpdist issuer {args.issuer_name}: database {args.issuer_db}; http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    # no access log (addresses and times of token requests), no forwarded headers believed
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False, proxy_headers=False,
                date_header=False, **uvicorn_options(limits))
    return 0


#: what each answer of the issuer holds (the keys its commands read or print)
_KEY = {"name": str, "token_key": str, "tokens_each": int}
_CREDENTIALS = {"credentials": [str]}
_STATUS = {"issuer_name": str, "keys": dict}


def _call(args, method: str, path: str, body: dict | None = None, keys: dict | None = None) -> dict:
    """One admin request, its answer holding ``keys``; a refusal is one line.  A refused connection (nothing sent: an
    issuer still starting) is tried again for up to ``--retry-window`` seconds; nothing else is, since a request the
    issuer may have read could have minted, and minting again would mint more."""

    try:
        import httpx  # lazy: optional extra dpdist[serve]
    except ImportError:
        raise MissingDependencyError("'dpdist issuer' needs httpx: pip install 'dpdist[relay]'.") from None
    from .._http._deadline import request_within  # lazy: it imports httpx (optional extra)
    from .._http._tls import verifying_context  # lazy: as httpx
    url = args.issuer.rstrip("/") + path
    deadline, pause = time.monotonic() + args.retry_window, 0.1
    while True:
        try:
            with httpx.Client(timeout=120.0, event_hooks=HOOKS, verify=verifying_context()) as http:
                response = request_within(http, method, url, 120.0, json=body,
                                          headers={"Authorization": f"Bearer {_admin_token(args)}"})
            break
        except httpx.ConnectError:
            if time.monotonic() + pause > deadline:
                raise ServiceUnavailableError(f"{method} {redacted_url(url)} failed: no connection within --retry-window "
                                              f"({args.retry_window:g} s).") from None
            if pause == 0.1:  # no silence while it waits: one line
                print(f"dpdist: {redacted_url(args.issuer)} refused the connection; trying again for up to "
                      f"{args.retry_window:g} s (--retry-window; Ctrl-C to stop).", file=sys.stderr, flush=True)
            time.sleep(pause)
            pause = min(2 * pause, 2.0)
        except httpx.TransportError as error:
            raise ServiceUnavailableError(f"{method} {redacted_url(url)} failed: {type(error).__name__}: {error}.") from None
    redirected = redirect_refusal(method, url, response, "--issuer (DPDIST_ISSUER)")
    if redirected is not None:
        raise redirected
    if response.status_code >= 400:
        code, said = refusal_shown(response)
        raise ServiceRefusedError(f"The issuer refused {method} {path} (HTTP {response.status_code}): {said}", response.status_code, code)
    return answer_document(method, url, response, keys or {}, what="a dpdist issuer")


def _run_key(args) -> int:
    try:
        document = _call(args, "POST", "/issuer/v1/keys", {"name": args.name, "tokens_each": args.tokens_each},
                         _KEY)
    except ServiceRefusedError as error:
        if error.code != "key_exists":
            raise
        document = _call(args, "GET", f"/issuer/v1/keys/{args.name}", keys=_KEY)
        print(f"issuer key {args.name} exists already (a key is never replaced, nor its ceiling changed: tokens_each "
              f"{document.get('tokens_each')}): printed as it is.", file=sys.stderr)
    print(json.dumps(document, indent=2))
    return 0


def _run_credentials(args) -> int:
    document = _call(args, "POST", f"/issuer/v1/keys/{args.name}/credentials", {"count": args.count, "tokens_each": args.tokens_each},
                     _CREDENTIALS)
    text = "".join(credential + "\n" for credential in document["credentials"])
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_text_atomically(args.out, text, private=True)
        print(f"issuer key {args.name}: {len(document['credentials'])} credential(s) of {args.tokens_each} token(s) each "
              f"written to {args.out}.")
    return 0


def _run_status(args) -> int:
    print(json.dumps(_call(args, "GET", "/issuer/v1/status", keys=_STATUS), indent=2))
    return 0
