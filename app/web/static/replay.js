// The replay page: a game record stepped through trick by trick, forwards and back.
"use strict";

let replay = null;
let position = 0;
const $ = (id) => document.getElementById(id);

function showError(message) {
  $("error").textContent = message || "";
}

function load(data) {
  replay = data;
  position = 0;
  draw();
}

async function loadFile() {
  const file = $("record-file").files[0];
  if (!file) return;
  showError("");
  try {
    const record = JSON.parse(await file.text());
    load(await api("POST", "/api/replay", record));
  } catch (error) {
    showError(`${file.name}: ${error.message}`);
  }
}

// A hand as `seat` saw it: all of it for the own hand (or both seats), otherwise the
// cards that seat knows (`frame.known[seat]`: the cards it gave) and backs for the rest.
function handEl(frame, who, seat) {
  const cards = frame.hands[who];
  if (seat === "both" || seat === who) return cards.map((card) => cardEl(card, "small"));
  return seenHandEls(cards, frame.known[seat], "small");
}

function draw() {
  if (!replay) return;
  const frame = replay.frames[position];
  const seat = $("seat").value;
  $("table").classList.remove("hidden");
  $("frame-title").textContent = frame.title;
  $("players").textContent = `jekyll: ${replay.players.jekyll}, hyde: ${replay.players.hyde}`;
  $("position").textContent = `step ${position + 1} of ${replay.frames.length}`;
  $("track").replaceChildren(trackEl(frame.marker, frame.track_end));
  $("ranks").replaceChildren(ranksEl(frame.ranks));
  $("counts").replaceChildren(`Tricks this round: jekyll `, el("b", { text: frame.tricks.jekyll }), `, hyde `, el("b", { text: frame.tricks.hyde }));
  // The chosen player's hand at the bottom; the other at the top.
  const bottom = seat === "hyde" ? "hyde" : "jekyll";
  const top = bottom === "jekyll" ? "hyde" : "jekyll";
  $("top-title").textContent = `${top}'s hand (${plural(frame.hands[top].length, "card")})`;
  $("bottom-title").textContent = `${bottom}'s hand (${plural(frame.hands[bottom].length, "card")})`;
  $("top-hand").replaceChildren(...handEl(frame, top, seat));
  $("bottom-hand").replaceChildren(...handEl(frame, bottom, seat));
  $("trick").replaceChildren(trickEl(frame.trick, null));
  $("explain").replaceChildren(explainEl(frame.trick));
  $("rounds").replaceChildren(roundsEl(frame.rounds));
  fillList($("events"), frame.events);
  const banner = $("result");
  banner.classList.toggle("hidden", !frame.game_over);
  banner.textContent = frame.game_over ? `Game over: ${frame.winner} wins: ${frame.reason}` : "";
  $("prev").disabled = $("first").disabled = position === 0;
  $("next").disabled = $("last").disabled = position === replay.frames.length - 1;
}

function go(to) {
  if (!replay) return;
  position = Math.max(0, Math.min(replay.frames.length - 1, to));
  draw();
}

document.addEventListener("DOMContentLoaded", () => {
  $("record-file").addEventListener("change", loadFile);
  $("seat").addEventListener("change", draw);
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(position - 1));
  $("next").addEventListener("click", () => go(position + 1));
  $("last").addEventListener("click", () => go(Infinity));
  document.addEventListener("keydown", (event) => {
    if (event.key === "ArrowRight") go(position + 1);
    if (event.key === "ArrowLeft") go(position - 1);
  });
  const params = new URLSearchParams(window.location.search);
  const gameId = params.get("game");
  if (gameId) {
    const token = new URLSearchParams(window.location.hash.slice(1)).get("token"); // the fragment stays in the browser
    api("GET", `/api/games/${encodeURIComponent(gameId)}/replay`, undefined, token).then(load, (error) => showError(error.message));
  }
});
