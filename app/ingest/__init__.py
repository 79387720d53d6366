"""Text in, rows out: bonnie++ CSV lines and text reports parsed, checked, tagged and written."""
