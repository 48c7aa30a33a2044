"""What a command holds that no line it writes may show: while it runs, its standard output and error mask (in every
form :func:`dpdist._shown.masked` knows) each option and ``DPDIST_`` variable named as a token, credential or password,
and the passwords of every URL among its options and variables (a server's answer, a driver's error, a log record)."""

from __future__ import annotations

import os
import re
from typing import Any

from .._redact import url_secrets
from .._shown import masked

__all__ = ["command_secrets", "MaskedStream"]


def command_secrets(args: Any, environ=None) -> tuple[str, ...]:
    """The secrets of a command run with the parsed ``args`` in ``environ``."""
    environ = os.environ if environ is None else environ
    named = [*((key, value) for key, value in vars(args).items() if isinstance(value, str)),
             *((key, value) for key, value in environ.items() if key.startswith("DPDIST_"))]
    found = [value for key, value in named if re.search(r"(?:token|credential|password)$", key, re.IGNORECASE)]
    found += [secret for _, value in [*named, *environ.items()] if "//" in value for secret in url_secrets(value)]
    return tuple(dict.fromkeys(found))


class MaskedStream:
    """A text stream whose writes have ``secrets`` masked; ``unmasked`` for fixed fields (a server's access lines)."""

    def __init__(self, stream, secrets: tuple[str, ...]):
        self.unmasked, self.secrets = stream, secrets

    def write(self, text: str) -> int:
        return self.unmasked.write(masked(text, self.secrets))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unmasked, name)
