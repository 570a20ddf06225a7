"""The book explorer's web page: a Flask JSON API (``app``) and static files, no build step."""

from fuseki.book.ui.web.app import create_app

__all__ = ["create_app"]
