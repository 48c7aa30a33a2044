#!/bin/sh
# Regenerates src/vendor/privacypass.js: the client side of Privacy Pass token type 2 (RFC 9578 section 6, publicly
# verifiable, blind RSA 2048) from @cloudflare/privacypass-ts (the TokenChallenge, TokenRequest, TokenResponse, Token
# and Authorization encodings, and the SPKI conversion of an id-RSASSA-PSS token key) and @cloudflare/blindrsa-ts
# (RSABSSA of RFC 9474: Blind and Finalize, Finalize checking the signature with WebCrypto), bundled into one ES module
# so that the client needs no install step (browsers and node >= 20: WebCrypto's RSA-PSS, SHA-256, SHA-384).
#
# privacypass-ts 0.8.1 is the newest release whose dependencies the registry serves (0.9.0 asks for blindrsa-ts 0.4.5,
# which it does not); blindrsa-ts is taken at 0.4.4, its newest release there (0.4.3, which privacypass-ts 0.8.1
# names, differs from it in one line of its copy of sjcl, the module export). Run from clients/js; needs npm (network)
# once. The licences of the bundled code are in LICENSE-privacypass.txt.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '{"name": "privacypass-bundle", "private": true, "type": "module", "overrides": {"@cloudflare/blindrsa-ts": "0.4.4"}}\n' > package.json
npm install --no-audit --no-fund @cloudflare/privacypass-ts@0.8.1 @cloudflare/blindrsa-ts@0.4.4 esbuild@0.25.12 >/dev/null
cat > entry.js <<'EOF'
export { AuthenticatorInput, AuthorizationHeader, Token, TokenChallenge } from '@cloudflare/privacypass-ts/lib/src/auth_scheme/private_token.js';
export { BLIND_RSA, TokenRequest, TokenResponse } from '@cloudflare/privacypass-ts/lib/src/pub_verif_token.js';
export { convertRSASSAPSSToEnc } from '@cloudflare/privacypass-ts/lib/src/util.js';
export { RSABSSA } from '@cloudflare/blindrsa-ts';
EOF
version() { node -p "require('./node_modules/$1/package.json').version"; }
{
  printf '// Bundled by src/vendor/build-privacypass.sh from @cloudflare/privacypass-ts %s and @cloudflare/blindrsa-ts %s\n' \
    "$(version @cloudflare/privacypass-ts)" "$(version @cloudflare/blindrsa-ts)"
  printf '// (Apache-2.0, (c) 2023 Cloudflare, Inc.; blindrsa-ts includes a copy of sjcl, BSD-2-Clause, (c) 2009-2015 Emily\n'
  printf '// Stark, Mike Hamburg and Dan Boneh), asn1js %s (BSD-3-Clause, (c) GMO GlobalSign, Peculiar Ventures), pvtsutils %s and\n' \
    "$(version asn1js)" "$(version pvtsutils)"
  printf '// pvutils %s (MIT), rfc4648 %s (MIT): see LICENSE-privacypass.txt. Do not edit; regenerate.\n' \
    "$(version pvutils)" "$(version rfc4648)"
  node_modules/.bin/esbuild entry.js --bundle --format=esm --platform=neutral --main-fields=module,main --target=es2020 \
    --legal-comments=inline --log-level=warning
} > "$OLDPWD/src/vendor/privacypass.js"
