"""Play against an agent in the terminal, and replay recorded games.

``jekyll-hyde play --as hyde --opponent ismcts:500`` deals a game (``--seed``
fixes it), shows the table before each of your decisions (the track with the
marker, the colour ranks, both trick counts, the current trick, your hand with
names and ids, legal cards marked, broken between cards at the terminal's
width) and reads your answer: a card id (``13``), a card name (``wrath 5``,
``w5``, ``red 5``, ``potion 3``, ``3+``) or, when declaring, a colour
(``greed`` or ``green``). Invalid input is refused with the reason and asked
again, Enter alone says what to type; ``q`` quits. After each trick one line
tells who won and what a potion did; after each round, how the marker moved
(the events of ``jekyll_hyde_app.narration``, which the web pages' logs tell too).
``--save FILE`` writes the game record.

``jekyll-hyde replay FILE`` steps through a record trick by trick (Enter for
the next step, ``q`` to stop), showing each player's hand as that player saw it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from typing import Any, TextIO

import numpy as np

from jekyll_hyde_agents import make_agent
from jekyll_hyde_app.narration import move, step_events
from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    legal_actions,
    new_game,
    player_view,
    replay_record,
)
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    DECLARE_BASE,
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    PHASE_NAMES,
    Phase,
    action_name,
    card_id,
    potion_id,
)
from jekyll_hyde_env.engine.render import (
    cards_line,
    ranks_line,
    track_line,
)
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_env.rulebook import goal, rules_text
from jekyll_hyde_train.common.files import FileFormatError, read_json_file

QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("help", "?", "h")
RULES_WORDS = ("rules",)
# RULES.md, Components: the cards of Pride are purple, of Wrath red, of Greed green, and
# people name them by either.
PRINTED_COLOURS = dict(zip(COLOUR_NAMES, ("purple", "red", "green"), strict=True))
_NAMED = [f"{name} ({PRINTED_COLOURS[name]})" for name in COLOUR_NAMES]
COLOURS_TEXT = f"{', '.join(_NAMED[:-1])} or {_NAMED[-1]}"
HELP_TEXT = (
    "  Type a card: its id (13), its name (wrath 5, w5, red 5) or a potion\n"
    "  (potion 3, 3+); after leading a potion, a colour to declare:\n"
    f"  {COLOURS_TEXT}. Cards marked * are the ones\n"
    "  you may play. 'rules' shows the rules, 'q' quits."
)
EMPTY_TEXT = "  type a card (its id, 13, or its name, wrath 5) and Enter; ? for help, q quits"
_COLOUR_WORDS = {
    **{name: name for name in COLOUR_NAMES},
    **{printed: name for name, printed in PRINTED_COLOURS.items()},
    **{name[0]: name for name in COLOUR_NAMES},  # p, w, g
    **{printed[0]: name for name, printed in PRINTED_COLOURS.items()},  # p, r, g
}
_PROMPTS = {
    int(Phase.EXCHANGE): "Choose a card to give (exchange)",
    int(Phase.LEAD): "Lead a card",
    int(Phase.DECLARE): "Declare a colour (pride, wrath or greed)",
    int(Phase.FOLLOW): "Answer with a card",
    int(Phase.SWAP): "Choose a card to swap (Greed)",
}


class QuitGame(Exception):
    """The player asked to stop."""


def parse_action(text: str) -> int:
    """An action id from what a person types.

    Accepts an id (``13``), a card name (``wrath 5``, ``w5``, ``potion 3``,
    ``3+``) or a colour to declare (``greed``, ``declare greed``); a colour may
    be named by its sin or by its cards' colour (``purple 3``, ``red``, ``r5``).

    Args:
        text: the line typed; case, spaces and the word ``declare`` are ignored.

    Returns:
        The action id: 0-24 for a card, 25-27 for declaring pride, wrath or greed. It is
        not checked against the game: ``refusal`` says whether it is allowed now.

    Raises:
        ValueError: the text names no card or colour; the message says what is accepted.
    """
    words = text.strip().lower().replace("declare", " ").split()
    joined = "".join(words)
    if not joined:
        raise ValueError("nothing was typed: " + EMPTY_TEXT.strip())
    if joined.isdigit():
        number = int(joined)
        if not 0 <= number < NUM_ACTIONS:
            raise ValueError(f"{number} is not an id: card ids are 0-24, colours 25-27")
        return number
    if len(words) == 1 and len(joined) > 1 and joined in _COLOUR_WORDS:
        return DECLARE_BASE + COLOUR_NAMES.index(_COLOUR_WORDS[joined])
    match = re.fullmatch(r"([a-z]+)(\d+)\+?", joined)
    if match and (match.group(1) in _COLOUR_WORDS or match.group(1) == "potion"):
        kind, value = match.group(1), int(match.group(2))
        if kind == "potion" or (joined.endswith("+") and kind == "p"):
            if not 2 <= value <= 5:
                raise ValueError(f"there is no potion {value}+: potions are 2+ to 5+")
            return potion_id(value)
        colour = _COLOUR_WORDS[kind]
        if not 1 <= value <= 7:
            raise ValueError(f"there is no {colour} {value}: values are 1 to 7")
        return card_id(COLOUR_NAMES.index(colour), value)
    if re.fullmatch(r"\d\+", joined):
        if not 2 <= int(joined[0]) <= 5:
            raise ValueError(f"there is no potion {joined}: potions are 2+ to 5+")
        return potion_id(int(joined[0]))
    raise ValueError(
        f"{text.strip()!r} names no card: type an id (13), a card (wrath 5, w5, potion 3, 3+) "
        f"or, when declaring, a colour: {COLOURS_TEXT}"
    )


def refusal(state: GameState, action: int) -> str | None:
    """Why ``action`` is not allowed now, or None when it is.

    Args:
        state: the game, with the person to act.
        action: the action id the person chose (0-27, as from ``parse_action``).

    Returns:
        None when ``action`` is legal; otherwise one line for the person saying why not
        (the card is not in the hand, the colour must be followed, ...).
    """
    legal = legal_actions(state)
    if action in legal:
        return None
    player = state.to_act
    if state.phase == Phase.DECLARE:
        return f"declare a colour now: {COLOURS_TEXT}"
    if action >= DECLARE_BASE:
        return "declaring a colour comes only after leading a potion"
    if not state.hands[player] >> action & 1:
        return f"{action_name(action)} is not in your hand"
    if state.picks[player] >> action & 1:
        return f"you already chose {action_name(action)}"
    if state.phase == Phase.FOLLOW:
        return "you must follow the colour asked when you can (T3): " + ", ".join(
            action_name(a) for a in legal
        )
    if state.phase == Phase.EXCHANGE:
        return "the potion rule (R2.2): you were dealt two or more potions, so give one"
    return "that card is not allowed now"


def table_text(state: GameState, player: int, width: int | None = None) -> str:
    """The table as ``player`` sees it, its card lines broken between cards to fit
    ``width`` columns (the terminal's width by default).

    Args:
        state: the game.
        player: whose view to show: 0 for Jekyll, 1 for Hyde.
        width: the columns the card lines must fit (never taken as fewer than their
            label plus 20); None for the terminal's width.

    Returns:
        The lines joined by newlines: the round and phase, the track, the colour ranks,
        both trick counts, the trick led, the hand (the legal cards marked when
        ``player`` is to act), the cards chosen and the opponent's cards known.
    """
    if width is None:
        width = shutil.get_terminal_size().columns
    view = player_view(state, player)
    legal = 0
    if state.to_act == player:
        for action in legal_actions(state):
            legal |= 1 << action if action < DECLARE_BASE else 0
    lines = [
        f"Round {state.round}, you are {AGENTS[player]}, phase {PHASE_NAMES[state.phase]}",
        "Track  " + track_line(state.marker, state.variant.track_end),
        "Ranks  " + ranks_line(state.ranks),
        f"Tricks you {view.tricks[0]}, opponent {view.tricks[1]}",
    ]
    if state.lead_card >= 0:
        led = f"{AGENTS[state.leader]} led {action_name(state.lead_card)}"
        if state.declared >= 0:
            led += f", declaring {COLOUR_NAMES[state.declared]}"
        lines.append("Trick  " + led)
    lines += _card_lines("Hand   ", cards_line(view.hand, legal if legal else None), width)
    if view.picks:
        lines += _card_lines("Chosen ", cards_line(view.picks), width)
    if view.opp_known:
        lines += _card_lines("Known in the opponent's hand: ", cards_line(view.opp_known), width)
    return "\n".join(lines)


def _card_lines(label: str, cards: str, width: int) -> list[str]:
    """``label`` then ``cards`` (a ``cards_line``), broken after a card's comma so that
    no line is wider than ``width``; later lines are indented under the first card."""
    width = max(width, len(label) + 20)  # a terminal too narrow for any layout
    parts = cards.split(", ")
    lines, line = [], label + parts[0]
    for part in parts[1:]:
        if len(line) + len(", ") + len(part) + len(",") > width:  # room for its own comma
            lines.append(line + ",")
            line = " " * len(label) + part
        else:
            line += ", " + part
    return [*lines, line]


def play_game(
    human: int,
    opponent,
    seed: int | None,
    read=input,
    out: TextIO | None = None,
    variant: Variant = FULL,
) -> GameState:
    """Play one game between a person (reading ``read``) and ``opponent``.

    Args:
        human: the person's seat: 0 for Jekyll, 1 for Hyde.
        opponent: the agent in the other seat (``act()`` and ``reset()``, as from
            ``make_agent``); it is reset with a seed drawn from ``seed``.
        seed: seeds the deals and the opponent's reset; None for fresh randomness.
        read: asks the person for a line: called with the prompt, returns the text
            typed (``input`` by default).
        out: where the table, the moves and the result are written; None for stdout.
        variant: the version of the game (RULES.md V1-V7).

    Returns:
        The finished game's state.

    Raises:
        QuitGame: the person typed ``q`` (or ``quit``, ``exit``) or the input ended.
    """
    out = out or sys.stdout
    rng = np.random.default_rng(seed)
    state = new_game(rng, variant=variant)
    opponent.reset(int(rng.integers(2**31)))
    print(f"You play {AGENTS[human]}. Type ? for help, rules for the rules, q to quit.", file=out)
    print(goal(human, variant), file=out)
    while state.to_act >= 0:
        before = state.clone()
        if state.to_act == human:
            print("\n" + table_text(state, human), file=out)
            action = _ask(state, read, out)
        else:
            player = state.to_act
            action = opponent.act(player_view(state, player), legal_actions(state))
            print(move(state, action).line(), file=out)
        apply_action(state, action)
        for event in step_events(before, state):  # what the step finished, from your side
            print(event.line(human), file=out)
    print("You won." if state.winner == human else "You lost.", file=out)
    return state


def prompt(state: GameState) -> str:
    """What to do now; for the exchange and Greed swaps, how many cards and how many left.

    Args:
        state: the game, with a player to act.

    Returns:
        The prompt, ending in ``": "`` (``"Lead a card: "``).
    """
    text = _PROMPTS[state.phase]
    player = state.to_act
    if state.phase in (Phase.EXCHANGE, Phase.SWAP):
        left = state.picks_left[player]
        total = left + state.picks[player].bit_count()
        what = f"{total} card{'s' if total > 1 else ''} to give"
        if state.phase == Phase.EXCHANGE:
            what += f" in round {state.round} (R2.2)"
        text += f" -- {what}, {left} still to choose"
    return text + ": "


def _ask(state: GameState, read, out: TextIO) -> int:
    while True:
        try:
            text = read(prompt(state))
        except EOFError:
            raise QuitGame from None
        word = text.strip().lower()
        if not word:  # Enter alone: say what to type, and ask again
            print(EMPTY_TEXT, file=out)
            continue
        if word in QUIT_WORDS:
            raise QuitGame
        if word in HELP_WORDS:
            print(HELP_TEXT, file=out)
            continue
        if word in RULES_WORDS:
            print(rules_text(), file=out)
            continue
        try:
            action = parse_action(text)
        except ValueError as error:
            print(f"  refused: {error}", file=out)
            continue
        reason = refusal(state, action)
        if reason is None:
            return action
        print(f"  refused: {reason}", file=out)


def save_record(state: GameState, path: str, players: dict[str, str]) -> None:
    """Write the game record of ``state`` to ``path`` (JSON, replaced whole).

    Args:
        state: the game, finished or not.
        path: the file to write; a ``.tmp`` file beside it is written first, then
            renamed over it.
        players: who played each side, by agent name (``{"jekyll": "you", "hyde":
            "ismcts:500"}``), stored as the record's ``players``.
    """
    record = game_record(state)
    record["players"] = players
    temporary = f"{path}.tmp"
    with open(temporary, "w") as handle:
        json.dump(record, handle, indent=1)
    os.replace(temporary, path)


def play_command(
    role: str,
    opponent_spec: str,
    seed: int | None,
    save: str | None,
    variant: Variant = FULL,
) -> int:
    """``jekyll-hyde play``: play a game in the terminal against an agent.

    Args:
        role: the person's side, ``"jekyll"`` or ``"hyde"``.
        opponent_spec: the opponent, an agent spec (``"ismcts:500"``, a run folder).
        seed: the seed of the deals; None draws one, which is printed so that the
            game can be played again.
        save: the file to write the finished game's record to; None writes none.
        variant: the version of the game (RULES.md V1-V7).

    Returns:
        The exit status, 0, also when the person quits (nothing is then saved).

    Raises:
        ValueError: ``role`` is neither side, or ``opponent_spec`` names no agent.
        KeyboardInterrupt: Ctrl-C, raised again (after saying, with ``save``, that
            nothing was saved).
    """
    opponent = make_agent(opponent_spec)
    human = AGENTS.index(role)
    if seed is None:  # drawn here, and shown, so that the game can be played again
        seed = int(np.random.default_rng().integers(2**31))
    print(f"Opponent: {opponent_spec}. Deals from seed {seed} (--seed {seed} replays them).")
    try:
        state = play_game(human, opponent, seed, variant=variant)
    except QuitGame:
        unsaved = f" Nothing was saved to {save}: the game did not finish." if save else ""
        print(f"\nGame abandoned.{unsaved}")
        return 0
    except KeyboardInterrupt:  # Ctrl-C: say what became of --save, then stop as interrupted
        if save:
            print(f"\nGame interrupted. Nothing was saved to {save}: the game did not finish.")
        raise
    if save:
        players = {AGENTS[human]: "you", AGENTS[1 - human]: opponent_spec}
        save_record(state, save, players)
        print(f"Game record saved to {save}")
    return 0


def _print_round_start(state: GameState, out: TextIO) -> None:
    """A round begins: its number, the marker, who leads first and the hands dealt."""
    variant = state.variant
    leader = AGENTS[JEKYLL if state.marker < variant.hyde_leads_from else HYDE]
    given = variant.exchange[state.round - 1]
    print(
        f"\nRound {state.round} begins with the marker on {state.marker}; each player gives "
        f"{given} card{'s' if given != 1 else ''} in the exchange (R2.2), then "
        f"{leader} leads the first trick (R3)",
        file=out,
    )
    for player, agent in enumerate(AGENTS):
        print(f"  {agent} is dealt {cards_line(state.hands[player])}", file=out)


def _hands_line(state: GameState) -> str:
    return f"  jekyll holds {cards_line(state.hands[0])}\n  hyde holds {cards_line(state.hands[1])}"


RECORD_WHAT = "a game record (JSON, from jekyll-hyde play --save or eval --save-games)"


def load_record(path: str | os.PathLike) -> tuple[dict[str, Any], GameState]:
    """Read a game record file and replay it: (the record, the state it ends in).

    Args:
        path: the record, a JSON file from ``jekyll-hyde play --save`` or
            ``eval --save-games``.

    Returns:
        record: the record as read.
        final: the state the record's actions lead to.

    Raises:
        FileFormatError: the file is unreadable, not JSON, or not a valid game
            record (``replay_record``'s reason), naming the file.
    """
    record = read_json_file(path, RECORD_WHAT)
    try:
        final = replay_record(record)
    except ValueError as error:
        raise FileFormatError(path, str(error)) from None
    return record, final


def replay_command(
    path: str, wait: bool = True, read=input, out: TextIO | None = None
) -> GameState:
    """Step through a recorded game trick by trick; returns the replayed final state.

    Args:
        path: the game record (JSON).
        wait: after each trick, wait for Enter (``q`` or the end of the input stops);
            False shows the whole game at once.
        read: asks for the line after each trick: called with the prompt, returns the
            text typed (``input`` by default).
        out: where the replay is written; None for stdout.

    Returns:
        The state the replay stopped at: the game's end, or the trick after which the
        person stopped.

    Raises:
        FileFormatError: the file is unreadable or not a valid game record.
    """
    out = out or sys.stdout
    record, final = load_record(path)  # checks the whole record first
    players = record.get("players", {})
    deals = [(d["jekyll"], d["hyde"]) for d in record["deals"]]
    variant = parse_variant(record.get("variant"))  # checked by load_record
    state = new_game(None, [{"jekyll": j, "hyde": h} for j, h in deals], variant)
    names = {agent: players.get(agent, agent) for agent in AGENTS}
    print(f"Replay of {path}: jekyll = {names['jekyll']}, hyde = {names['hyde']}", file=out)
    _print_round_start(state, out)
    for item in record["actions"]:
        before = state.clone()
        if before.phase == Phase.LEAD:  # the hands as the trick begins, at the decision
            print(_hands_line(before), file=out)
        apply_action(state, item["action"])
        for event in step_events(before, state):  # what the step finished, both sides told
            print(event.line(), file=out)
        trick_done = len(state.trick_log) != len(before.trick_log) or state.round != before.round
        if trick_done or state.phase == Phase.GAME_OVER:
            if state.phase == Phase.GAME_OVER:
                break
            if state.round != before.round:
                _print_round_start(state, out)
            else:
                print(
                    f"  tricks: jekyll {state.tricks[0]}, hyde {state.tricks[1]}; "
                    f"ranks {ranks_line(state.ranks)}",
                    file=out,
                )
            if wait:
                try:
                    if read("[Enter] next, q stops: ").strip().lower() in QUIT_WORDS:
                        break
                except EOFError:
                    break
            print("", file=out)
    if state == final:
        print(f"Replay complete: {AGENTS[final.winner]} wins at marker {final.marker}", file=out)
    return state
