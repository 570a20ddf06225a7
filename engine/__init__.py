"""The engine: the rules core, GTP, and the players that answer ``genmove``.  Never imports the book."""
