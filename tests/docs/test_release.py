"""Docs/release.md states what the release artefacts hold."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_states_the_npm_tarballs_file_count():
    # docs/how-to/release.md stated 78 files in the npm tarball, measured before the client's protocols became one
    # module each; `npm pack` now packs 69 (package.json's `files` and package.json).
    import json

    client = ROOT / "clients" / "js"
    listed = ["package.json"]
    for name in json.loads((client / "package.json").read_text())["files"]:
        path = client / name
        listed += [str(file) for file in path.rglob("*") if file.is_file()] if path.is_dir() else [name]
    page = (ROOT / "docs" / "how-to" / "release.md").read_text()
    assert re.search(rf"npm tarball\s+[\d,]+ bytes \({len(listed)} files", page), len(listed)
