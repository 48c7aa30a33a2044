r"""The parameter entries that many protocols document alike, written once.

A protocol's class docstring names a shared entry by a line holding only
``{name}`` in its numpydoc ``Parameters`` section; :func:`shared_parameters`
puts the entry there, indented as that line::

    @shared_parameters
    class Oracle(FrequencyOracle):
        '''An oracle with the shared budget entry and one of its own.

        Parameters
        ----------
        {epsilon}
        depth : int
            Written out: no other protocol has it.
        '''

The rendered docstring (``help``, the API reference) is the same as if the
entries were written out; only the source says each of them once.
"""

from __future__ import annotations

import re
from typing import TypeVar

__all__ = ["PARAMETERS", "shared_parameters"]

#: numpydoc entries by name: the first line is ``name : type``, the rest its description
PARAMETERS = {
    "epsilon": "epsilon : float\n    Privacy budget, finite and > 0.",
    "domain_size": "domain_size : int\n    Number of items ``d >= 2``.",
    "hashed_domain_size": "domain_size : int\n    Number of items ``d``, ``2 <= d <= hash_prime``.",
    "bounds": "bounds : (float, float)\n    Range of the values, default (0, 1).",
    "wave_bounds": "bounds : (float, float)\n    Range of the users' values, default ``(0, 1)``.",
    "epsilon_longitudinal": (
        "epsilon : float\n    :math:`\\varepsilon_\\infty`, the bound for any number of reports of one value."
    ),
    "epsilon_1": "epsilon_1 : float\n    :math:`\\varepsilon_1 < \\varepsilon_\\infty`, the bound of one report.",
    "sketch_hash_count": "hash_count : int\n    Number :math:`k` of public hash functions (default 2048).",
    "sketch_width": "width : int\n    Sketch width :math:`m`, a power of two >= 2 (default 1024).",
    "family_prime": "hash_prime : int\n    The prime :math:`P` of the Carter–Wegman family; default :math:`2^{31}-1`.",
    "family_seed": "family_seed : int\n    Public seed naming the family (default 0).",
}
#: the four parameters of a count-mean sketch's public family (:class:`~dpdist.local.frequency._sketch.SketchOracle`)
PARAMETERS["sketch_family"] = "\n".join(
    PARAMETERS[name] for name in ("sketch_hash_count", "sketch_width", "family_prime", "family_seed")
)

_PLACEHOLDER = re.compile(r"^( *)\{(\w+)\}$", re.MULTILINE)

Documented = TypeVar("Documented", bound=type)


def shared_parameters(cls: Documented) -> Documented:
    """Class decorator: replace each ``{name}`` line of the docstring by ``PARAMETERS[name]``."""

    def entry(match: re.Match) -> str:
        indent, name = match.groups()
        if name not in PARAMETERS:
            raise KeyError(f"{cls.__name__}'s docstring names {{{name}}}, not one of {sorted(PARAMETERS)}.")
        return "\n".join(indent + line for line in PARAMETERS[name].splitlines())

    if cls.__doc__:
        cls.__doc__ = _PLACEHOLDER.sub(entry, cls.__doc__)
    return cls
