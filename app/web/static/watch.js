// The watch page: two agents play each other, one decision per step, at a chosen speed.
"use strict";

let watchId = null;
let watchToken = null; // the watched game's secret, from the answer that created it
let running = false;
let lastTrick = null;
let log = [];
const $ = (id) => document.getElementById(id);

function showError(message) {
  $("error").textContent = message || "";
}

function speedLabel() {
  $("speed-label").textContent = `${(Number($("speed").value) / 1000).toFixed(1)} s per move`;
}

function draw(frame) {
  $("table").classList.remove("hidden");
  for (const event of frame.events) {
    if (event.kind === "trick") lastTrick = event;
  }
  log = log.concat(frame.events);
  $("said").textContent = frame.said;
  $("think").textContent = frame.think_seconds !== undefined ? `(thought ${frame.think_seconds} s)` : "";
  $("track").replaceChildren(trackEl(frame.marker, frame.track_end));
  $("ranks").replaceChildren(ranksEl(frame.ranks));
  $("counts").replaceChildren(`Round ${frame.round}. Tricks: jekyll `, el("b", { text: frame.tricks.jekyll }), `, hyde `, el("b", { text: frame.tricks.hyde }));
  for (const who of ["jekyll", "hyde"]) {
    $(`${who}-title`).textContent = `${who} (${frame.players[who]})`;
    $(`${who}-hand`).replaceChildren(...frame.hands[who].map((card) => cardEl(card, "small")));
  }
  $("current-trick").replaceChildren(trickEl(null, frame.current_trick));
  $("last-trick").replaceChildren(trickEl(lastTrick, null));
  $("explain").replaceChildren(explainEl(lastTrick));
  $("rounds").replaceChildren(roundsEl(frame.rounds));
  fillList($("log"), log);
  const banner = $("result");
  banner.classList.toggle("hidden", !frame.game_over);
  banner.textContent = frame.game_over ? `Game over: ${frame.winner} wins: ${frame.reason}. Deals from seed ${frame.seed}.` : "";
  if (frame.game_over) stop();
}

function stop() {
  running = false;
  $("pause").disabled = true;
  $("step").disabled = true;
  $("start").disabled = false;
}

async function step() {
  const frame = await api("POST", `/api/watch/${watchId}/step`, undefined, watchToken);
  showError(""); // an error of an earlier step is over
  draw(frame);
  return frame;
}

async function run() {
  while (running) {
    try {
      await step();
    } catch (error) {
      showError(error.message);
      stop();
      return;
    }
    if (!running) return;
    await new Promise((resolve) => setTimeout(resolve, Number($("speed").value)));
  }
}

async function start(event) {
  event.preventDefault();
  showError("");
  const body = {};
  if ($("jekyll").value) body.jekyll = $("jekyll").value;
  if ($("hyde").value) body.hyde = $("hyde").value;
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    const frame = await api("POST", "/api/watch", body);
    watchId = frame.watch_id;
    watchToken = frame.token;
    lastTrick = null;
    log = [];
    draw(frame);
  } catch (error) {
    showError(error.message);
    return;
  }
  running = true;
  $("start").disabled = true;
  $("pause").disabled = false;
  $("step").disabled = false;
  run();
}

function pause() {
  if (running) {
    running = false;
    $("pause").textContent = "Resume";
  } else {
    running = true;
    $("pause").textContent = "Pause";
    run();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  speedLabel();
  $("speed").addEventListener("input", speedLabel);
  $("setup").addEventListener("submit", start);
  $("pause").addEventListener("click", pause);
  $("step").addEventListener("click", () => step().catch((error) => showError(error.message)));
  api("GET", "/api/agents").then((data) => {
    // The server's agents; heuristic against champion when both are offered.
    const offered = (spec) => (data.allowed.includes(spec) ? spec : data.default);
    for (const [who, spec] of [["jekyll", "heuristic"], ["hyde", "champion"]]) {
      $(who).replaceChildren(...data.allowed.map((name) => el("option", { value: name, text: agentLabel(name) })));
      $(who).value = offered(spec);
    }
  }).catch((error) => showError(error.message));
});
