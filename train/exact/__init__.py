"""Exact answers on small variants: the game tree (``tree``), an equilibrium by the
sequence-form linear program (``lp``), and exact best responses and exploitability
(``best_response``);
CFR+, an iterative equilibrium of any size that fits in memory (``cfr``)."""
