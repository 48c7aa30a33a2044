"""The audit's result: the claim, what was certified at what confidence, the verdict, and how it was found."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from .._documents import ABSENT, read_dataclass
from ..estimates._drawing import axes

__all__ = ["AuditResult", "Stage", "VERDICTS"]

#: The verdicts, as the report and the JSON spell them.
VERDICTS = ("violates", "channel mismatch", "no violation found")


@dataclass(frozen=True)
class Stage:
    """One look of the sequential audit: fresh samples per input drawn so far, the bound certified on this look."""

    samples: int
    bound: float


@dataclass(frozen=True)
class AuditResult:
    """What :func:`dpdist.audit.audit` found.

    Attributes
    ----------
    name : str
        The randomizer audited.
    claimed_epsilon : float
        The epsilon it claims.
    confidence : float
        ``1 - alpha``: the probability that every certified bound of the audit holds at once.
    certified_epsilon : float
        The black-box lower bound on the realized epsilon at ``confidence`` (0 when no
        event beat chance).  The realized epsilon is at least this, with probability
        ``confidence``, whatever the randomizer is.
    verdict : str
        ``"violates"``: the certified lower bound (or the stated channel's exact epsilon)
        exceeds the claim; ``"channel mismatch"``: the samples do not follow the stated
        channel (white box; level alpha); ``"no violation found"`` otherwise, which is not a
        proof: see ``detectable_epsilon``.
    detectable_epsilon : float
        The power of the audit: a randomizer whose privacy loss on the witness event
        (at its observed probability) reached this would have been flagged with
        probability at least 0.8 (``inf``: the event is too rare for any loss to show).
    samples_per_input : int
        Outputs drawn per audited input (all stages and the pilot; the white-box fit's own are in
        ``details``).
    samples : int
        Outputs drawn in all.
    seconds : float
        Wall time of the audit.
    witness : dict
        The event behind ``certified_epsilon``: the two inputs, the event, its counts and
        probabilities, the level of each bound.
    stages : tuple of Stage
        The bound certified at each look (the sequential audit's record; its figure).
    channel_epsilon : float or None
        White box: the exact epsilon of the stated channel on the audited inputs.
    fit_pvalue : float or None
        White box: the Bonferroni-corrected chi-square p-value that the samples follow the
        stated channel.
    inputs : str
        Which inputs were compared.
    method : str
        The statistics, in one sentence.
    notes : tuple of str
        Limits the report must state.
    """

    name: str
    claimed_epsilon: float
    confidence: float
    certified_epsilon: float
    verdict: str
    detectable_epsilon: float
    samples_per_input: int
    samples: int
    seconds: float
    witness: dict[str, Any] = field(repr=False)
    stages: tuple[Stage, ...] = field(repr=False)
    channel_epsilon: float | None = None
    fit_pvalue: float | None = None
    inputs: str = ""
    method: str = ""
    notes: tuple[str, ...] = ()
    seed: Any = None

    @property
    def violates(self) -> bool:
        """Whether the audit certifies that the randomizer breaks its claim."""
        return self.verdict == "violates"

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    def summary(self) -> dict[str, Any]:
        """The table row: claimed, certified, confidence, samples, time, verdict."""
        return {
            "randomizer": self.name,
            "claimed epsilon": self.claimed_epsilon,
            "certified lower bound": self.certified_epsilon,
            "confidence": self.confidence,
            "samples": self.samples,
            "seconds": self.seconds,
            "verdict": self.verdict,
            "detectable epsilon": self.detectable_epsilon,
            "channel epsilon": self.channel_epsilon,
            "fit p-value": self.fit_pvalue,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: ``schema``, the summary's fields, the stages, the witness, inputs, method, notes
        (``null`` for a missing or infinite number)."""
        return _safe({
            "schema": "dpdist.audit/1",
            "randomizer": self.name,
            "claimed_epsilon": self.claimed_epsilon,
            "confidence": self.confidence,
            "certified_epsilon": self.certified_epsilon,
            "verdict": self.verdict,
            "detectable_epsilon": self.detectable_epsilon,
            "samples_per_input": self.samples_per_input,
            "samples": self.samples,
            "seconds": self.seconds,
            "channel_epsilon": self.channel_epsilon,
            "fit_pvalue": self.fit_pvalue,
            "witness": self.witness,
            "stages": [{"samples": s.samples, "bound": s.bound} for s in self.stages],
            "inputs": self.inputs,
            "method": self.method,
            "notes": list(self.notes),
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else repr(self.seed),
        })

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "AuditResult":
        """The result whose :meth:`to_dict` is ``document``: ``null`` for a number is infinite (the JSON writes only
        infinities so), a seed written as text stays that text.  A field missing, of another type or NaN, or a
        derived one (the schema, a statement) its other fields contradict, is refused by name
        (:class:`~dpdist.errors.MalformedDocumentError`)."""

        def seed(name: str, document: Any) -> Any:
            if name != "seed" or not isinstance(document, dict) or not isinstance(document.get("seed"), str):
                return ABSENT
            return _WrittenSeed(document["seed"])

        return read_dataclass(cls, document, renamed={"name": "randomizer"}, nested=seed, null=math.inf)

    def text(self) -> str:
        """The report a person reads: one table row, then the witness, the method and the notes."""
        return "\n".join(table([self]) + [""] + self._detail_lines())

    def __str__(self) -> str:
        return self.text()

    def _detail_lines(self) -> list[str]:
        w = self.witness
        lines = [f"inputs compared: {self.inputs}"]
        if w:
            lines.append(
                f"witness: inputs {w['input']} vs {w['other_input']}, {w['event']}: "
                f"{w['count']}/{w['samples']} vs {w['other_count']}/{w['samples']} "
                f"(each bound at level {w['level']:.2g})"
            )
        if self.channel_epsilon is not None:
            lines.append(f"white box: stated channel's exact epsilon {_number(self.channel_epsilon)}, "
                         f"fit p-value {_number(self.fit_pvalue)}")
        if math.isfinite(self.detectable_epsilon):
            lines.append(f"power: a loss of {self.detectable_epsilon:.3g} on the witness event would have been "
                         "flagged with probability >= 0.8")
        else:
            lines.append("power: the witness event is too rare for any loss to be flagged at these samples")
        lines.append(f"method: {self.method}")
        lines += [f"note: {note}" for note in self.notes]
        return lines

    def plot(self, ax: Any = None) -> Any:
        """The certified bound at each look against fresh samples per input, with the claim (matplotlib)."""
        ax = axes(ax, (5.0, 3.4))
        ax.plot([s.samples for s in self.stages], [s.bound for s in self.stages], marker="o", label="certified lower bound")
        ax.axhline(self.claimed_epsilon, color="k", linestyle="--", label="claimed epsilon")
        if self.channel_epsilon is not None:
            ax.axhline(self.channel_epsilon, color="g", linestyle=":", label="exact channel epsilon")
        ax.set_xscale("log")
        ax.set_xlabel("fresh samples per input")
        ax.set_ylabel(f"epsilon (confidence {self.confidence:g})")
        ax.set_title(self.name)
        ax.legend()
        return ax


def table(results: list[AuditResult]) -> list[str]:
    """Rows of a text table, one per audit: claimed, certified, confidence, samples, time, verdict."""
    header = ("randomizer", "claimed", "certified >=", "confidence", "samples", "seconds", "verdict")
    rows = [header] + [
        (r.name, f"{r.claimed_epsilon:.4g}", f"{r.certified_epsilon:.4g}", f"{r.confidence:g}", f"{r.samples:,}",
         f"{r.seconds:.2f}", r.verdict)
        for r in results
    ]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _number(value) -> str:
    return "-" if value is None else f"{value:.4g}"


class _WrittenSeed(str):
    """A seed read back from a document that wrote it as text (its ``repr``): written again as that text."""

    def __repr__(self) -> str:
        return str(self)


def _safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    item = getattr(value, "item", None)  # a NumPy scalar or 0-d array
    if item is not None and not isinstance(value, (str, bytes)):
        return _safe(item())
    return value
