"""Fixtures of the command line's tests."""

from __future__ import annotations

import numpy as np
import pytest



@pytest.fixture
def data(tmp_path):
    """A column of numbers, one of labels, one of words and one of small integers (600 rows)."""
    rng = np.random.default_rng(36)
    numbers = rng.normal(5.0, 2.0, 600)
    pages = rng.choice(["home", "cart", "checkout", "help"], 600, p=[0.5, 0.3, 0.15, 0.05])
    words = rng.choice(["apple", "pear", "plum", "fig"], 600, p=[0.5, 0.3, 0.15, 0.05])
    items = rng.integers(0, 10, 600)
    rows = [f"{x:.4f},{p},{w},{k}" for x, p, w, k in zip(numbers, pages, words, items)]
    (tmp_path / "d.csv").write_text("x,page,word,k\n" + "\n".join(rows) + "\n")
    (tmp_path / "pages.txt").write_text("home\ncart\ncheckout\nhelp\n")
    return tmp_path
