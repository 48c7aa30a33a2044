#!/bin/sh
# Regenerates src/vendor/hpke.js: @hpke/core (AES-128-GCM, HKDF-SHA256) and @hpke/dhkem-x25519 (X25519 in
# JavaScript, from noble-curves), bundled into one ES module so that the client needs no install step.
# Run from clients/js; needs npm (network) once. The licences of the bundled code are in LICENSE-hpke.txt.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '{"name": "hpke-bundle", "private": true, "type": "module"}\n' > package.json
npm install --no-audit --no-fund @hpke/core@1.9.0 @hpke/dhkem-x25519@1.8.0 esbuild@0.25.12 >/dev/null
printf 'export { Aes128Gcm, CipherSuite, HkdfSha256 } from "@hpke/core";\nexport { DhkemX25519HkdfSha256 } from "@hpke/dhkem-x25519";\n' > entry.js
{
  printf '// Bundled by src/vendor/build-hpke.sh from @hpke/core 1.9.0, @hpke/dhkem-x25519 1.8.0 and @hpke/common %s\n' \
    "$(node -p 'require("./node_modules/@hpke/common/package.json").version')"
  printf '// (MIT, (c) 2023-2024 Ajitomi Daisuke), which include code from noble-curves and noble-hashes (MIT, (c) 2022\n'
  printf '// Paul Miller): see LICENSE-hpke.txt. Do not edit; regenerate.\n'
  node_modules/.bin/esbuild entry.js --bundle --format=esm --platform=neutral --target=es2020 --legal-comments=inline --log-level=warning
} > "$OLDPWD/src/vendor/hpke.js"
