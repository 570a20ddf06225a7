"""Storage: the schema, the ``Book`` queries, the positions index (``position_index``: its one face
and its physical forms), the pattern index's files and table, WAL checkpoints."""
