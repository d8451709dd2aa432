"""Versioned import path of the PettingZoo environment, as PettingZoo's own games have."""

from jekyll_hyde_env.jekyll_hyde import env, raw_env

__all__ = ["env", "raw_env"]
