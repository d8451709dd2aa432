"""Agents: every player, from random to search, behind one ``act(view, legal_actions)``."""
