"""Storage: the schema, the ``Book`` queries, segments, SQLite page images, WAL checkpoints."""
