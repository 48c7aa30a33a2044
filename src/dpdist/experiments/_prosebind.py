"""Bound values of a reproduction page's prose: a figure, verdict or claim number the hand-written text
states is tied to the one place of the generated block it states, and the page check compares it with that.

The text writes the address of what it states in an HTML comment right after it (invisible on the
rendered page)::

    claim 67<!--=claim KRR-IIW-G achieves the best denoising at every d (flights3m)-->
    is **underpowered**<!--=outcome KRR-IIW-G achieves the best denoising at every d (flights3m)-->
    in 44<!--=claim KRR-IIW-G achieves the best denoising at every d (flights3m) @ by the means in -->

Addresses (a FRAGMENT names the one claim whose text, or text and data ``TEXT | DATA``, contains it, or the one row of "Numbers the text
quotes" that contains it; a CONTEXT is text that occurs once where it is looked for):

``claim FRAGMENT``
    the claim's number (what "claim 67", "#67" or "(67:" states);
``outcome FRAGMENT[; FRAGMENT ...]``
    the claim's verdict ("**underpowered**", "do not hold" for several claims with one verdict);
``claim FRAGMENT @ CONTEXT``
    the number right after CONTEXT in the claim's row of the claims table (its numbers, its power);
``quote FRAGMENT``
    the mean of that row of "Numbers the text quotes";
``block CONTEXT``
    the number right after CONTEXT in the generated block;
``compare ADDRESS ; ADDRESS``
    the order of the two numbers the addresses give (an address may be a literal number: a ratio's 1), bound to the comparative word before it ("below", "above",
    "lower", "higher", "fewer", "more", "smaller", "larger", "better" and "worse" of errors: lower is better;
    :data:`COMPARATIVES`): "A is below B" states that the first is the smaller.

A bound figure is read with its sign (a minus after a space, a bracket or "=": ``t = -3.88`` is not ``3.88``; a dash
after a digit is a range's), and a count may be written as a word ("two<!--=...-->", :data:`NUMBER_WORDS`).

:func:`bound_values` checks every binding against the block, and names every verdict word (but a verdict's
name in quotes, ``"does not hold"``) and claim reference of the text that has none, and every other number
that is neither bound nor a :data:`SETTING` of the block's "What is run" (numbers of references, of formulas
and of code are names: :data:`REFERENCE`, :data:`NOT_QUANTITY`): a changed figure, verdict or claim number
fails by its address even where it equals another number of the block, and no number is free.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["BINDING", "VERDICT", "COMPARATIVES", "NUMBER_WORDS", "CLAIM_REFERENCE", "CODE", "NUMBER", "REFERENCE", "SETTING", "NOT_QUANTITY", "bound_values", "claim_name", "claim_rows", "resolve"]

#: A binding: an HTML comment ``<!--=ADDRESS-->`` right after the text it binds.
BINDING = re.compile(r"<!--=(.*?)-->", re.S)
#: A verdict word of the text (docs/explanation/verdicts.md's outcomes and their plurals).
VERDICT = re.compile(r"\b(?:holds and understated|does not hold|do not hold|holds|hold|underpowered|inconclusive|"
                     r"understated)\b")
#: A number as the page check reads it: digits with thousands separators, a decimal part and an exponent;
#: not part of a word ("W1", "fig2", a commit `964190c`, "2a"), except a ratio's trailing "x" ("12x"), nor the
#: decimals of another number.
NUMBER = re.compile(r"(?<!\w)(?<!\d\.)(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![0-9A-Za-wyz_])")
_REFERENCE_ITEM = r"(?:[0-9IVX]+[a-z]?(?:[.\-–][0-9IVXa-z]+)*(?:\([a-z](?:[-–][a-z])?\))?)"
#: A reference to the paper or the project, whose numbers are names, not quantities: "Fig. 2a-c, 11",
#: "sec. VI-B", "eq. 92", "Theorem 1", "Alg. 2", "paper 002", "item 5", "claim 13", "#29".
REFERENCE = re.compile(
    r"(?:\b(?:Figs?\.|Figures?|[Ss]ec(?:tions?|s?\.)|[Ee]qs?\.|[Ee]quations?|Alg\.|Algorithms?|Tables?|Theorems?|"
    r"Thm\.|Lemmas?|Prop(?:\.|ositions?)|Corollar(?:y|ies)|Def(?:\.|initions?)|Examples?|Remarks?|App(?:\.|endix)|"
    r"[Pp]apers?|issues?|items?|[Ss]teps?|claims?|Differences?|figures|rule version)\s*|#)"
    + _REFERENCE_ITEM + r"(?:\s*(?:,|and|&|to|/|[-–])\s*" + _REFERENCE_ITEM + r")*")
_NUM = r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
#: Numbers that are not quantities: a list item's number, a constant of a formula ("n^(-1/2)", "10^6", "2ᵐ", "2β",
#: "(1−λ)", "+1", the 1 of "1/16"), an equation's number ("mechanism (2)") and the year of a citation ("Xiong et al., AAAI 2021").
NOT_QUANTITY = re.compile(r"^[ \t]*\d+\.(?= )|\d+(?=\^)|(?<![\w.])1(?=/\d)|\^\(?[-−]?\d+(?:/\d+)?\)?|\d+(?=[ᵃ-ᵐⁿⁱα-ω])|(?<=[+−])(?<![eE][+−])\d+|(?<=[A-Za-z²)]/)\d+|(?<=− )\d+|\d+(?=[+−]\w)"
                          r"|(?<=mechanism \()\d+(?=\))|et al\.,[^)\n]*?\d{4}|(?:S&P|Jan–Jun|times of) (?:19|20)\d\d\b", re.M)
#: A number stated as a setting of the run: a parameter's value or range ("ε = 0.5", "m = 5-8", "k ≥ 1000"), a
#: distribution's ("Geo(0.8)", "N(0, 1)"), the data's bounds ("[0, 1]") or a size with its unit ("1024 buckets",
#: "32 bins", "5-minute", "a 256-point grid", "4-ary", "branching 4"); each must be a number of the block's "What is run".
SETTING = re.compile(rf"(?<!\w)(?:ε|eps|epsilon|δ|delta|n|m|k|d|s|J|h|B)\s*(?:=|<|>|≤|≥)\s*{_NUM}(?:\s*(?:[-–]|to|\.\.)\s*{_NUM})?"
                     rf"|\b[A-Z][a-z]*\({_NUM}(?:,\s*{_NUM})*\s*\)|\[{_NUM}, {_NUM}\]|\bbranching {_NUM}"
                     rf"|(?<![\w.,-]){_NUM}[-\s](?:minute|buckets?|bins|point|ary|users|items|leaves)\b")
_BOUND = r"\d+(?:<!--=.*?-->)?"
#: A reference to claims by number, each number with its binding if it has one: "claim 13", "claims 2-5",
#: "claims 19, 43 and 67", "#29".
CLAIM_REFERENCE = re.compile(rf"\b[Cc]laims?\s+{_BOUND}(?:\s*(?:,|and|-|–|to)\s*{_BOUND})*|(?<![\w&])#{_BOUND}", re.S)
#: What the number check does not read: code spans and blocks, HTML comments (bindings included), link targets.
CODE = re.compile(r"```.*?```|`[^`\n]*`|<!--.*?-->|\]\([^)]*\)", re.S)
_CODE_BUT_BINDINGS = re.compile(r"```.*?```|`[^`\n]*`|<!--(?!=).*?-->|\]\([^)]*\)", re.S)
_NUMBER_AT_END = re.compile(r"(?:(?:(?<=[\s(\[=])|^)[-−])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
#: Counts the text may write as words and bind as numbers.
NUMBER_WORDS = {word: value for value, word in enumerate(
    "none one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())} | {"no": 0, "zero": 0}
_WORD_AT_END = re.compile(r"\b(?:" + "|".join(NUMBER_WORDS) + r")$", re.I)
#: The comparative words a ``compare`` binding ties, and the order each states of the first number to the second.
COMPARATIVES = {"below": "<", "under": "<", "lower": "<", "less": "<", "fewer": "<", "smaller": "<", "better": "<",
                "above": ">", "over": ">", "higher": ">", "more": ">", "larger": ">", "greater": ">", "worse": ">",
                "beyond": ">", "equal": "="}
_COMPARATIVE_AT_END = re.compile(r"\b(?:" + "|".join(COMPARATIVES) + r")$", re.I)
_NUMBER_AT_START = re.compile(r"\s*(-?(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_ROW = re.compile(r"^\| (\d+) \| ")
_QUOTES = "### Numbers the text quotes"
_UNESCAPED_BAR = re.compile(r"(?<!\\) \| ")


@functools.lru_cache(maxsize=4)
def claim_rows(block: str) -> dict[int, list[str]]:
    """``{number: columns}`` of the claims table of a generated block (claim, data, figure, outcome, decides,
    numbers after the number; ``\\|`` unescaped; cached: not to be changed)."""
    rows = {}
    for line in block.splitlines():
        match = _ROW.match(line)
        if match:
            columns = [column.replace("\\|", "|") for column in _UNESCAPED_BAR.split(line.strip("| "))]
            rows[int(match.group(1))] = columns[1:]
    return rows


def _quote_rows(block: str) -> list[list[str]]:
    start = block.find(_QUOTES)
    if start < 0:
        return []
    rows = []
    for line in block[start:].splitlines()[4:]:
        if not line.startswith("| "):
            break
        rows.append([column.replace("\\|", "|") for column in _UNESCAPED_BAR.split(line.strip("| "))])
    return rows


def _one(found: list[Any], what: str) -> Any:
    if len(found) != 1:
        raise LookupError(f"{what} matches {len(found)} places, not one")
    return found[0]


def _claim(rows: dict[int, list[str]], fragment: str) -> tuple[int, list[str]]:
    return _one([(number, columns) for number, columns in rows.items() if fragment in claim_name(columns)],
                f"the claim fragment {fragment!r}")


def claim_name(columns: list[str]) -> str:
    """What a claim fragment is looked for in: the claim's text and its data (claims of one text on several
    stand-ins differ by their data), ``TEXT | DATA``."""
    return f"{columns[0]} | {columns[1]}"


def _after(text: str, context: str, where: str) -> str:
    """The number right after ``context`` in ``text`` (``context`` once in it)."""
    at = _one([match.end() for match in re.finditer(re.escape(context), text)], f"{context!r} in {where}")
    match = _NUMBER_AT_START.match(text, at)
    if match is None:
        raise LookupError(f"no number right after {context!r} in {where}")
    return match.group(1)


def resolve(address: str, block: str) -> str:
    """The text the generated ``block`` gives for a binding's ``address`` (module docstring); LookupError
    naming why when it gives none."""
    kind, _, rest = address.strip().partition(" ")
    rest = " ".join(rest.split())
    if kind == "block":
        return _after(block, rest, "the block")
    if kind == "quote":
        row = _one([row for row in _quote_rows(block) if rest in " | ".join(row)], f"the quote fragment {rest!r}")
        return row[4]
    if kind == "compare":
        first, _, second = rest.partition(" ; ")
        if not second:
            raise LookupError(f"a comparison needs two addresses joined by ' ; ', not {rest!r}")
        a, b = (float(part) if _is_number(part) else float(resolve(part, block).replace(",", ""))
                for part in (first.strip(), second.strip()))
        return "<" if a < b else ">" if a > b else "="
    rows = claim_rows(block)
    if kind == "outcome":
        outcomes = {_verdict(_claim(rows, fragment.strip())[1][3]) for fragment in rest.split(";")}
        return _one(sorted(outcomes), f"the verdicts of {rest!r}")
    if kind == "claim":
        fragment, at, context = rest.partition(" @ ")
        number, columns = _claim(rows, fragment)
        return _after(" | ".join(columns), context, f"the row of claim {number}") if at else str(number)
    raise LookupError(f"unknown address kind {kind!r} (claim, outcome, quote, block or compare)")


def _is_number(text: str) -> bool:
    """A literal number (a constant a comparison states, such as a ratio's 1)."""
    return re.fullmatch(r"-?\d+(?:\.\d+)?", text) is not None


def _verdict(text: str) -> str:
    """A verdict in one spelling: no bold, no "(quick run)", singular ("do not hold" -> "does not hold")."""
    text = " ".join(text.replace("*", "").replace("(quick run)", "").split()).lower()
    return {"do not hold": "does not hold", "hold": "holds"}.get(text, text)


def _bound_text(prose: str, end: int, kind: str) -> tuple[int, str]:
    """``(start, text)`` of what the binding at ``end`` binds: a verdict (bold or plain) for ``outcome``,
    else the number right before it (read in the 200 characters before it: a search to the text's start
    for every binding costs seconds on a long page)."""
    offset = max(end - 200, 0)
    before = prose[offset:end]
    if kind == "outcome":
        if before.endswith("**"):
            start = before.rindex("**", 0, len(before) - 2)
            return offset + start, before[start:]
        match = re.search(r"(?:holds and understated|does not hold|do not hold|holds|hold|underpowered|"
                          r"inconclusive)$", before)
    elif kind == "compare":
        match = _COMPARATIVE_AT_END.search(before)
    else:
        match = _NUMBER_AT_END.search(before) or _WORD_AT_END.search(before)
    if match is None:
        return end, ""
    return offset + match.start(), match.group()


def _same(stated: str, given: str, kind: str) -> bool:
    if kind == "outcome":
        return _verdict(stated) == _verdict(given)
    if kind == "compare":
        return COMPARATIVES.get(stated.lower()) == given
    try:
        return _stated_value(stated) == float(given.replace(",", ""))
    except ValueError:
        return False


def _stated_value(stated: str) -> float:
    """A bound figure as a number: its sign (``-`` or ``−``) kept, a count in words as its number."""
    word = NUMBER_WORDS.get(stated.lower())
    return float(word) if word is not None else float(stated.replace(",", "").replace("−", "-"))


def bound_values(prose: str, block: str, first_line: int = 1) -> list[str]:
    """Why the bindings of ``prose`` are not what ``block`` gives: a binding whose text is not what its address
    gives, or whose address gives nothing, and a verdict word or claim number without a binding, each with
    its line (``first_line``: the line of ``prose``'s first)."""
    reasons, spans = [], []
    for match in BINDING.finditer(prose):
        address = " ".join(match.group(1).split())
        kind = address.partition(" ")[0]
        start, stated = _bound_text(prose, match.start(), kind)
        line = first_line + prose.count("\n", 0, match.start())
        spans.append((start, match.end()))
        try:
            given = resolve(address, block)
        except LookupError as error:
            reasons.append(f"line {line}: {stated or '(nothing)'} <!--={address}-->: {error}")
            continue
        if not stated or not _same(stated, given, kind):
            reasons.append(f"line {line}: the text states {stated or '(nothing)'!r}, {address!r} gives {given!r}")
    return reasons + _unbound(prose, spans, first_line) + _free_numbers(prose, spans, block, first_line)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    characters = list(text)
    for start, end in spans:
        characters[start:end] = re.sub(r"[^\n]", " ", text[start:end])
    return "".join(characters)


def _unbound(prose: str, spans: list[tuple[int, int]], first_line: int) -> list[str]:
    """The verdict words and the claim numbers of ``prose`` (outside code, comments and links) without a
    binding; ``spans`` are the bound texts and their bindings."""
    text = _blank(prose, [match.span() for match in _CODE_BUT_BINDINGS.finditer(prose)])
    text = BINDING.sub(lambda m: "<!--=" + re.sub(r"[^\n]", " ", m.group(1)) + "-->", text)  # addresses unread
    reasons = []
    for match in VERDICT.finditer(_blank(text, spans)):
        if text[match.start() - 1:match.start()] == '"' == text[match.end():match.end() + 1]:
            continue  # "does not hold" in quotes names a verdict, it does not state one
        reasons.append(f"line {first_line + text.count(chr(10), 0, match.start())}: a verdict word without a "
                       f"binding: {match.group()!r}")
    for match in CLAIM_REFERENCE.finditer(text):
        for number in re.finditer(r"<!--=.*?-->|\d+(?!\d)(?!<!--=)", match.group(), re.S):
            if number.group().startswith("<!--"):
                continue
            reasons.append(f"line {first_line + text.count(chr(10), 0, match.start())}: a claim reference without "
                           f"a binding: {number.group()!r} in {' '.join(BINDING.sub('', match.group()).split())!r}")
    return reasons


def _free_numbers(prose: str, spans: list[tuple[int, int]], block: str, first_line: int) -> list[str]:
    """The numbers of ``prose`` (outside code, comments, links, references and :data:`NOT_QUANTITY`) neither
    bound (``spans``) nor a :data:`SETTING` the block's "What is run" configures (:func:`_configured`)."""
    start = block.find("### What is run\n")
    configuration = block[start:block.find("\n### ", start)] if start >= 0 else ""
    text = _blank(prose, [match.span() for match in CODE.finditer(prose)])
    text = _blank(text, [match.span() for pattern in (REFERENCE, NOT_QUANTITY) for match in pattern.finditer(text)])
    reasons, settings = [], []
    for match in SETTING.finditer(text):
        free = [number for number in NUMBER.finditer(text, match.start(), match.end()) if not _within(number, spans)]
        settings += [number.span() for number in free]
        allowed = _configured(configuration, match.group())
        if any(_value(number.group()) not in allowed for number in free):
            reasons.append(f"line {first_line + text.count(chr(10), 0, match.start())}: a setting that is not "
                           f"one of the run's (its \"What is run\"): {match.group()!r}")
    for number in NUMBER.finditer(_blank(text, settings)):
        if not _within(number, spans):
            reasons.append(f"line {first_line + text.count(chr(10), 0, number.start())}: a number without a "
                           f"binding: {number.group()!r} in {_line_at(prose, number.start())!r}")
    return reasons


#: the sweep parameters a setting's symbol names
_SWEPT = {"ε": "epsilon", "eps": "epsilon", "δ": "delta", "J": "levels", "m": "degree"}


def _configured(configuration: str, setting: str) -> set[float]:
    """The values a ``setting`` may state: those its parameter takes in the sweeps of the block's "What is
    run" (``configuration``; ``epsilon in {0.5, 1.0}``) when it is swept, else every number of it."""
    symbol = re.split(r"\W", setting, maxsplit=1)[0]  # the word it starts with (empty if none)
    swept = [values for name, values in re.findall(r"\b(\w+) in \{([^}]*)\}", configuration)
             if name in (symbol, _SWEPT.get(symbol))]
    return {_value(token) for token in NUMBER.findall(" ".join(swept) if swept else configuration)}


def _within(match: re.Match, spans: list[tuple[int, int]]) -> bool:
    return any(start <= match.start() and match.end() <= end for start, end in spans)


def _value(token: str) -> float:
    return float(token.replace(",", ""))


def _line_at(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start:len(text) if end < 0 else end][max(0, at - start - 40):at - start + 40]
