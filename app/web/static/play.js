// The play page: a game against an agent, kept on the server.
"use strict";

let game = null;        // the last view the server sent
let token = null;       // the game's secret, from the answer that created it
let chosen = new Set(); // cards chosen for an exchange or a Greed swap

const $ = (id) => document.getElementById(id);

function showError(message) {
  $("error").textContent = message || "";
}

async function loadAgents() {
  const data = await api("GET", "/api/agents");
  $("agents").replaceChildren(...data.suggested.map((name) => el("option", { value: name })));
  if (!$("opponent").value) $("opponent").value = data.default;
}

async function newGame(event) {
  event.preventDefault();
  showError("");
  const body = { role: $("role").value, opponent: $("opponent").value.trim() };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  $("new-game").disabled = true;
  try {
    game = await api("POST", "/api/games", body);
    token = game.token;
    chosen = new Set();
    draw();
  } catch (error) {
    showError(error.message);
  } finally {
    $("new-game").disabled = false;
  }
}

async function send(body) {
  if (document.body.classList.contains("waiting")) return; // one move at a time
  showError("");
  document.body.classList.add("waiting");
  $("status").textContent = `${game.opponent} is thinking...`;
  try {
    game = await api("POST", `/api/games/${game.game_id}/play`, body, token);
  } catch (error) {
    showError(error.message);
  }
  chosen = new Set();
  document.body.classList.remove("waiting");
  draw();
}

function draw() {
  const t = game.table;
  $("table").classList.remove("hidden");
  $("goal").textContent = game.you === "jekyll"
    ? "You play Jekyll: keep the trick counts level. The marker moves by the difference after each round; you win if it is short of 10 after round 3."
    : "You play Hyde: drive the trick counts apart. The marker moves by the difference after each round; you win as soon as it reaches 10.";
  let status = `Round ${t.round} of 3. You are ${game.you}, against ${game.opponent_agent}. `;
  const prompt = el("span", { class: "prompt", text: t.prompt || "" });
  if (game.game_over) status = `Game over after round ${t.round}. `;
  $("status").replaceChildren(status, prompt);
  $("track").replaceChildren(trackEl(t.marker, t.track_end));
  $("ranks").replaceChildren(ranksEl(t.ranks));
  $("counts").replaceChildren(
    el("span", { text: "Tricks this round: you " }), el("b", { id: "tricks-you", text: t.tricks.you }),
    el("span", { text: `, ${game.opponent} ` }), el("b", { id: "tricks-opponent", text: t.tricks.opponent }),
  );
  $("opponent-title").textContent = `${game.opponent}'s hand (${t.opponent_hand_size} cards)`;
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

// The hand; in an exchange or Greed swap only the cards that can still complete a legal
// give (with the cards chosen so far) are lit and can be chosen.
function drawHand(t) {
  const legal = new Set(t.legal_cards);
  const choosing = t.choose > 0;
  const picked = new Set(t.picks.map((c) => c.id));
  const playable = (id) => (choosing ? chosen.has(id) || canChoose(t.legal_gives, chosen, id) : legal.has(id));
  const cards = t.hand.map((card) => {
    let cls = playable(card.id) ? "legal" : (t.your_turn ? "illegal" : "");
    if (chosen.has(card.id) || picked.has(card.id)) cls += " selected";
    const node = cardEl(card, cls);
    if (playable(card.id)) node.addEventListener("click", () => clickCard(t, card.id));
    return node;
  });
  $("hand").replaceChildren(...cards);
  $("hand-title").textContent = `Your hand (${game.you})`;
  const give = $("give");
  give.classList.toggle("hidden", !choosing);
  give.disabled = !choosing || chosenGive(t.legal_gives, chosen) === null;
  give.textContent = t.phase === "swap" ? `Give ${t.choose} card(s) (Greed swap)` : `Give ${t.choose} card(s) (exchange)`;
  let note = choosing ? `chosen ${chosen.size} of ${t.choose}` : "";
  const barred = (c) => !picked.has(c.id) && !chosen.has(c.id) && !playable(c.id);
  if (choosing && t.phase === "exchange" && chosen.size < t.choose && t.hand.some(barred)) {
    note += ". You were dealt two or more potions: give at least one (R2.2)";
  }
  $("choose-note").textContent = note;
}

function sendGive() {
  const give = chosenGive(game.table.legal_gives, chosen);
  if (give) send({ actions: give });
}

function clickCard(t, id) {
  if (t.choose > 0) {
    if (chosen.has(id)) chosen.delete(id);
    else if (chosen.size < t.choose) chosen.add(id);
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
  $("give").addEventListener("click", sendGive);
  loadAgents().catch((error) => showError(error.message));
});
