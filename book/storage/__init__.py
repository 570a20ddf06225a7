"""Storage: the schema, the ``Book`` queries, its next-move sources (the segment index and the
statistics table), SQLite page images, WAL checkpoints."""
