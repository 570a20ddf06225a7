"""Builders of whole books out of the layers below: statistics books and the built-in book."""
