"""Numerical protocols: values in ``bounds``, estimates are Distributions (importing registers them)."""

__all__: list[str] = []
