"""Every aggregate of the one registry, through SQL, the plan, a release and its cells: what adding one must give."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.queries._statistics import AGGREGATES, Statistic

RNG = np.random.default_rng(3)
N = 600
#: 200 persons of 3 rows each over two regions
TABLE = pd.DataFrame({"person": np.repeat(np.arange(200), 3), "region": RNG.choice(["north", "south"], N),
                      "income": RNG.lognormal(10, 0.7, N), "city": RNG.choice(["a", "b", "c", "d"], N)})
KEYS = {"region": ["north", "south"]}
#: what the docs' placeholders stand for in these tests (a new placeholder needs a value here)
PLACEHOLDERS = {r"<privacy_id>": "person", r"q, \.\.\.": "0.25, 0.75", r"\bq\b": "0.5", r"\bbins\b": "4",
                r"\bn\b": "4", r"\bcondition\b": "income > 20000", r"\bc\b": "income"}
FORMS = [(kind, form) for kind in AGGREGATES.values() for form in kind.sql_forms]


def _written(form: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        form = re.sub(placeholder, value, form)
    assert not re.search(r"<|\.\.\.|\b[a-z]\b", form), f"a placeholder of {form!r} has no value in PLACEHOLDERS"
    return form


def test_every_aggregate_states_its_contract():
    for kind in AGGREGATES.values():
        assert issubclass(kind, Statistic) and kind.kind and kind.sql_forms, kind
        assert kind.release is not Statistic.release and kind.from_sql is not Statistic.from_sql, kind


@pytest.mark.parametrize(("kind", "form"), FORMS, ids=[form for _, form in FORMS])
def test_every_sql_form_plans_releases_and_fills_its_cells(kind, form):
    statement = f"SELECT region, {_written(form)} AS x FROM t GROUP BY region"
    built = dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0, bounds={"income": (0, 3e5)}, keys=KEYS,
                       privacy_id="person", max_contributions=3, max_groups=2, rng=1)  # every row kept
    (statistic,) = built.statistics
    assert type(statistic) is kind and statistic.name == "x"
    (planned,) = built.plan().expected(500, repeats=2)
    assert planned["statistic"] == statistic.label and math.isfinite(planned["error"]) and planned["error"] > 0
    result = built.release()
    assert result.guarantee.epsilon == pytest.approx(1.0) and result.keys == KEYS["region"]
    table = result.table()
    cells = [name for name in table.columns if name not in ("region", "level")]
    assert cells and all(name.startswith("x") for name in cells), cells  # AS names every cell
    assert np.isfinite(table[cells].to_numpy(dtype=float)).all()


def test_a_call_of_an_aggregates_name_in_another_form_is_refused_with_its_forms():
    from dpdist.errors import InvalidParameterError

    for kind in AGGREGATES.values():
        name = kind.sql_forms[0].split("(")[0]
        with pytest.raises(InvalidParameterError, match=re.escape(kind.sql_forms[0])):
            dpdist.sql(f"SELECT {name}(DISTINCT income, 2) FROM t", tables={"t": TABLE}, epsilon=1.0)


def test_the_reference_lists_every_aggregate_of_the_registry_with_its_sql_forms():
    page = (Path(__file__).parents[2] / "docs" / "reference" / "api" / "queries.rst").read_text()
    missing = [kind.kind for kind in AGGREGATES.values() if f"   * - ``{kind.kind}``" not in page]
    missing += [form for _, form in FORMS if f"``{form}``" not in page]
    assert not missing, f"docs/reference/api/queries.rst does not list {missing}"
