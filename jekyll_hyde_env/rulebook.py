"""The rules written for players (``rules.md``, shipped with the package).

``rules_text()`` is what ``jekyll-hyde rules`` prints and ``rules`` shows in
``jekyll-hyde play``. The canonical statement the code follows has the same
tags (R1 to R4, T1 to T7); this text explains them to a person.
"""

from __future__ import annotations

from importlib import resources

from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.variant import FULL, Variant

GOALS = {
    "jekyll": (
        "Goal as Jekyll: keep the trick counts level. After each round the marker moves "
        "by the difference; you win if it has not reached space {end} after round {rounds}."
    ),
    "hyde": (
        "Goal as Hyde: drive the trick counts apart, whoever wins more. After each round "
        "the marker moves by the difference; you win as soon as it reaches space {end}."
    ),
}


def rules_text() -> str:
    """The players' rules, as Markdown text.

    Returns:
        The text of the ``rules.md`` shipped in this package.
    """
    return resources.files(__package__).joinpath("rules.md").read_text(encoding="utf-8")


def goal(player: int, variant: Variant = FULL) -> str:
    """One sentence on what ``player`` (0 Jekyll, 1 Hyde) is trying to do.

    Args:
        player: 0 Jekyll, 1 Hyde.
        variant: the version of the game: its track's end and its rounds (V3, V5).

    Returns:
        The goal of that role (``GOALS``), e.g. Jekyll's: keep the trick counts
        level so that the marker has not reached space 10 after round 3.
    """
    return GOALS[AGENTS[player]].format(end=variant.track_end, rounds=variant.rounds)
