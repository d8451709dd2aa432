"""The C rules core: one C statement of RULES.md, shared by the batched games and search.

``jh_rules.h`` holds the rules over card masks, ``jh_observe.h`` the observation
encoder and action mask, ``jh_pystate.h`` a state's tuple form; ``_core.c``
builds the batched games of ``jekyll_hyde_env.vector`` on them, and
``agents/_rollout.c`` builds search on them. The Python engine
(``jekyll_hyde_env.engine``) is the readable reference the tests hold them to.
"""
