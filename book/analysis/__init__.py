"""The book's services: the import (pipeline/), the pattern index and search and the corner
book (patterns/), KataGo's values (ai.py, ai_lines.py, annotate.py, mistakes.py) and SGF trees (tree.py)."""
