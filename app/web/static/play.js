// The play page: a game against an agent, kept on the server.
//
// Keyboard: the cards of the hand are buttons, one tab stop for the whole hand (the card
// focused last), the arrow keys (and Home, End) move between them, Enter or Space plays
// or chooses one. A card that may not be played now is aria-disabled, not disabled, so it
// stays focusable, and playing it says why in the message area (#error). The opponent's
// moves, each trick and each round are announced in a polite live region (#announce).
// "New game" and leaving the page end the game on the server (DELETE /api/games/{id}).
"use strict";

let game = null;        // the last view the server sent
let token = null;       // the game's secret, from the answer that created it
let chosen = new Set(); // cards chosen for an exchange or a Greed swap
let handStop = null;    // the id of the hand's card that Tab reaches (a roving tab stop)
let endedOnLeave = false; // the game was ended when the page was hidden (pagehide)

const $ = (id) => document.getElementById(id);

// The message area (role="alert"): a new node each time, so that a screen reader says
// the same message again when it is shown again.
function showError(message) {
  $("error").replaceChildren(...(message ? [el("span", { text: message })] : []));
}

function busy() {
  return document.body.classList.contains("waiting");
}

// --- the setup form, folded away while a game runs ---------------------------------------

function fold(folded) {
  $("setup-fields").classList.toggle("hidden", folded);
  $("show-setup").classList.toggle("hidden", game === null);
  $("show-setup").setAttribute("aria-expanded", String(!folded));
}

function toggleSetup() {
  const folded = $("setup-fields").classList.contains("hidden");
  fold(!folded);
  if (folded) $("role").focus();
}

async function loadAgents() {
  const data = await api("GET", "/api/agents");
  $("opponent").replaceChildren(...data.allowed.map((spec) => el("option", { value: spec, text: agentLabel(spec) })));
  $("opponent").value = data.default;
}

// --- the game on the server: started, ended --------------------------------------------

// End the page's game on the server, unless it is over (a finished game keeps its place
// until the server needs it, so that its replay and record links keep working).
// `leaving`: the page is being hidden; the request must outlive it (keepalive).
function endGame(leaving) {
  if (game === null || token === null || game.game_over) return Promise.resolve();
  const path = `/api/games/${game.game_id}`;
  if (leaving) {
    return fetch(path, { method: "DELETE", headers: { "X-Game-Token": token }, keepalive: true }).catch(() => {});
  }
  return api("DELETE", path, undefined, token).catch(() => {}); // already gone: nothing to end
}

async function newGame(event) {
  event.preventDefault();
  if ($("new-game").disabled) return;
  const body = { role: $("role").value };
  if ($("opponent").value) body.opponent = $("opponent").value;
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  $("new-game").disabled = true;
  try {
    await endGame(false);
    let view;
    try {
      view = await api("POST", "/api/games", body);
    } catch (error) {
      game = null;
      token = null;
      $("table").classList.add("hidden");
      fold(false);
      showError(error.message);
      return;
    }
    showError("");
    const before = game;
    game = view;
    token = view.token;
    chosen = new Set();
    handStop = null;
    fold(true);
    draw();
    announce([`New game: you are ${game.you}, against ${game.opponent_agent}.`, ...news(before, game), game.table.prompt || ""]);
  } finally {
    $("new-game").disabled = false;
  }
  placeFocus();
}

async function send(body) {
  if (busy() || game === null) return;
  const keepFocus = focusInGame();
  const before = game;
  document.body.classList.add("waiting");
  $("prompt").textContent = `${game.opponent} is thinking...`;
  let answer = null;
  let failure = null;
  try {
    answer = await api("POST", `/api/games/${game.game_id}/play`, body, token);
  } catch (error) {
    failure = error;
  }
  document.body.classList.remove("waiting");
  if (game !== before) return; // a new game took this one's place meanwhile
  if (answer !== null) game = answer;
  showError(failure ? failure.message : "");
  chosen = new Set();
  draw();
  announce(news(before, game));
  if (keepFocus) placeFocus();
}

// --- announcements ----------------------------------------------------------------------

// What happened between two views of one game, as sentences: the events of the log (the
// exchanges and swaps, each trick with its winner, each round's result, the game's end)
// and the opponent's lead, if it led a card since.
function news(before, after) {
  const same = before !== null && before.game_id === after.game_id;
  const lines = after.log.slice(same ? before.log.length : 0).map((event) => event.text);
  const trick = after.table.current_trick;
  const old = same ? before.table.current_trick : null;
  const fresh = !old || old.lead.id !== trick?.lead.id || before.table.round !== after.table.round;
  if (trick && trick.leader === after.opponent && fresh) {
    lines.push(`${trick.leader} leads ${trick.lead.name}${trick.declared ? `, declaring ${trick.declared}` : ""}.`);
  }
  return lines;
}

function announce(lines) {
  const said = lines.filter((line) => line);
  if (said.length) $("announce").replaceChildren(...said.map((line) => el("p", { text: line })));
}

// --- focus ------------------------------------------------------------------------------

function focusInGame() {
  const active = document.activeElement;
  return !active || active === document.body || $("table").contains(active);
}

// After a move or a new game: the colours to declare, else the result once the game is
// over, else the hand's tab stop.
function placeFocus() {
  if (game === null) return;
  const colour = $("declare").querySelector("button");
  if (colour && !$("declare").classList.contains("hidden")) colour.focus();
  else if (game.game_over) $("result").focus();
  else {
    const card = $("hand").querySelector('[tabindex="0"]');
    if (card) card.focus();
  }
}

// Arrow keys, Home and End move the focus between the hand's cards (and its tab stop).
function handKeys(event) {
  const cards = [...$("hand").querySelectorAll(".card")];
  const at = cards.indexOf(document.activeElement);
  if (at < 0) return;
  const moves = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1, Home: 0, End: cards.length - 1 };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const next = cards[(moves[event.key] + cards.length) % cards.length];
  for (const card of cards) card.tabIndex = card === next ? 0 : -1;
  handStop = Number(next.dataset.id);
  next.focus();
}

// --- drawing ----------------------------------------------------------------------------

function draw() {
  const t = game.table;
  $("table").classList.remove("hidden");
  $("goal").textContent = game.you === "jekyll"
    ? "You play Jekyll: keep the trick counts level. The marker moves by the difference after each round; you win if it is short of 10 after round 3."
    : "You play Hyde: drive the trick counts apart. The marker moves by the difference after each round; you win as soon as it reaches 10.";
  $("status-text").textContent = game.game_over
    ? `Game over after round ${t.round}. `
    : `Round ${t.round} of 3. You are ${game.you}, against ${game.opponent_agent}. `;
  $("prompt").textContent = t.prompt || "";
  $("track").replaceChildren(trackEl(t.marker, t.track_end));
  $("ranks").replaceChildren(ranksEl(t.ranks));
  $("counts").replaceChildren(
    el("span", { text: "Tricks this round: you " }), el("b", { id: "tricks-you", text: t.tricks.you }),
    el("span", { text: `, ${game.opponent} ` }), el("b", { id: "tricks-opponent", text: t.tricks.opponent }),
  );
  $("opponent-title").textContent = `${game.opponent}'s hand (${plural(t.opponent_hand_size, "card")})`;
  const known = t.opponent_known.map((card) => cardEl(card, "small known"));
  const backs = [];
  for (let i = known.length; i < t.opponent_hand_size; i += 1) backs.push(backEl("small"));
  $("opponent-hand").replaceChildren(...known, ...backs);
  $("current-trick").replaceChildren(trickEl(null, t.current_trick));
  $("last-trick").replaceChildren(game.last_trick ? trickEl(game.last_trick, null) : trickEl(null, null));
  $("last-explain").replaceChildren(explainEl(game.last_trick));
  drawHand(t);
  drawDeclare(t);
  $("rounds").replaceChildren(roundsEl(t.rounds));
  const ends = game.log.filter((e) => e.kind === "round");
  $("round-note").classList.toggle("hidden", ends.length === 0);
  $("round-note").textContent = ends.length ? ends[ends.length - 1].text : "";
  fillList($("log"), game.log);
  const banner = $("result");
  if (game.game_over) {
    const r = game.result;
    banner.className = `banner ${r.you_won ? "won" : "lost"}`;
    banner.replaceChildren(
      el("b", { text: r.you_won ? "You won. " : "You lost. " }),
      `${r.winner} wins: ${r.reason}. `,
      el("a", { id: "replay-link", href: `/replay?game=${game.game_id}#token=${token}`, text: "Replay this game" }),
      " \u00b7 ",
      el("a", { id: "record-link", href: `/api/games/${game.game_id}/record?token=${token}`, download: `jekyll-hyde-${r.seed}.json`, text: "Save the game record" }),
      ` \u00b7 deals from seed ${r.seed}`,
    );
  } else {
    banner.className = "banner hidden";
  }
}

// Whether the card `id` of the hand may be played now, or chosen in an exchange or Greed
// swap: there only the cards that can still complete a legal give (with the cards chosen
// so far) may be chosen, and a chosen card may be put back.
function playable(t, id) {
  if (!t.your_turn || game.game_over) return false;
  if (t.choose > 0) return chosen.has(id) || (chosen.size < t.choose && canChoose(t.legal_gives, chosen, id));
  return t.legal_cards.includes(id);
}

// Why the card `id` of the hand may not be played or chosen now (`playable` is false),
// from what the page was sent: the person's own cards and the table, as RULES.md says.
function whyNot(t, id) {
  const card = t.hand.find((c) => c.id === id);
  if (game.game_over) return "The game is over: start a new game to play again.";
  if (!t.your_turn) return `Wait: it is ${t.to_act}'s turn.`;
  if (t.choose > 0) {
    if (t.picks.some((c) => c.id === id)) return `You chose ${card.name} already.`;
    if (chosen.size >= t.choose) {
      return `You have chosen ${plural(t.choose, "card")} already: choose one of them again to put it back, or give them.`;
    }
    if (t.phase === "exchange") {
      // R2.2, potion rule: a player dealt two or more potions hands over at least one.
      return `You cannot give ${card.name} with the cards chosen: you were dealt two or more potions, so you must give at least one (R2.2).`;
    }
    return `You cannot give ${card.name} now.`;
  }
  if (t.declare.length) return "Declare a colour first: you led a potion, so you name a colour (T2).";
  const trick = t.current_trick;
  if (t.phase === "follow" && trick) {
    const colour = trick.declared || trick.lead.colour;
    if (trick.lead.potion) {
      // T3b: against a potion that named colour C, a card of colour C and no potion,
      // when the hand holds some card of colour C.
      return `You must answer with ${colour}, the colour named with the potion, and no potion, while you hold ${colour} (T3b).`;
    }
    // T3a: against a colour card of colour C, a card of colour C or a potion, when the
    // hand holds some card of colour C.
    return `You must follow the led colour, ${colour}, or play a potion, while you hold ${colour} (T3a).`;
  }
  return `You cannot play ${card.name} now.`;
}

// The hand: one button per card; the cards you may play glow, the others are
// aria-disabled (still focusable) and dimmed.
function drawHand(t) {
  const hand = $("hand");
  const focused = hand.contains(document.activeElement) ? Number(document.activeElement.dataset.id) : null;
  const choosing = t.choose > 0;
  const picked = new Set(t.picks.map((c) => c.id));
  const ids = t.hand.map((card) => card.id);
  let stop = [focused, handStop].find((id) => id !== null && ids.includes(id));
  if (stop === undefined) stop = ids.find((id) => playable(t, id)) ?? ids[0] ?? null;
  handStop = stop;
  const cards = t.hand.map((card) => {
    const ok = playable(t, card.id);
    let cls = ok ? "legal" : (t.your_turn ? "illegal" : "");
    if (chosen.has(card.id) || picked.has(card.id)) cls += " selected";
    const node = cardEl(card, cls, "button");
    node.setAttribute("aria-disabled", String(!ok));
    if (choosing) node.setAttribute("aria-pressed", String(chosen.has(card.id) || picked.has(card.id)));
    node.tabIndex = card.id === stop ? 0 : -1;
    node.addEventListener("click", () => clickCard(card.id));
    return node;
  });
  hand.replaceChildren(...cards);
  if (focused !== null) hand.querySelector('[tabindex="0"]')?.focus();
  $("hand-title").textContent = `Your hand (${game.you})`;
  const give = $("give");
  give.classList.toggle("hidden", !choosing);
  give.setAttribute("aria-disabled", String(!choosing || chosenGive(t.legal_gives, chosen) === null));
  const what = t.phase === "swap" ? "Greed swap" : "exchange";
  give.textContent = `Give ${plural(t.choose, "card")} (${what})`;
  let note = choosing ? `chosen ${chosen.size} of ${t.choose}` : "";
  const barred = (c) => !picked.has(c.id) && !chosen.has(c.id) && !playable(t, c.id);
  if (choosing && t.phase === "exchange" && chosen.size < t.choose && t.hand.some(barred)) {
    note += ". You were dealt two or more potions: give at least one (R2.2)";
  }
  $("choose-note").textContent = note;
}

function sendGive() {
  if (busy() || game === null) return;
  const t = game.table;
  const give = chosenGive(t.legal_gives, chosen);
  if (give) send({ actions: give });
  else if (t.choose > 0) showError(`Choose ${plural(t.choose, "card")} to give first: ${chosen.size} chosen so far.`);
}

function clickCard(id) {
  if (busy() || game === null) return;
  const t = game.table;
  if (!playable(t, id)) {
    showError(whyNot(t, id));
    return;
  }
  if (t.choose > 0) {
    if (chosen.has(id)) chosen.delete(id);
    else chosen.add(id);
    showError("");
    drawHand(t);
    return;
  }
  send({ action: id });
}

function drawDeclare(t) {
  const box = $("declare");
  box.classList.toggle("hidden", t.declare.length === 0);
  box.replaceChildren(
    el("span", { text: "Declare a colour: " }),
    ...t.declare.map((d) => el("button", { type: "button", class: d.colour, "data-action": d.action, text: d.colour, onclick: () => send({ action: d.action }) })),
  );
}

document.addEventListener("DOMContentLoaded", () => {
  $("setup").addEventListener("submit", newGame);
  $("show-setup").addEventListener("click", toggleSetup);
  $("give").addEventListener("click", sendGive);
  $("hand").addEventListener("keydown", handKeys);
  loadAgents().catch((error) => showError(error.message));
});

// Leaving the page ends its game on the server (a request that outlives the page); a
// page brought back from the browser's cache then starts afresh.
window.addEventListener("pagehide", () => {
  if (game !== null && token !== null && !game.game_over) {
    endGame(true);
    endedOnLeave = true;
  }
});
window.addEventListener("pageshow", (event) => {
  if (!event.persisted || !endedOnLeave) return;
  endedOnLeave = false;
  game = null;
  token = null;
  $("table").classList.add("hidden");
  fold(false);
  showError("This game ended when you left the page: start a new one.");
});
