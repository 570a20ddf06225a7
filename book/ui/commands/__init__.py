"""The ``fuseki`` subcommands, one module each (``fuseki search``: ``search_command.py``), which
``book/ui/fuseki_command.py`` loads by name. A command module imports no other: what they share is
in ``book/ui/cli_shared.py`` (options), ``book/ui/present/`` (what they show) and the layers below."""
