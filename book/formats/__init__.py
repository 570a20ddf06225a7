"""Game-record formats: SGF reading, files/folders/archives, Fuego book files, the 9x9 research
files, and boards replayed from records."""
