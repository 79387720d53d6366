"""Pure analysis of stored runs: configurations, statistics, verdicts, hints, charts, tables, exports."""
