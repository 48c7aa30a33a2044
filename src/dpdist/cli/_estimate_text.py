"""``dpdist campaign estimate`` as text: a campaign's estimate with its fixed-n and anytime intervals, by label.

Reads the service's estimate document (``GET /api/campaigns/{id}/estimate``): the
estimate's JSON (``docs/reference/results.md``), whose ``intervals`` the service completes with the
confidence sequence's (``anytime_valid``, :mod:`dpdist.serve._uncertainty`), and prints one
table: the value's label (never an item number when the campaign has labels), the estimate,
the fixed-n interval (one look at a planned n) and the anytime one (every look), written by
the estimate's own kind (:func:`dpdist.estimates._presented.document_lines`), then what each
means and the stop readout.
"""

from __future__ import annotations

from ..estimates._presented import document_lines

__all__ = ["estimate_lines"]


def estimate_lines(estimate: dict | None) -> list[str]:
    """The lines of the table (written by the estimate's own kind) and the notes on its uncertainty."""
    if estimate is None:
        return ["no report yet"]
    notes = [f"note: {note}" for note in estimate.get("notes") or ()]  # what the estimate says of itself
    return document_lines(estimate) + notes + _notes(estimate.get("uncertainty") or {})


def _notes(uncertainty: dict) -> list[str]:
    lines = ["fixed-n: valid for one look at a number of reports fixed in advance; anytime: holds at every n, "
             "however often it is looked at"]
    bootstrap = uncertainty.get("bootstrap")
    if bootstrap:
        lines.append(f"fixed-n band: {bootstrap['replicates']} parametric-bootstrap replicates at "
                     f"{round(100 * bootstrap['level'], 6):g}%, {bootstrap['stream']}")
    if uncertainty.get("sequence_unavailable"):
        lines.append(f"anytime: none, {uncertainty['sequence_unavailable']}")
    if uncertainty.get("note"):
        lines.append(uncertainty["note"])
    stop = uncertainty.get("stop")
    if stop and stop["reached"]:
        lines.append(f"stop: the anytime band is narrower than {stop['target_width']:g} (width {stop['width']:.4g})")
    elif stop and stop["n"] is None:
        lines.append(f"stop: width {stop['width']:.4g}; not narrower than {stop['target_width']:g} within 10^10 reports")
    elif stop:
        lines.append(f"stop: width {stop['width']:.4g}; narrower than {stop['target_width']:g} at about "
                     f"n = {stop['n']:,} if the estimate stays where it is")
    return lines
