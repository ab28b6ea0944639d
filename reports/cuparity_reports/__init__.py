"""cuparity_reports: dashboards, run-vs-run comparison and history for cuparity run outputs."""

__version__ = "0.1.0"
