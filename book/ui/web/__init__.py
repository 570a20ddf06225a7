"""The book explorer's web page: a Flask JSON API (``app.create_app``) and static files, no build
step.  Importing this package loads no Flask: the app's module is imported where the app is made
(``fuseki serve``, ``server.py``), so the page's pure helpers cost what they are."""
