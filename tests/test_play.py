"""play and replay: a person's game through a pseudo-terminal, records, parsing."""

from __future__ import annotations

import json
import os
import pathlib
import pty
import re
import select
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_app import cli
from jekyll_hyde_app.play import parse_action, replay_command
from jekyll_hyde_env.engine import replay_record
from jekyll_hyde_env.engine.cards import card_id, potion_id

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Terminal:
    """A command in a pseudo-terminal, read until a prompt, answered line by line."""

    def __init__(self, *args):
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jekyll_hyde_app.cli", *args],
            cwd=ROOT,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.output = ""

    def read_until(self, pattern: str, timeout: float = 60.0) -> str:
        start = len(self.output)
        deadline = time.time() + timeout
        while time.time() < deadline:
            match = re.search(pattern, self.output[start:])
            if match:
                return self.output[start:]
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the program ended
                    chunk = ""
                if not chunk and self.process.poll() is not None:
                    break
                self.output += chunk.replace("\r\n", "\n")
            elif self.process.poll() is not None:
                break
        raise AssertionError(f"never saw {pattern!r}; output ends with:\n{self.output[-1500:]}")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        code = self.process.wait(timeout=30)
        os.close(self.master)
        return code


PROMPT = (
    r"(Choose a card to give \(exchange\)|Lead a card|Declare a colour \(pride, wrath or greed\)"
    r"|Answer with a card|Choose a card to swap \(Greed\))(?: -- [^:\n]*)?: $"
)


def last_hand(screen: str) -> str:
    """The last hand shown, its lines (broken between cards) joined."""
    lines = screen.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("Hand   "))
    hand = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * len("Hand   ")):
            break
        hand.append(line.strip())
    return " ".join(hand)


def legal_choice(screen: str) -> str:
    """The first legal card marked on the last hand shown, or a colour to declare."""
    if screen.rstrip().endswith("Declare a colour (pride, wrath or greed):"):
        return "greed"
    return re.findall(r"\[(\d+)\]\*", last_hand(screen))[0]


@pytest.mark.slow
def test_a_person_plays_a_whole_game_through_a_terminal(tmp_path):
    record = tmp_path / "game.json"
    terminal = Terminal(
        "play", "--as", "hyde", "--opponent", "heuristic", "--seed", "4", "--save", str(record)
    )
    screen = terminal.read_until(PROMPT)
    terminal.send("wrath 9")  # no such card
    screen = terminal.read_until(PROMPT)
    assert "refused: there is no wrath 9" in screen
    terminal.send("xyzzy")
    screen = terminal.read_until(PROMPT)
    assert "names no card" in screen
    decisions = 0
    while True:
        terminal.send(legal_choice(terminal.output))
        decisions += 1
        screen = terminal.read_until(PROMPT + r"|Game record saved")
        if "Game record saved" in screen:
            break
    assert terminal.close() == 0
    assert decisions > 20
    for text in ("Trick: ", "Round 1 over", "the marker ", "Game over:", "Track  Jekyll"):
        assert text in terminal.output
    saved = json.loads(record.read_text())
    assert saved["players"] == {"hyde": "you", "jekyll": "heuristic"}
    final = replay_record(saved)
    assert f"Game over: {['jekyll', 'hyde'][final.winner]} wins" in terminal.output


@pytest.mark.slow
def test_refusals_name_the_rule_and_q_quits_cleanly():
    # The opponent is the shipped champion: `play` finds it by name right after install.
    terminal = Terminal("play", "--as", "jekyll", "--opponent", "champion", "--seed", "1")
    screen = terminal.read_until(PROMPT)
    assert "Opponent: champion" in screen
    held = set(re.findall(r"\[(\d+)\]", last_hand(screen)))
    missing = next(str(i) for i in range(25) if str(i) not in held)
    terminal.send(missing)
    assert "is not in your hand" in terminal.read_until(PROMPT)
    terminal.send("q")
    terminal.read_until("Game abandoned")
    assert terminal.close() == 0


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("13", 13),
        ("wrath 5", card_id(1, 5)),
        ("W5", card_id(1, 5)),
        ("pride 1", card_id(0, 1)),
        ("g7", card_id(2, 7)),
        ("potion 3", potion_id(3)),
        ("3+", potion_id(3)),
        ("potion 5+", potion_id(5)),
        ("greed", 27),
        ("declare pride", 25),
        # RULES.md, Components: Pride's cards are purple, Wrath's red, Greed's green
        ("purple", 25),
        ("declare green", 27),
        ("Red", 26),
        ("purple 3", card_id(0, 3)),
        ("red 5", card_id(1, 5)),
        ("r5", card_id(1, 5)),
        ("green 7", card_id(2, 7)),
    ],
)
def test_parse_action_reads_what_people_type(text, action):
    assert parse_action(text) == action


@pytest.mark.parametrize("text", ["", "wrath 0", "potion 1", "99", "blue 3", "6+"])
def test_parse_action_refuses_nonsense_with_a_reason(text):
    with pytest.raises(ValueError):
        parse_action(text)


def test_replay_reproduces_a_recorded_game(tmp_path, capsys):
    assert (
        cli.main(
            [
                "eval",
                "heuristic",
                "random",
                "--pairs",
                "1",
                "--workers",
                "1",
                "--no-progress",
                "--save-games",
                str(tmp_path),
            ]
        )
        == 0
    )
    path = tmp_path / "pair00000_a_jekyll.json"
    record = json.loads(path.read_text())
    answers = iter([""] * 100)
    final = replay_command(str(path), wait=True, read=lambda prompt: next(answers))
    assert final == replay_record(record)
    out = capsys.readouterr().out
    assert "jekyll = heuristic, hyde = random" in out and "jekyll holds" in out
    assert "Exchange: jekyll gave" in out and "Round 1 begins with the marker on 0" in out
    assert f"Replay complete: {record['result']['winner']} wins" in out
    assert out.count("Trick: ") == sum(len(r["tricks"]) for r in record["rounds"])


def test_replay_refuses_a_broken_record(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.main(["replay", str(bad), "--no-wait"]) == 2
    assert "not a game record" in capsys.readouterr().err
    assert cli.main(["replay", str(tmp_path / "none.json")]) == 2


def test_the_rules_for_players_name_every_tag_the_code_cites(capsys):
    from jekyll_hyde_env.rulebook import rules_text

    text = rules_text()
    tags = ["R1", "R2", "R2.2", "R2.4", "R3", "R4", "T1", "T2", "T3", "T3a", "T3b", "T4"]
    tags += ["T5", "T5a", "T5b", "T5c", "T6", "T6a", "T6b", "T6c", "T7"]
    missing = [tag for tag in tags if not re.search(rf"\b{re.escape(tag)}\b", text)]
    assert not missing
    assert cli.main(["rules"]) == 0
    assert capsys.readouterr().out.strip() == text.strip()


def test_play_explains_itself_on_help_and_rules_and_counts_the_exchange():
    import io

    from jekyll_hyde_agents import make_agent
    from jekyll_hyde_app.play import QuitGame, play_game

    answers = iter(["?", "rules", "q"])
    prompts = []

    def read(prompt):
        prompts.append(prompt)
        return next(answers)

    out = io.StringIO()
    with pytest.raises(QuitGame):
        play_game(0, make_agent("heuristic"), seed=1, read=read, out=out)
    text = out.getvalue()
    assert "Goal as Jekyll: keep the trick counts level" in text
    assert "'rules' shows the rules" in text  # the help
    assert "# Jekyll vs Hyde: the rules, for players" in text
    assert "1 card to give in round 1 (R2.2), 1 still to choose" in prompts[0]


def test_every_trick_says_why_it_was_won_and_what_its_potion_did():
    import numpy as np

    from jekyll_hyde_app.narration import step_events
    from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game

    rng = np.random.default_rng(0)
    seen = set()
    for game in range(60):
        state = new_game(np.random.default_rng(game))
        while not is_terminal(state):
            before = state.clone()
            moves = legal_actions(state)
            apply_action(state, moves[rng.integers(len(moves))])
            for event in step_events(before, state):  # the terminal's lines for this step
                line = event.line()
                if line.startswith("Trick: "):
                    assert "(T5" in line  # the reason for the winner
                    for tag in ("T5a", "T5b", "T5c", "T6a", "T6b", "T6c"):
                        if tag in line:
                            seen.add(tag)
                    assert not ("Pride: the winner also takes" in line and "taken)" not in line)
                    if "the hands are empty" in line:
                        seen.add("empty greed")
                    if "no trick to take" in line:
                        seen.add("no pride steal")
                elif line.startswith("Round"):
                    assert "the marker stays on" in line or "the marker moves" in line
                elif line.startswith("Game over: hyde"):
                    assert "reached space 10" in line
                elif line.startswith("Game over: jekyll"):
                    assert "short of 10" in line
    assert {"T5a", "T5b", "T6a", "T6b", "T6c", "no pride steal"} <= seen
    from jekyll_hyde_env.engine.render import trick_reason
    from jekyll_hyde_env.engine.state import Trick

    two_potions = Trick(0, 24, 2, 21, 0, 0, False)  # 5+ led declaring greed, 2+ answered
    assert "the higher potion (T5c)" in trick_reason(two_potions)


def test_a_colour_that_is_none_of_the_three_is_refused_naming_them():
    for text in ("blue", "declare orange", "blue 3"):
        with pytest.raises(ValueError, match=r"pride \(purple\), wrath \(red\) or greed \(green\)"):
            parse_action(text)


def _play_until_quit(answers: list[str]) -> str:
    import io

    from jekyll_hyde_agents import make_agent
    from jekyll_hyde_app.play import QuitGame, play_game

    out = io.StringIO()
    typed = iter(answers)
    with pytest.raises(QuitGame):
        play_game(0, make_agent("heuristic"), 5, read=lambda prompt: next(typed), out=out)
    return out.getvalue()


def test_enter_alone_asks_again_saying_what_to_type():
    shown = _play_until_quit(["", "   ", "q"])
    assert shown.count("type a card (its id, 13, or its name, wrath 5) and Enter") == 2
    assert "names no card" not in shown and "refused" not in shown


@pytest.mark.parametrize("columns", [110, 80, 60])
def test_the_hand_breaks_between_cards_at_the_terminal_width(monkeypatch, columns):
    from jekyll_hyde_env.engine import new_game, player_view
    from jekyll_hyde_env.engine.cards import mask_to_ids

    monkeypatch.setenv("COLUMNS", str(columns))
    shown = _play_until_quit(["q"])
    lines = shown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Hand   "))
    block = [lines[start]]
    block += [line for line in lines[start + 1 :] if line.startswith("       ")][:9]
    assert len(block) > 1 and all(len(line) <= columns for line in block)
    card = r"(pride|wrath|greed) \d \[\d+\]\*?|potion \d\+ \[\d+\]\*?"
    for line in block:  # whole cards only, a comma after every line's last but the hand's
        assert re.fullmatch(rf"(Hand   |       )({card})(, ({card}))*,?", line), line
    hand = player_view(new_game(np.random.default_rng(5)), 0).hand  # play_game's deal
    assert sorted(map(int, re.findall(r"\[(\d+)\]", " ".join(block)))) == mask_to_ids(hand)


def test_rules_on_a_terminal_are_rendered_and_paged(monkeypatch):
    """On a terminal the Markdown is rendered (no '## ' or '**' left) and handed to the
    pager; a pipe gets the Markdown itself (the test above)."""
    import io
    import pydoc

    pytest.importorskip("rich", reason="rich comes with the train extra")
    from jekyll_hyde_env.rulebook import rules_text

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    paged = []
    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(pydoc, "pager", paged.append)
    assert cli.main(["rules"]) == 0
    (shown,) = paged
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert "Jekyll vs Hyde: the rules, for players" in plain and "## " not in plain
    assert "**" not in plain and "Hyde wins at once" in plain
    assert shown != plain  # styled: bold and headings kept as the terminal's styles
    assert sys.stdout.getvalue() == ""  # all of it went to the pager
    assert "## The cards" in rules_text()
