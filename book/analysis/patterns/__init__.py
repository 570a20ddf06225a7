"""Pattern search: corners, sides and anywhere, with continuations (docs/book-api.md)."""
