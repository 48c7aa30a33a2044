"""``dpdist._http._codes.CODES``, the closed set of the servers' refusal codes: every code ``dpdist serve``, ``relay`` and
``issuer`` answer with is in it (a client would show a refusal of any other as no dpdist answer), and the JavaScript and
Java clients' copies are the same set."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dpdist._http._codes import CODES

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ["serve", "relay", "issuer", "_guard"]
#: the refusals' classes, whose first argument is the code
KINDS = {"Refusal", "InvalidRequest", "TooSlow", "TooLarge", "UnsupportedContentCoding", "RateLimited", "Busy",
         "Unauthorized", "Forbidden", "NotFound", "Conflict", "UnsupportedMediaType", "Failure", "Unprocessable"}


def raised_codes(tree: ast.AST) -> set[str]:
    """The codes a module's code answers with: a refusal's first argument, the string after an HTTP status among a
    call's arguments (``RelayError(409, "code", ...)``), a dict's ``"error"``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            first = node.args[0] if node.args else None
            if name in KINDS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
            for status, code in zip(node.args, node.args[1:]):
                if (isinstance(status, ast.Constant) and isinstance(status.value, int) and 400 <= status.value < 600
                        and isinstance(code, ast.Constant) and isinstance(code.value, str)):
                    found.add(code.value)
        if isinstance(node, ast.Dict):
            found |= {value.value for key, value in zip(node.keys, node.values) if isinstance(key, ast.Constant)
                      and key.value == "error" and isinstance(value, ast.Constant) and isinstance(value.value, str)}
    return found


def test_every_code_a_server_answers_with_is_in_the_closed_set():
    modules = [path for folder in SERVERS for path in (ROOT / "src" / "dpdist" / folder).rglob("*.py")]
    found = set().union(*(raised_codes(ast.parse(path.read_text())) for path in modules))
    assert len(found) > 80 and found <= CODES, sorted(found - CODES)


def test_the_clients_copies_are_the_same_set():
    js = (ROOT / "clients" / "js" / "src" / "codes.js").read_text()
    java = (ROOT / "clients" / "java" / "src" / "main" / "java" / "org" / "dpdist" / "client" / "Codes.java").read_text()
    assert set(re.search(r"new Set\(`([^`]*)`", js).group(1).split()) == CODES
    assert set(" ".join(re.findall(r'"([a-z0-9_ ]+)"', java)).split()) == CODES
