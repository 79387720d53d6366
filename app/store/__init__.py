"""The database: engine and sessions, models, run reads and edits, the data-change stamp, migrations."""
