"""Queries over a stored book, above its storage: a player's record (players.py), a position
through the years (years.py), the games of an earlier answer to search within (gamesets.py) and
KataGo's values of positions as stored in the AI value cache (ai_values.py)."""
