"""``python -m fuseki`` is the ``fuseki`` command."""

from fuseki.book.ui.cli import main

raise SystemExit(main())
