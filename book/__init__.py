"""The game database: storage, game-record formats, the import pipeline, the book as a move
chooser, and the ways in for people."""
