"""The lines a command prints from a service's answer, or one line refusing an answer they cannot be made of.

An answer passes its keys spec (:func:`dpdist._http._answer.answer_document`) and may still hold, deeper than the spec
looks, a value of another type or size than the service gives (a hostile server, a proxy): its printing then raised
``TypeError``, ``KeyError``, ``OverflowError`` ... and the command ended in "internal error ... a bug of dpdist"
(78 of 630 fuzzed estimates, 58 of 354 rounds documents).  :func:`printed_lines` builds every line
before anything is printed, and turns such an error into :class:`~dpdist.errors.ServiceRefusedError`, code
``unexpected_answer``, in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._http._answer import UNEXPECTED
from .._shown import shown
from ..errors import DPDistError, ServiceRefusedError

__all__ = ["printed_lines"]

#: what a value of the wrong type or size raises while it is formatted
_FORMATTING_ERRORS = (TypeError, ValueError, OverflowError, KeyError, IndexError, AttributeError)


def printed_lines(lines_of: Callable[[Any], list[str]], document: Any, request: str, what: str) -> list[str]:
    """``lines_of(document)``; an answer to ``request`` (``"GET http://h/api/..."``) they cannot be made of refused in
    one line naming ``what`` it should be (``"an estimate"``) and the error that stopped them."""
    try:
        return lines_of(document)
    except DPDistError:
        raise
    except _FORMATTING_ERRORS as error:
        raise ServiceRefusedError(
            f"The answer to {shown(request)} is not what a dpdist service answers ({what} whose "
            f"{shown(type(error).__name__ + ': ' + str(error), limit=120)} stops its printing). Is that URL a dpdist "
            "service, not a proxy or another server answering in its place?", status=200, code=UNEXPECTED) from None
