"""Experiment runner: specs, datasets x methods x grids, results, plots and reports."""
