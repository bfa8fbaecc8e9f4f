"""Evaluation: exact metrics, the benchmark runner and the HTML report."""
