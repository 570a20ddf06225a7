"""Storage: the schema, the ``Book`` queries, segments, SQLite page images, WAL checkpoints.

A statistics book (``statbook``) is a kind of ``store.Book`` that ``Book.open`` returns for a
statistics file: imported with the package, so that the opener is there whatever module of the
package is imported first, and so that ``store`` need not import the module that imports it.
"""

from fuseki.book.storage import statbook  # noqa: F401
