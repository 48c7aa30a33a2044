"""The page check: a reproduction page (``docs/reproductions/NAME.md``) says what the code computes.

Three checks, each returning the reasons the page is stale (an empty list: it is not):

* :func:`rederive_block` (cheap): rebuilds the run's summary from the cells recorded beside the page
  (:mod:`._pagerecord`), re-judges every claim with the code's checks and verdict rule, renders the
  generated block again (:func:`._pages.render_block`) and compares it with the page's, line by line:
  a verdict, a count, a number of the claims table or of the header that differs is named;
* :func:`prose_numbers` (cheap): every number the hand-written text quotes must be one of the generated
  block's (code, references such as "Fig. 5" or "sec. VI-B" and links apart: :data:`REFERENCE`);
* :func:`prose_bindings` (cheap): every figure, verdict and claim number the text binds to the place of the
  block it states (:mod:`._prosebind`) must be what that place gives, and every verdict word, claim
  reference and number of the text must be bound, or the number be a setting of the block's "What is run";
* :func:`recompute_sample` (costly: seconds of cells): recomputes the sample of
  :func:`._pages.choose_sample` (every method label on every dataset and at every number of users it
  runs at), at the current commit and compares every metric with the recorded value, so a change to a method's code shows when it
  moves the method's numbers at the sampled parameters of any dataset or size (:func:`._pages.sample_scope`).

``tests/experiments/test_pagecheck.py`` runs them on every page.
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path

from ._claims import RULE_VERSION, evaluate_claims
from ._pagerecord import cell_values, raw_from_record, read_record, record_digest, record_path
from ._prosebind import CODE, NUMBER, REFERENCE, bound_values
from ._pages import SAMPLE_TOLERANCE, choose_sample, render_block, split_page
from ._registry import get_spec
from ._runner import execute_cell
from ._spec import ExperimentSpec
from ._table import summarize

__all__ = ["rederive_block", "prose_numbers", "prose_bindings", "recompute_sample", "page_spec", "NUMBER", "REFERENCE"]

def page_spec(facts: dict) -> ExperimentSpec:
    """The spec of a page's run, from its record's facts (name, quick or full, repeats, root seed)."""
    return get_spec(facts["spec"]).with_options(quick=facts["run"] == "quick", repeats=facts["repeats"],
                                                seed=facts["seed"])


def rederive_block(page: str | Path) -> list[str]:
    """Why the generated block of ``page`` is not what its recorded cells and the code give (module docstring)."""
    page = Path(page)
    parts = split_page(page.read_text())
    if parts is None:
        return ["no generated block"]
    record = record_path(page)
    if not record.exists():
        return [f"no recorded cells ({record.name} beside the page)"]
    facts, settings = read_record(record)
    reasons = []
    if facts["rule_version"] != RULE_VERSION:
        reasons.append(f"judged under verdict rule version {facts['rule_version']}, the code's is {RULE_VERSION}")
    spec = page_spec(facts)
    raw, problems = raw_from_record(spec, settings)
    if problems:
        return reasons + [f"the spec's cells are not the recorded ones ({len(problems)} differences; first: "
                          f"{problems[0]})"]
    summary = summarize(raw, ["dataset", "method", *spec.parameter_names(), "metric"])
    claims = evaluate_claims(spec.claims, summary)
    expected = render_block(spec, facts, claims, summary, record.name, record_digest(record))
    return reasons + _differences(parts[1], expected)


def _differences(found: str, expected: str, most: int = 5) -> list[str]:
    """Where ``found`` differs from ``expected`` (at most ``most`` places), a claims-table row named by its
    claim's number, each with the text around the first differing character."""
    reasons = []
    page_lines, expected_lines = found.splitlines(), expected.splitlines()
    matcher = difflib.SequenceMatcher(None, page_lines, expected_lines, autojunk=False)
    for tag, first, last, start, stop in matcher.get_opcodes():
        if tag == "equal":
            continue
        old, new = " / ".join(page_lines[first:last]), " / ".join(expected_lines[start:stop])
        match = re.match(r"^\| (\d+) \| ", old or new)
        where = f"claim #{match.group(1)}" if match else f"line {first + 1} of the block"
        at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        reasons.append(f"{where}: the page has {_around(old, at)}, the recorded cells give {_around(new, at)}")
        if len(reasons) >= most:
            break
    return reasons


def _around(text: str, at: int, width: int = 70) -> str:
    if not text:
        return "nothing"
    start = max(at - width, 0)
    return repr(("..." if start else "") + text[start:at + width] + ("..." if at + width < len(text) else ""))


def prose_numbers(page: str | Path) -> list[str]:
    """The numbers of ``page``'s hand-written text that are not numbers of its generated block, each with
    its line (code spans and blocks, HTML comments, link targets and references to figures, sections,
    equations, claims, issues ... are not read: :data:`REFERENCE`)."""
    text = Path(page).read_text()
    parts = split_page(text)
    if parts is None:
        return ["no generated block"]
    head, block, tail = parts
    known = {_value(token) for token in NUMBER.findall(block)}
    reasons = []
    offset = head.count("\n") + block.count("\n")
    for first, prose in ((0, head), (offset, tail)):
        for number, line in _prose_numbers(prose):
            if _value(number) not in known:
                reasons.append(f"line {first + line}: {number}")
    return reasons


def prose_bindings(page: str | Path) -> list[str]:
    """Why the figures, verdicts and claim numbers ``page``'s hand-written text binds are not what its generated
    block gives, and its verdict words and claim references without a binding (:mod:`._prosebind`)."""
    parts = split_page(Path(page).read_text())
    if parts is None:
        return ["no generated block"]
    head, block, tail = parts
    return bound_values(head, block) + bound_values(tail, block, head.count("\n") + block.count("\n") + 1)


def _prose_numbers(prose: str) -> list[tuple[str, int]]:
    """``(number, line)`` of every number of ``prose`` outside code, comments, links and references."""
    blanked = CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), prose)
    blanked = REFERENCE.sub(lambda m: " " * len(m.group()), blanked)
    return [(match.group(), blanked.count("\n", 0, match.start()) + 1) for match in NUMBER.finditer(blanked)]


def _value(token: str) -> float:
    return float(token.replace(",", ""))


def recompute_sample(page: str | Path, labels: tuple[str, ...] | None = None) -> list[str]:
    """Recompute the sample of ``page``'s run (:func:`._pages.choose_sample`; only the cells of the method
    ``labels`` when given) at the current commit; the metrics that moved from the recorded values by more
    than :data:`._pages.SAMPLE_TOLERANCE` (relative)."""
    record = record_path(page)
    if not record.exists():
        return [f"no recorded cells ({record.name} beside the page)"]
    facts, settings = read_record(record)
    spec = page_spec(facts)
    parameters = spec.parameter_names()
    reasons = []
    for cell in choose_sample(spec):
        if labels is not None and cell.method.label not in labels:
            continue
        recorded = cell_values(cell, settings, parameters)
        where = f"{cell.method.label} on {cell.dataset.key} {cell.param_dict} repeat {cell.repeat}"
        if recorded is None:
            reasons.append(f"{where}: not in the record")
            continue
        got = execute_cell(cell, spec.seed, spec.metrics)["metrics"]
        for metric in dict.fromkeys([*recorded, *got]):
            expected, value = recorded.get(metric), got.get(metric)
            if not _same(expected, value):
                reasons.append(f"{where}: {metric} was {expected!r} in the run, is {value!r} now")
    return reasons


def _same(expected: float | None, value: float | None) -> bool:
    if expected is None or value is None:
        return expected is value
    if math.isnan(expected) or math.isnan(value):
        return math.isnan(expected) and math.isnan(value)
    return math.isclose(value, expected, rel_tol=SAMPLE_TOLERANCE, abs_tol=1e-300)
