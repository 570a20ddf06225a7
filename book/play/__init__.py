"""The book as a player: move policies, the whole-board and corner choosers, practice."""
