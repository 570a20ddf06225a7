"""The import pipeline (reader -> parsers -> writer) and its progress."""
