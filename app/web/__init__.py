"""Play, replay and watch Jekyll vs Hyde in the browser (``jekyll-hyde serve``).

``app.create_app()`` builds the web application (FastAPI, the ``web`` extra) from
``pages`` (the HTML pages), ``api`` (the JSON API), ``sessions`` (the games the server
keeps), ``views`` (what the pages are sent) and ``records`` (game records replayed),
with ``opponents``, ``thinking`` and ``limits`` bounding what clients may ask for;
``static/`` holds its pages, plain HTML, CSS and JavaScript with nothing to build
and nothing fetched from elsewhere.
"""
