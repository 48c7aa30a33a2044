"""The audit's result: the claim, what was certified at what confidence, the verdict and what it did not examine."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

from .._documents import ABSENT, read_dataclass
from ..estimates._drawing import axes

__all__ = ["AuditResult", "Stage", "VERDICTS", "EXAMINED"]

#: The output events an audit examines, in words (docs/how-to/audit-a-randomizer.md, "What the audit examines").
EXAMINED = ("unions of cells: whole distinct outputs; each column's values, or quantile bins of a column of many "
            "values; each varying bit of the first 8 such columns (integers in two's complement, floats as their "
            "64-bit pattern); a float's exponent and lowest set bit; joint over at most 3 columns")

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
        proof: it covers the inputs compared and the events of probability at least
        ``smallest_examined_probability`` only (``statement`` says so in a sentence).
    witness_power_loss : float
        The power on the one witness event, not a bound on epsilon: a loss this large on that
        event (at its observed probability) would have been flagged with probability at least
        0.8 (``inf``: the event is too rare for any loss on it to show).  It says nothing of
        other events: a loss of any size hidden in a rarer event goes unseen (see
        ``smallest_examined_probability``).  Called ``detectable_epsilon`` before (a
        deprecated alias remains).
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
    smallest_examined_probability : float
        What the budget could not examine: an output event whose probability is below this
        under every input compared, whatever loss it hides (an infinite one included), goes
        unseen with probability above ``alpha`` in the audit's stages of fresh outputs.  About
        80 / ``largest_stage`` at a claim of 1, 150 / ``largest_stage`` at 2
        (:func:`~dpdist.audit._statistics.smallest_examined_probability`); the events are cells
        of outputs (:mod:`dpdist.audit._cells`), so a leak inside a cell of real outputs is not
        separated at all.
    largest_stage : int
        Fresh outputs per input in the audit's largest stage.
    neighbouring : str
        The neighbouring relation the certificate is about: any two inputs of one user (a local
        randomizer), or the datasets compared (a whole-column mechanism, a central release).
    delta : float
        The delta of an (epsilon, delta) claim, subtracted from each lower bound.
    """

    name: str
    claimed_epsilon: float
    confidence: float
    certified_epsilon: float
    verdict: str
    witness_power_loss: float
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
    smallest_examined_probability: float = 1.0
    largest_stage: int = 0
    neighbouring: str = ""
    delta: float = 0.0

    @property
    def violates(self) -> bool:
        """Whether the audit certifies that the randomizer breaks its claim."""
        return self.verdict == "violates"

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    @property
    def detectable_epsilon(self) -> float:
        """Deprecated: :attr:`witness_power_loss` (the power on the witness event, never a bound on epsilon)."""
        warnings.warn(
            "AuditResult.detectable_epsilon is deprecated: it is the power on the witness event only, never a bound "
            "on epsilon; read witness_power_loss, and smallest_examined_probability for what the audit did not examine",
            DeprecationWarning, stacklevel=2,
        )
        return self.witness_power_loss

    @property
    def statement(self) -> str:
        """The verdict in one sentence, with what it covers and what the budget could not examine."""
        claim, level = f"{self.claimed_epsilon:.4g}", f"confidence {self.confidence:g}"
        if self.verdict == "violates":
            by = (f"certified epsilon >= {self.certified_epsilon:.4g}" if self.certified_epsilon > self.claimed_epsilon
                  else f"its stated channel's exact epsilon is {_number(self.channel_epsilon)}")
            return f"violates its claim of {claim}: {by} ({level})."
        if self.verdict == "channel mismatch":
            return (f"channel mismatch: its samples do not follow its stated channel (fit p-value "
                    f"{_number(self.fit_pvalue)}), so the channel's epsilon is not the randomizer's.")
        return (f"no violation of {claim} found among the output events of probability >= "
                f"{self.smallest_examined_probability:.2g} under some input ({_short(self.inputs)}) that the audit's "
                f"cells can express ({EXAMINED}); rarer events and other events were not examined (a loss hidden in "
                f"them, even an infinite one, goes unseen with probability above {self.alpha:.3g} in stages of up to "
                f"{self.largest_stage:,} fresh outputs per input; more samples examine rarer events). Not a proof that "
                f"the randomizer keeps its claim.")

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
            "smallest examined probability": self.smallest_examined_probability,
            "witness power loss": self.witness_power_loss,
            "channel epsilon": self.channel_epsilon,
            "fit p-value": self.fit_pvalue,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: ``schema``, the summary's fields, the stages, the witness, inputs, method, notes
        (``null`` for a missing or infinite number)."""
        return _safe({
            "schema": "dpdist.audit/2",
            "randomizer": self.name,
            "claimed_epsilon": self.claimed_epsilon,
            "confidence": self.confidence,
            "certified_epsilon": self.certified_epsilon,
            "verdict": self.verdict,
            "statement": self.statement,
            "smallest_examined_probability": self.smallest_examined_probability,
            "largest_stage": self.largest_stage,
            "witness_power_loss": self.witness_power_loss,
            "samples_per_input": self.samples_per_input,
            "samples": self.samples,
            "seconds": self.seconds,
            "neighbouring": self.neighbouring,
            "delta": self.delta,
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
        lines = [f"verdict: {self.statement}", f"inputs compared: {self.inputs}"]
        if self.neighbouring:
            lines.append(f"neighbouring: {self.neighbouring}" + (f"; claim (epsilon, {self.delta:g})" if self.delta else ""))
        if w:
            lines.append(
                f"witness: inputs {w['input']} vs {w['other_input']}, {w['event']}: "
                f"{w['count']}/{w['samples']} vs {w['other_count']}/{w['samples']} "
                f"(each bound at level {w['level']:.2g})"
            )
        if self.channel_epsilon is not None:
            lines.append(f"white box: stated channel's exact epsilon {_number(self.channel_epsilon)}, "
                         f"fit p-value {_number(self.fit_pvalue)}")
        if math.isfinite(self.witness_power_loss):
            lines.append(f"power on the witness event only (not a bound on epsilon): a loss of "
                         f"{self.witness_power_loss:.3g} on that event would have been flagged with probability >= 0.8")
        else:
            lines.append("power on the witness event only: it is too rare for any loss on it to be flagged at these samples")
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
    """Rows of a text table, one per audit: claimed, certified, confidence, outputs per input (the certificate's, the
    column docs/how-to/audit-a-randomizer.md's field table shows) and in all (every input, a stated channel's fit included), time,
    verdict, and the rarest output event the budget examined (``smallest_examined_probability``)."""
    header = ("randomizer", "claimed", "certified >=", "confidence", "outputs per input", "outputs (all)", "seconds",
              "verdict", "events examined")
    rows = [header] + [
        (r.name, f"{r.claimed_epsilon:.4g}", f"{r.certified_epsilon:.4g}", f"{r.confidence:g}",
         f"{r.samples_per_input:,}", f"{r.samples:,}",
         f"{r.seconds:.2f}", r.verdict, f"p >= {r.smallest_examined_probability:.2g}")
        for r in results
    ]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _short(inputs: str) -> str:
    """The inputs compared, in a clause (their first words when long, parentheses closed)."""
    if not inputs:
        return "the inputs compared"
    short = inputs if len(inputs) <= 60 else inputs.split(":")[0]
    return short + ")" * max(0, short.count("(") - short.count(")"))


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
