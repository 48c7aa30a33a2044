"""Three million US flights of 2001 (npm ``vega-datasets`` 3.2.1), at the scale of the papers' Taxi data.

``data/flights-3m.parquet`` of the npm package ``vega-datasets`` 3.2.1 (git blob
``9c4e0b48``, 13.5 MB) holds 3,000,000 non-cancelled US domestic flights from the US
DOT Bureau of Transportation Statistics (BTS) On-Time Performance data, actual departures
from 2001-01-01 00:01 to 2001-07-01 00:00, with columns ``date`` (actual departure
date-time = scheduled departure + departure delay, to the minute), ``delay`` (arrival
delay), ``distance`` (miles), ``origin`` and ``destination``.

Two datasets are read from it:

``flights3m-departure``
    Time of day of ``date`` in minutes after midnight, 0 .. 1439, bounds [0, 1440]: the
    meaning and scale of ``flights-departure`` (328,521 NYC flights) at 9x its size, for
    the papers' NYC Taxi pick-up times (2.2-8.8 million).  The resolution is one minute,
    but departures on time pile up on the scheduled times, mostly multiples of 5 minutes:
    the 288 minutes ``= 0 mod 5`` hold 32.6% of the flights instead of 20%.  Equal-width
    bins alias this grid unless each bin holds the same number of multiples of 5, i.e.
    unless 1440 / d is a multiple of 5 (d = 288, 144, 96, 48, 32, 16, ...).  With d = 1440
    (one-minute bins) the histogram shows the spikes themselves; d = 1000 or 1024 puts 2
    or 1 integer minutes and 0 or 1 multiple of 5 in a bin, an artificial saw-tooth.
``flights3m-distance``
    Flight distance in miles, 21 .. 4962, bounds [0, 5000]: a spiky distribution on the
    1,109 distinct route lengths.

The file is found by :func:`~dpdist.datasets.npm.npm_package_directory` (install it with
``npm install --no-save --prefix ~/.cache/dpdist/npm vega-datasets@3.2.1``), parsed once
with pyarrow and cached as ``.npy`` (measured on 2 shared cores: first load of
``flights3m-departure`` 1.7 s, most of it pyarrow's first Parquet read; a cached load
0.01 s).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..errors import DatasetUnavailableError
from ._dataset import Dataset, register
from .npm import cached_column, npm_package_directory

__all__ = ["VEGA_DATASETS_VERSION", "ROWS"]

VEGA_DATASETS_VERSION = "3.2.1"
ROWS = 3_000_000
_FILE = Path("data") / "flights-3m.parquet"
_MINUTE_US = 60_000_000  # microseconds in a minute (the file's timestamps are timestamp[us])

_LICENSE = (
    "US DOT BTS On-Time Performance data, a US federal government work (17 U.S.C. 105, no US copyright); "
    "vega-datasets' datapackage.json lists it as 'other-open' (terms not explicitly specified); "
    "package code BSD-3-Clause"
)


def _read_column(path: Path, column: str):
    try:
        import pyarrow.parquet as pq  # lazy: optional extra (pyarrow)
    except ImportError:  # pragma: no cover - pyarrow is part of the data extra
        raise DatasetUnavailableError(
            "Reading flights-3m.parquet needs the package 'pyarrow'. Install it with: pip install 'dpdist[data]'."
        ) from None
    return pq.read_table(path, columns=[column]).column(column)


def _parse_departure(path: Path) -> np.ndarray:
    """Minutes after midnight (int16, 0 .. 1439) of the ``date`` column (timestamp[us])."""
    import pyarrow as pa  # lazy: optional extra (pyarrow)

    micros = _read_column(path, "date").cast(pa.int64()).to_numpy()
    return ((micros // _MINUTE_US) % 1440).astype(np.int16)


def _parse_distance(path: Path) -> np.ndarray:
    """Miles (int16, 21 .. 4962) of the ``distance`` column."""
    return _read_column(path, "distance").to_numpy().astype(np.int16)


@functools.cache
def _population(column: str) -> np.ndarray:
    dataset = f"flights3m-{column}"
    source = npm_package_directory("vega-datasets", VEGA_DATASETS_VERSION, dataset) / _FILE
    parse = _parse_departure if column == "departure" else _parse_distance
    values = cached_column(source, f"vega-datasets-{VEGA_DATASETS_VERSION}-flights-3m-{column}", parse)
    values.setflags(write=False)
    return values


def _draw(column: str):
    def draw(n, rng):
        population = _population(column)
        if n is None:
            return population.copy()
        return population[rng.choice(population.size, size=n, replace=False)]

    return draw


_SOURCE = (
    f"npm vega-datasets {VEGA_DATASETS_VERSION}, data/flights-3m.parquet (BTS On-Time Performance, "
    "Jan-Jun 2001), column {column}"
)


#: The two columns: the dataset's name, its column, description and bounds, and the source's column.
_COLUMNS = (
    (
        "flights3m-departure", "departure",
        "actual departure time of day (minutes) of 3,000,000 US flights, Jan-Jun 2001; smooth, "
        "1-minute resolution, heaped at multiples of 5",
        (0.0, 1440.0), "date (time of day -> minutes after midnight)",
    ),
    (
        "flights3m-distance", "distance",
        "distance (miles) of 3,000,000 US flights, Jan-Jun 2001; spiky on 1,109 route lengths",
        (0.0, 5000.0), "distance",
    ),
)


def _register_defaults() -> None:
    for name, column, description, bounds, source_column in _COLUMNS:
        register(
            Dataset(
                name=name,
                description=description,
                kind="numerical",
                size=ROWS,
                bounds=bounds,
                draw=_draw(column),
                license=_LICENSE,
                source=_SOURCE.format(column=source_column),
                synthetic=False,
            )
        )


_register_defaults()
