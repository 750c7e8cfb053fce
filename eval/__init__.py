"""Batch evaluation on the CPHOS-dataset: dataset, isolation, grading, runner, metrics, report (see README.md)."""
