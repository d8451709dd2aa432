"""The application: the ``jekyll-hyde`` command line, play and replay in the terminal, and the
web app of ``jekyll-hyde serve``."""
