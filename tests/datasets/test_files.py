"""A numerical column of a user's CSV or Parquet file as a dataset."""

import pytest

from dpdist import datasets
from dpdist.errors import InvalidParameterError, OutOfDomainError


def test_csv_column_with_missing_cells(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("id,amount\n1,2.5\n2,\n3,NA\n4,7\n")
    data = datasets.from_file(path, "amount")
    assert sorted(data.load().tolist()) == [2.5, 7.0]
    assert data.bounds == (2.5, 7.0)
    assert datasets.from_file(path, "amount", bounds=(0, 10)).bounds == (0.0, 10.0)
    with pytest.raises(OutOfDomainError, match="bounds"):
        datasets.from_file(path, "amount", bounds=(0, 5))
    with pytest.raises(InvalidParameterError, match="'column'.*\\['id', 'amount'\\]"):
        datasets.from_file(path, "price")

def test_parquet_column(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"x": [0.5, 1.5, None, 3.0]}), path)
    assert datasets.from_file(path, "x", bounds=(0, 4)).load().tolist() == [0.5, 1.5, 3.0]
