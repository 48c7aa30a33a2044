"""``dpdist submit --column`` to a campaign that runs in rounds: each row is one device answering one round.

A campaign created with ``--rounds`` (adaptive LDP quantiles, docs/explanation/adaptive-quantiles.md) asks each
user one question in one round only: its epsilon per user holds by parallel composition over disjoint
groups.  A CSV of one value per user runs the whole campaign:

1. every value is read and checked before anything is drawn, and the rows are split at random
   into the rounds in proportion to the rounds' sizes (:func:`split_rows`: a CSPRNG permutation cut
   into proportional shares): which round a row answers depends neither on its value nor on where
   it is in the file, nor on when this party submits.  One party's rows answering first cannot fill
   a round: each round gets its share of them, and waits for the other parties' shares (the split
   of the users "at random into rounds groups" the plan's guarantee and intervals assume);
2. the rounds are answered in order: when a row's round is open, the campaign's public config
   (``GET .../config``) gives the round's question, its campaign (``submit_to``) and ``room``, the
   reports it still takes; the round's share (at most ``room`` of it) is randomized once each under
   that round's config and sent to that round only, in batches of ``--batch-size``: never more than
   the room, so no batch is refused as larger than the room left;
3. rows whose round is not open yet wait for it (``--wait SECONDS``; without it the command stops and
   says which rows wait: running it again sends them once their round opens); rows whose round
   ended before they were sent answer no round (never another one); the run stops when every round's
   share is sent or over, or the campaign closes.

Each row is randomized once and sent to one round: a batch the service refuses (another submitter
filled the round first, ``campaign_full``; an admin advanced it, ``stale_round``) is not sent again to
another round, since the service may have read it: its rows count as answered.

Like ``--column`` to an ordinary campaign, the randomized batches are kept in a journal before they
are sent, here a directory of *parts* (the permutation and each round's share, then per part its round, its rows and its
batches): running the same command again after a failure resends every part as it is (the service
counts a batch id once) and goes on with the rounds no part answered.  The split keeps whose run it is (server,
campaign, plan, column, the data's SHA-256): a ``--journal`` of another run, or a damaged one, is refused naming the
option before anything is sent.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import Generator, Iterator

import numpy as np

from .._io._atomic import atomic_writer
from .._io._binary import read_header
from .._rng import secure_generator
from ..errors import InvalidParameterError, ServiceRefusedError
from .._wire._report_bound import protocol_of_answer, rows_per_body
from ._arguments import missing_cells
from ._deploy import data_reader
from ._submit_journal import check_journal_option, data_digest, journal_path, journal_records, write_journal

__all__ = ["submit_rounds"]

#: refused batches whose rows count as answered (the service may have read them): not sent to another round
SPENT = ("campaign_full", "stale_round")
#: config fetches that find the open round without room before the run stops (another process is advancing it)
FULL_FETCHES = 20
#: seconds between config fetches while rows wait for their round (--wait)
WAIT_POLL = 0.5


def submit_rounds(client, args, document: dict) -> Iterator[dict]:
    """The acknowledgements of ``args``'s column submitted to the rounds campaign ``document`` describes (its public
    config); notes on standard error (module docstring)."""
    _refuse_options(args)
    values = _checked_values(protocol_of_answer(args.campaign, document["config"]), args)
    plan, sizes = document["rounds"]["plan"], [int(size) for size in document["rounds"]["sizes"]]
    directory = (Path(args.journal) if args.journal else
                 journal_path(args.server, args.campaign, plan, args.column, args.data[0], None).with_suffix(".rounds"))
    if args.journal:
        check_journal_option(directory, directory=True)
    journal = _Journal(directory)
    identity = {"server": args.server.rstrip("/"), "campaign": args.campaign, "plan": plan, "column": args.column,
                "data": data_digest(args.data[0])}  # a journal answers for this run only (R45-2)
    order, shares = journal.split(values.size, sizes, getattr(args, "split_seed", None), identity)
    print(f"submit: campaign {args.campaign} runs in {plan['rounds']} rounds: each of the {values.size} row(s) is one "
          f"device answering one round, the rows split at random (CSPRNG) into the rounds in proportion to their sizes "
          f"{sizes}: {shares.tolist()} (parts kept in the journal {directory}).", file=sys.stderr)
    spent = 0
    for part in journal.parts():  # a run cut short: its parts are sent again as they are (counted once)
        sent, refused = yield from _send(client, part["campaign"], journal.batches(part["index"]))
        spent += refused
    done = {int(part["round"]) for part in journal.parts()}
    used = sum(part["stop"] - part["start"] for part in journal.parts())
    answered, refused, over = yield from _answer_rounds(client, args, journal, values, order, shares, done)
    waiting = {k: int(shares[k - 1]) for k in range(1, len(sizes) + 1) if k not in done and shares[k - 1] > 0}
    _say_where(args.campaign, client.config(args.campaign), values.size, used + answered, spent + refused, over, waiting)


def _refuse_options(args) -> None:
    """The options that do not apply to a campaign in rounds, refused naming the first given."""
    for option, given in (("--columns", args.columns is not None), ("--memo", args.memo is not None),
                          ("--budget-file", args.budget_file is not None)):
        if given:
            raise InvalidParameterError(
                f"The '{option}' option does not apply to campaign {args.campaign!r}, which runs in rounds: each row is "
                "one user answering one round (one value, one report; the plan's epsilon per user)."
            )


def _checked_values(protocol, args) -> np.ndarray:
    """Every value of the column, checked before anything is drawn (the bounds are every round's); notes said."""
    missing, (checked, read) = 0, data_reader(protocol, args.data[0], args.column, None, clip=args.clip)
    chunks = []
    for chunk, n_missing in read():
        prepared = checked(chunk)
        protocol._check_values(prepared)
        chunks.append(np.asarray(prepared, dtype=np.float64))
        missing += n_missing
    for note in missing_cells(args, missing, f"{args.data[0]}:{args.column}") + checked.notes():
        print(f"submit: note: {note}.", file=sys.stderr)
    return np.concatenate(chunks) if chunks else np.empty(0)


def _answer_rounds(client, args, journal: _Journal, values: np.ndarray, order: np.ndarray, shares: np.ndarray,
                   done: set[int]) -> Generator[dict, None, tuple[int, int, int]]:
    """Send each round's share once its round is open (rounds in ``done`` aside, which this adds to), waiting up to
    ``--wait``; the acknowledgements, then the rows sent, the rows of refused batches and the rows whose round was over."""
    offsets = np.concatenate([[0], np.cumsum(shares)]).astype(int)
    used, spent, over, empty = 0, 0, 0, 0
    deadline, waited = time.monotonic() + max(0.0, float(getattr(args, "wait", 0) or 0)), False
    while True:
        pending = [k for k in range(1, len(shares) + 1) if k not in done and shares[k - 1] > 0]
        if not pending:
            break
        document = client.config(args.campaign)
        rounds = document.get("rounds") or {}
        if not rounds:
            raise InvalidParameterError(f"Campaign {args.campaign!r} no longer runs in rounds; its rows were not sent.")
        if document.get("state") != "open" or rounds.get("round_state") not in ("open", "created"):
            break
        current, k = int(rounds["round"]), pending[0]
        if k < current:  # its round ended before these rows were sent: they answer no round (never another one)
            over += int(shares[k - 1])
            done.add(k)
            continue
        if k > current or rounds.get("round_state") != "open":  # their round is not open yet: wait for it
            if time.monotonic() >= deadline:
                break
            if not waited:
                print(f"submit: waiting for round {k} (round {current} is open with {rounds.get('room')} report(s) of "
                      f"room, for other devices) until --wait runs out.", file=sys.stderr)
                waited = True
            time.sleep(WAIT_POLL)
            continue
        room = int(rounds.get("room") or 0)
        if room == 0:  # full, and not yet advanced by the process that filled it
            empty += 1
            if empty > FULL_FETCHES:
                break
            time.sleep(0.25)
            continue
        empty = 0
        start = int(offsets[k - 1])
        stop = start + min(int(shares[k - 1]), room)
        part = _randomized_part(journal, document, k, order, values, start, stop, args.batch_size)
        print(f"submit: round {k} of {rounds['of']} ({document['submit_to']}): {stop - start} row(s), one "
              f"report each ({room} report(s) of room).", file=sys.stderr)
        done.add(k)
        used += stop - start
        sent, refused = yield from _send(client, part["campaign"], journal.batches(part["index"]))
        spent += refused
    return used, spent, over


def _randomized_part(journal: _Journal, document: dict, k: int, order: np.ndarray, values: np.ndarray, start: int,
                     stop: int, batch_size: int) -> dict:
    """Round ``k``'s rows ``order[start:stop]``, each randomized once under the round's config, journaled as a part."""
    round_protocol = protocol_of_answer(str(document.get("submit_to")), document["config"])
    # a round's config is an instruction too: a report its service's body cannot hold refused before anything is drawn,
    # and batches of at most what that body holds
    batch_size = rows_per_body(round_protocol, document, str(document.get("submit_to")), batch_size)
    # the share's rows leave in an order of their own (CSPRNG), never the split's: with --split-seed the split is
    # known to whoever knows the seed, and report i would be file row order[start + i] (its rank, in a sorted file)
    rows = secure_generator().permutation(order[start:stop])
    reports = round_protocol.privatize(values[rows], secure=True)
    return journal.add(k, document["submit_to"], document["config"], start, stop, round_protocol, reports, batch_size)


def split_rows(rows: int, sizes: list[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random split of ``rows`` rows into the rounds, in proportion to the rounds' ``sizes``.

    Returns ``(order, shares)``: round ``k`` (1-based) takes the rows ``order[o_k : o_k + shares[k-1]]``
    with ``o_k = sum(shares[:k-1])``.  ``shares`` are the rows' proportional shares ``rows * size_k / sum(sizes)``
    rounded by largest remainders (ties to the earlier round), and ``order`` a uniformly random permutation: every
    subset of the file of a round's share is equally likely to be that round's, whatever the values and
    wherever the rows are in the file.  A party holding many users' values thus gives every round a simple
    random sample of its users; over several parties each round's group is a stratified random sample of all
    of them (proportional allocation, Cochran 1977, Sampling Techniques, section 5.3), as the split of the
    users "at random into rounds groups" the protocol assumes (docs/explanation/adaptive-quantiles.md, "Disjoint groups").
    """
    sizes_array = np.asarray(sizes, dtype=np.int64)
    exact = rows * sizes_array / sizes_array.sum()
    shares = np.floor(exact).astype(np.int64)
    short = rows - int(shares.sum())
    if short:
        shares[np.argsort(-(exact - shares), kind="stable")[:short]] += 1
    return rng.permutation(rows), shares


def _send(client, campaign: str, batches) -> Generator[dict, None, tuple[int, int]]:
    """Send a part's batches to its round's campaign; ``(acknowledged, refused reports)`` (refused: see :data:`SPENT`)."""

    acknowledged = refused = 0
    for batch_id, body, count in batches:
        try:
            yield client.submit_body(campaign, batch_id, body)
            acknowledged += 1
        except ServiceRefusedError as error:
            if error.code not in SPENT:
                raise
            refused += count
            print(f"submit: note: {campaign} refused a batch of {count} report(s) ({error.code}): its rows count as "
                  "answered and are not sent to another round.", file=sys.stderr)
    return acknowledged, refused


def _say_where(campaign: str, document: dict, rows: int, used: int, spent: int, over: int,
               waiting: dict[int, int]) -> None:
    rounds = document.get("rounds") or {}
    last_over = rounds.get("round") == rounds.get("of") and rounds.get("round_state") == "closed"
    if document.get("state") == "closed" or last_over:
        where = f"campaign {campaign} is closed (its last round, {rounds.get('of')}, is over)"
    elif rounds.get("round_state") == "open":
        where = (f"round {rounds.get('round')} of {rounds.get('of')} is open and takes {rounds.get('room')} more "
                 "report(s) (other devices, or POST /api/campaigns/{id}/rounds/advance to close it now)")
    else:
        where = f"campaign {campaign} has no open round (state {document.get('state')!r})"
    unused = f"; {rows - used} row(s) not used" if rows > used else ""
    late = f" ({over} of them drawn for rounds that ended before they were sent)" if over else ""
    lost = f"; {spent} refused report(s) whose rows count as answered" if spent else ""
    print(f"submit: {used} of {rows} row(s) answered a round{unused}{late}{lost}; {where}.", file=sys.stderr)
    if waiting and document.get("state") == "open":
        listed = ", ".join(f"{count} for round {k}" for k, count in waiting.items())
        print(f"submit: {sum(waiting.values())} row(s) wait for their round ({listed}): run the same command again "
              "(or with --wait SECONDS) once it is open; the journal keeps which round each row answers.", file=sys.stderr)


class _Journal:
    """A directory of ``order.npy`` (the rows' CSPRNG permutation) and parts ``part-<i>.json`` (round, campaign, config,
    rows ``order[start:stop]``) with their batches in ``part-<i>.bin`` (binary records, each under its batch id).

    A part's batches are written before its description, and both before anything is sent: a part without its
    description was never sent, and its rows are given to the next part.
    """

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)

    def split(self, rows: int, sizes: list[int], seed: int | None = None,
              identity: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The rows' permutation and how many of them each round takes (:func:`split_rows`), kept in the journal.

        ``identity`` (server, campaign, plan, column, the data's digest) is kept with the split: a journal of another
        run (another campaign, other data of as many rows) is refused, naming ``--journal``, before anything is sent.
        """
        path, shares_path = self.directory / "order.npy", self.directory / "split.json"
        if path.exists():
            order = self._load(lambda: np.load(path), path)
            if order.ndim != 1 or order.size != rows or not np.array_equal(np.sort(order), np.arange(rows)):
                raise InvalidParameterError(f"The '--journal' option names {str(self.directory)!r}, whose split is of "
                                            f"{order.size} rows, not a permutation of the data's {rows}: pass another "
                                            "--journal for other data.")
            if not shares_path.exists():
                raise InvalidParameterError(f"The journal {self.directory} was written by an earlier dpdist (rows in "
                                            "file order, not split at random into rounds): pass another --journal.")
            kept = self._load(lambda: json.loads(shares_path.read_text()), shares_path)
            shares = self._load(lambda: np.asarray(kept["shares"], dtype=np.int64), shares_path)
            if shares.ndim != 1 or shares.size != len(sizes) or np.any(shares < 0) or int(shares.sum()) != rows:
                raise InvalidParameterError(f"The '--journal' option names {str(self.directory)!r}, whose split "
                                            f"{kept.get('shares')!r:.100} is not one of {rows} rows into {len(sizes)} "
                                            "rounds: pass another --journal.")
            if identity is not None and kept.get("identity", identity) != identity:  # kept: none before R45-2
                theirs = kept["identity"]
                differs = [key for key in identity if theirs.get(key) != identity[key]]
                raise InvalidParameterError(f"The '--journal' option names {str(self.directory)!r}, the journal of "
                                            f"another run (its {', '.join(differs)} differ: campaign "
                                            f"{theirs.get('campaign')!r}); nothing was sent: pass another --journal.")
            return order, shares
        order, shares = split_rows(rows, sizes, secure_generator() if seed is None else np.random.default_rng(seed))
        with atomic_writer(shares_path, private=True) as handle:
            handle.write(json.dumps({"sizes": sizes, "shares": shares.tolist(),
                                     **({} if identity is None else {"identity": identity})}, sort_keys=True).encode())
        with atomic_writer(path, private=True) as handle:  # last: a journal with an order has its split
            np.save(handle, order)
        return order, shares

    def parts(self) -> list[dict]:
        found = []
        for path in sorted(self.directory.glob("part-*.json")):
            part = self._load(lambda: json.loads(path.read_text()), path)
            if not (isinstance(part, dict) and {"index", "round", "campaign", "start", "stop"} <= part.keys()):
                raise InvalidParameterError(f"The '--journal' option names {str(self.directory)!r}, whose {path.name} "
                                            "is not a part's description: pass another --journal.")
            found.append(part)
        return found

    def _load(self, read, path: Path):
        """``read()``, a damaged file of the journal refused naming ``--journal`` (R45-4), not an internal error."""
        try:
            return read()
        except (OSError, ValueError, KeyError, TypeError, EOFError) as error:
            raise InvalidParameterError(f"The '--journal' option names {str(self.directory)!r}, whose {path.name} "
                                        f"cannot be read ({type(error).__name__}: {error!s:.100}): pass another "
                                        "--journal.") from None

    def add(self, round_number: int, campaign: str, config: dict, start: int, stop: int, protocol, reports: np.ndarray,
            batch_size: int) -> dict:

        index = len(self.parts())
        write_journal(self.directory / f"part-{index:05d}.bin", protocol,
                      (reports[at : at + batch_size] for at in range(0, len(reports), batch_size)))
        part = {"index": index, "round": round_number, "campaign": campaign, "config": config, "start": start, "stop": stop}
        with atomic_writer(self.directory / f"part-{index:05d}.json", private=True) as handle:
            handle.write(json.dumps(part, sort_keys=True).encode())
        return part

    def batches(self, index: int) -> Iterator[tuple[str, bytes, int]]:
        """``(batch id, body, reports)`` of a part's batches."""


        for batch_id, body in journal_records(self.directory / f"part-{index:05d}.bin"):
            header = read_header(io.BytesIO(body), str(self.directory))
            assert header is not None, "the journal's records each hold a header"
            yield batch_id, body, int(header["shape"][0])
