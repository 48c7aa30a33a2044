"""Write fixtures/rfc9474.json and fixtures/rfc9578.json: the test vectors of RFC 9474 (Appendix A) and of RFC 9578
(Appendix A.2, issuance protocol 2, blind RSA 2048), read from the sources of the drafts the RFCs were published from.

    python clients/js/test/make_privacypass_fixtures.py CFRG_BLIND_SIGNATURES_REPO PRIVACYPASS_BASE_DRAFTS_REPO

The two arguments are git clones of github.com/cfrg/draft-irtf-cfrg-blind-signatures and
github.com/ietf-wg-privacypass/base-drafts; the vectors are read at the tags of the last drafts
(draft-irtf-cfrg-rsa-blind-signatures-14, published as RFC 9474; draft-ietf-privacypass-protocol-16, published as
RFC 9578), whose test-vector sections the RFCs print unchanged.  Only the standard library is needed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

RSA_TAG, RSA_FILE = "draft-irtf-cfrg-rsa-blind-signatures-14", "draft-irtf-cfrg-rsa-blind-signatures.md"
PP_TAG, PP_FILE = "draft-ietf-privacypass-protocol-16", "draft-ietf-privacypass-protocol.md"
OUT = Path(__file__).resolve().parent / "fixtures"


def _show(repo: str, tag: str, path: str) -> tuple[str, str]:
    commit = subprocess.run(["git", "-C", repo, "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True,
                            check=True).stdout.strip()
    text = subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout
    return commit, text


def _fields(lines: list[str], pattern: str) -> dict[str, str]:
    """``name = hex`` (or ``name: hex``) lines, a value continued on the following lines."""
    fields: dict[str, str] = {}
    key = None
    for line in lines:
        match = re.match(pattern, line)
        if match:
            key = match.group(1)
            fields[key] = match.group(2).strip()
        elif line.strip():
            fields[key] += line.strip()
    return fields


def rfc9474(text: str) -> list[dict]:
    vectors = []
    for match in re.finditer(r"^## (RSABSSA-[A-Za-z0-9-]+) Test Vector\n~~~\n(.*?)\n~~~", text, re.S | re.M):
        vectors.append({"name": match.group(1), **_fields(match.group(2).splitlines(), r"^([a-z_]+) = ?(.*)$")})
    return vectors


def rfc9578(text: str) -> list[dict]:
    section = text[text.index("## Issuance Protocol 2 - Blind RSA, 2048"):]
    section = section[section.index("~~~\n") + 4:]
    section = section[: section.index("\n~~~")]
    chunks = re.split(r"^// Test vector \d+\n", section, flags=re.M)[1:]
    return [_fields(chunk.strip().splitlines(), r"^([A-Za-z_]+):\s*(.*)$") for chunk in chunks]


def main(rsa_repo: str, pp_repo: str) -> None:
    rsa_commit, rsa_text = _show(rsa_repo, RSA_TAG, RSA_FILE)
    pp_commit, pp_text = _show(pp_repo, PP_TAG, PP_FILE)
    documents = {
        "rfc9474.json": {
            "source": f"RFC 9474 Appendix A (Test Vectors), as printed in {RSA_TAG} "
                      f"(github.com/cfrg/draft-irtf-cfrg-blind-signatures, commit {rsa_commit}, {RSA_FILE}); "
                      "hexadecimal, as the RFC lists them; written by clients/js/test/make_privacypass_fixtures.py",
            "vectors": rfc9474(rsa_text),
        },
        "rfc9578.json": {
            "source": f"RFC 9578 Appendix A.2 (Issuance Protocol 2 - Blind RSA, 2048), as printed in {PP_TAG} "
                      f"(github.com/ietf-wg-privacypass/base-drafts, commit {pp_commit}, {PP_FILE}); skS is the "
                      "PEM text of a PKCS#8 key in hexadecimal, as the RFC lists it; written by "
                      "clients/js/test/make_privacypass_fixtures.py",
            "vectors": rfc9578(pp_text),
        },
    }
    assert len(documents["rfc9474.json"]["vectors"]) == 4 and len(documents["rfc9578.json"]["vectors"]) == 5
    for name, document in documents.items():
        (OUT / name).write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
