"""``python -m fuseki`` is the ``fuseki`` command."""

from fuseki.book.ui.fuseki_command import main

raise SystemExit(main())
