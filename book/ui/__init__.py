"""The ways in for people: the ``fuseki`` command and its subcommands, the shell, the text
board and the web page."""
