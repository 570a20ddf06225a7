"""What the ways in show, shared by the commands, the shell and the page: the text board and its
tables' alphabet (textboard.py), KataGo's columns beside the next moves (ai_text.py), a position
through the years (years_text.py), a pattern search's answer (pattern_text.py) and a position's
corners (corner_text.py)."""
