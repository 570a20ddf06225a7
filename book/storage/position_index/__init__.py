"""The positions index: one row per game and position, and the next-move statistics counted from it.

The importer and ``Book`` reach it only through ``face``; which physical form a book's index has
(segments in the book's own tables, segment files beside it, PostgreSQL's staged tables, or a
statistics book's one table) and which SQL dialect it speaks are chosen inside this package.
"""
