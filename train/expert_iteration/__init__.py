"""Expert iteration (``jekyll-hyde train``'s default algorithm, ``make train``):
generations of search-labelled self-play games (``distill``, labelled by
``executors`` locally or on Ray) and network fits (``fit``), driven by ``loop``,
with its config (``config``), optional exploiter games (``exploiters``) and
report (``report``). ``jekyll-hyde distill`` runs one generation's labelling and
fit on its own."""
