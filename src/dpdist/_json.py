"""JSON from outside (report files, request bodies, query options, configs, memos): one parser.

Python's ``json.loads`` raises ``RecursionError``, not ``ValueError``, on a document nested
more deeply than the interpreter's recursion limit (about 1,000 levels: ``[[[[...]]]]`` of
2 kB does it), so a reader that catches ``ValueError`` for "not valid JSON" let such input
through as an internal error (HTTP 500 from ``dpdist serve``, "internal error" from the CLI).
:func:`loads` turns it into the ``ValueError`` every caller already handles.
"""

from __future__ import annotations

import json

__all__ = ["loads"]


def loads(text):
    """``json.loads(text)``, raising ``ValueError`` (never ``RecursionError``) for too deeply nested input."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
