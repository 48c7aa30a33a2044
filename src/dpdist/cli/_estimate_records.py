"""One-shot ``dpdist estimate FILE --columns C1,C2 --attributes SCHEMA --protocol P --epsilon E``.

Simulates one collection of a multi-attribute protocol (docs/explanation/multi-attribute.md) on the
records of a data file, one per row, and prints each attribute's estimate beside the truth, after the lines saying it
is a simulation whose truth is not private (:mod:`dpdist.cli._simulation`).
"""

from __future__ import annotations


import numpy as np

from .. import local, plotting
from .._validation import check_param
from ..errors import InvalidParameterError
from ..local.multi import Attribute, Attributes, MultiAttributeEstimate
from ._arguments import missing_cells
from ._deploy import json_option
from ._records import RecordValues
from ._simulation import PLOT_NOTE, simulation_lines

__all__ = ["run_estimate_records", "MULTI_CHOOSERS"]

#: Multi-attribute protocols made by name but not listed by ``local.available("multi")``.
MULTI_CHOOSERS = ("multi-auto",)


def load_attributes(text: str) -> tuple:
    """The schema of ``--attributes``: a JSON list of attributes (docs/explanation/multi-attribute.md), inline or in a file.

    A protocol config with an ``attributes`` entry (the ``--config`` of ``dpdist privatize``) gives its schema.
    """

    schema = json_option(text, "--attributes", "list")
    if isinstance(schema, dict) and "attributes" in schema:  # a protocol config (privatize's --config) names them too
        schema = schema["attributes"]
    return tuple(Attribute.from_dict(spec) for spec in check_param("dpdist estimate", "attributes", schema, Attributes()))


def run_estimate_records(args) -> int:
    """The one-shot mode on several columns: read the records, simulate one collection, print the estimate."""

    name = args.protocol  # a multi-attribute protocol, with --attributes: the option table
    attributes = load_attributes(args.attributes)
    # FILE an existing file: the option table
    prepare = RecordValues(attributes, args.columns, clip=args.clip)
    parts, missing = [], 0
    for records, n_missing in prepare.read(args.file):
        parts.append(records)
        missing += n_missing
    records = np.concatenate(parts) if parts else np.zeros(0, dtype=prepare.dtype)
    if records.size == 0:
        raise InvalidParameterError(f"The columns {prepare.columns} of {args.file!r} hold no complete record.")
    params = {"epsilon": args.epsilon, "attributes": [attribute.to_dict() for attribute in attributes]}
    if name in MULTI_CHOOSERS or "expected_reports" in local.parameter_names(name):
        params["expected_reports"] = int(records.size)  # a simulation: the number of users is the file's
    protocol = local.make(name, **params)
    options = {} if args.postprocess is None else {"postprocess": args.postprocess}
    estimate = protocol.estimate(protocol.simulate(records, rng=np.random.default_rng(args.seed)), **options)
    chosen = f" (chose {protocol.name})" if name in MULTI_CHOOSERS else ""
    print("\n".join(simulation_lines(estimate, args.seed)))
    print(f"{name}{chosen} with epsilon={args.epsilon:g} on {records.size} records of the columns {prepare.columns}")
    for note in missing_cells(args, missing, f"{args.file}:{args.columns}") + prepare.notes():
        print(f"  note  {note}")
    per_attribute = isinstance(estimate, MultiAttributeEstimate)  # calm's marginals, hdg's grids: no truth shown
    print(estimate.describe(_truth(protocol, records) if per_attribute else None))
    if args.plot:
        plotting.save_estimate(estimate, args.plot, label=f"{protocol.name}, eps={args.epsilon:g}", note=PLOT_NOTE)
        print(f"  plot  {args.plot} (a simulation's: not for publication)")
    return 0


def _truth(protocol, records: np.ndarray) -> dict:
    """Each attribute's truth as its estimate takes it: the frequencies of its items, or its values."""
    return {
        attribute.name: np.bincount(records[attribute.name], minlength=attribute.size) / records.size
        if attribute.categorical else records[attribute.name]
        for attribute in protocol.attributes
    }
