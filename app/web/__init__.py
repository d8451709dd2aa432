"""Play, replay and watch Jekyll vs Hyde in the browser (``jekyll-hyde serve``).

``app.create_app()`` builds the web application (FastAPI, the ``web`` extra);
``static/`` holds its pages, plain HTML, CSS and JavaScript with nothing to build
and nothing fetched from elsewhere.
"""
