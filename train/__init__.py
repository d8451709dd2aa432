"""Training, evaluation and the ``jekyll-hyde`` command."""
