// Drawing helpers shared by the play, replay and watch pages.
"use strict";

const SYMBOLS = { pride: "\u265B", wrath: "\u2668", greed: "\u25C6", potion: "\u2697" };

// `token`: the game's secret, given when it was created; the server asks for it on every
// later request for that game.
async function api(method, path, body, token) {
  const options = { method, headers: {} };
  if (token) options.headers["X-Game-Token"] = token;
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data;
  try {
    data = await response.json();
  } catch (e) {
    throw new Error(`${method} ${path}: answer is not JSON (status ${response.status})`);
  }
  if (!response.ok) throw new Error(data.error || `status ${response.status}`);
  return data;
}

// An agent spec with a few words on what it is, for the lists of agents a server offers
// (`GET /api/agents`): the play page's opponent, the watch page's two players.
function agentLabel(spec) {
  const [name, count] = spec.split(":");
  const simulations = /^\d+$/.test(count || "") ? `, ${plural(Number(count), "simulation")} a move` : "";
  const words = {
    champion: "the trained champion",
    heuristic: "plays by simple rules",
    lowest: "plays its lowest legal card",
    random: "plays any legal card",
    ismcts: `search${simulations}`,
    az: `network and search${simulations}`,
  };
  return Object.hasOwn(words, name) ? `${spec} (${words[name]})` : spec;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// `count` and `noun`, the noun plural unless the count is one: "1 card", "2 cards".
function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

// A card face: colour border, large value, name below, id in data-id. A card to look at
// is an image named by the card's name; the play page's hand makes its cards buttons
// (`tag` "button"), named the same way.
function cardEl(card, extraClass, tag) {
  const value = card.potion ? `${card.value}+` : String(card.value);
  const button = tag === "button";
  return el(
    button ? "button" : "div",
    {
      class: `card ${card.colour} ${extraClass || ""}`,
      "data-id": card.id,
      title: `${card.name} (id ${card.id})`,
      ...(button ? { type: "button" } : { role: "img" }),
      "aria-label": card.name,
    },
    el("span", { class: "sym", text: SYMBOLS[card.colour], "aria-hidden": "true" }),
    el("span", { class: "value", text: value, "aria-hidden": "true" }),
    el("span", { class: "name", text: card.potion ? "potion" : card.colour, "aria-hidden": "true" }),
  );
}

// A face-down card: its hand's title says how many there are.
function backEl(extraClass) {
  return el("div", { class: `card back ${extraClass || ""}`, title: "a hidden card", "aria-hidden": "true" });
}

// The identity track in one line of spaces, and a legend below it that names the ends
// (on narrow screens the end names beside the track are hidden).
function trackEl(marker, end) {
  const track = el("div", { class: "track", "data-marker": marker, "aria-hidden": "true" }); // the legend says it
  track.append(el("span", { class: "end", text: "Jekyll" }));
  for (let space = 0; space <= end; space += 1) {
    const side = space >= 5 ? " hyde-side" : "";
    const here = space === marker ? " marker" : "";
    track.append(el("span", { class: `space${side}${here}`, text: String(space) }));
  }
  track.append(el("span", { class: "end", text: "Hyde" }));
  const legend = `space 0 is Jekyll's end, ${end} Hyde's; the marker is on ${marker}`;
  return el("div", {}, track, el("div", { class: "legend track-legend", text: legend }));
}

// A hand seen by one player: the cards that player knows face up (`known`, card ids),
// then one back for each other card. Known cards come first, so their place in the
// hand tells nothing of the hidden ones.
function seenHandEls(cards, known, extraClass) {
  const knownIds = new Set(known);
  const faces = cards.filter((card) => knownIds.has(card.id)).map((card) => cardEl(card, `${extraClass} known`));
  const backs = cards.filter((card) => !knownIds.has(card.id)).map(() => backEl(extraClass));
  return [...faces, ...backs];
}

// Exchange and Greed swap: `gives` lists every set of cards that makes a legal give
// (the server's `legal_gives`). A card may be chosen when some set holds it and all
// the cards chosen so far; the give may be sent when the chosen cards are one set,
// in that set's order.
function canChoose(gives, chosen, id) {
  return gives.some((give) => give.includes(id) && [...chosen].every((c) => give.includes(c)));
}

function chosenGive(gives, chosen) {
  return gives.find((give) => give.length === chosen.size && give.every((c) => chosen.has(c))) || null;
}

function ranksEl(ranks) {
  const box = el("div", { class: "ranks", "data-ranks": ranks.join(",") });
  const names = ["weakest", "middle", "strongest"];
  if (!ranks.length) box.append(el("span", { class: "rank", text: "no colour ranked yet" }));
  ranks.forEach((colour, i) => {
    box.append(el("span", { class: `rank ${colour}`, text: `${names[i]}: ${colour}` }));
  });
  return box;
}

// A trick on the table: one slot per player, the leader first.
// `done` is a finished trick from the API; `current` the one being played.
function trickEl(done, current) {
  const box = el("div", { class: "trick" });
  if (done) {
    const order = [done.leader, done.leader === "jekyll" ? "hyde" : "jekyll"];
    order.forEach((who, i) => {
      const slot = el("div", { class: `slot ${done.winner === who ? "winner" : ""}`, "data-player": who });
      let label = who + (i === 0 ? " led" : " answered");
      if (i === 0 && done.declared) label += `, declaring ${done.declared}`;
      slot.append(cardEl(done.cards[who]), el("span", { class: "who", text: label }));
      box.append(slot);
    });
  } else if (current) {
    const follower = current.leader === "jekyll" ? "hyde" : "jekyll";
    let label = `${current.leader} led`;
    if (current.declared) label += `, declaring ${current.declared}`;
    box.append(
      el("div", { class: "slot", "data-player": current.leader }, cardEl(current.lead), el("span", { class: "who", text: label })),
      el("div", { class: "slot", "data-player": follower }, el("div", { class: "empty" }), el("span", { class: "who", text: `${follower} to answer` })),
    );
  } else {
    box.append(el("span", { class: "legend", text: "no card on the table" }));
  }
  return box;
}

function explainEl(done) {
  if (!done) return el("div", { class: "explain" });
  const box = el("div", { class: "explain" });
  box.append(el("div", { class: "reason", text: `${done.winner} wins the trick: ${done.reason}` }));
  if (done.effect_note) box.append(el("div", { class: "effect", text: done.effect_note }));
  return box;
}

function roundsEl(rounds) {
  const table = el("table", { class: "rounds" });
  table.append(el("tr", {}, el("th", { text: "round" }), el("th", { text: "jekyll" }), el("th", { text: "hyde" }), el("th", { text: "marker" })));
  for (const r of rounds) {
    table.append(el("tr", {}, el("td", { text: r.round }), el("td", { text: r.jekyll }), el("td", { text: r.hyde }), el("td", { text: r.marker })));
  }
  return rounds.length ? table : el("span");
}

function fillList(list, events) {
  list.replaceChildren(...events.map((e) => el("li", { class: `ev-${e.kind}`, text: e.text })));
  list.scrollTop = list.scrollHeight;
}

function navHere() {
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === window.location.pathname) link.classList.add("here");
  }
}
document.addEventListener("DOMContentLoaded", navHere);
