// The boardcast viewer: every board as a live diagram, fed by the SSE stream. The
// first event is a snapshot of all boards; every later event carries the changed
// board's whole state, so drawing is always "replace the board".
"use strict";

const GLYPHS = { K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙",
                 k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };
const FILES = "abcdefgh";
const boardsEl = document.getElementById("boards");
const connectionEl = document.getElementById("connection");

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// 64 squares, a8 first, from a FEN's placement field.
function squares(fen) {
  const out = [];
  for (const c of (fen || "8/8/8/8/8/8/8/8").split(" ")[0]) {
    if (c === "/") continue;
    if (c >= "1" && c <= "8") for (let i = 0; i < Number(c); i++) out.push("");
    else out.push(c);
  }
  return out;
}

function statusText(state) {
  const status = state.status || { kind: "in_play" };
  switch (status.kind) {
    case "in_play": return ["in_play", "in play"];
    case "pending": return ["pending", "move in progress: " + status.candidates.join(" ")];
    case "irregular": return ["irregular", "irregular: to fix " + status.restore.join(" ")];
    case "ambiguous": return ["ambiguous", "ambiguous, waiting"];
    case "illegal_position": return ["illegal_position", "illegal position: " + status.problems.join(", ")];
    case "ended": return ["ended", "game over " + state.result];
    default: return [status.kind, status.kind];
  }
}

function moveList(moves) {
  const parts = [];
  moves.forEach((san, i) => {
    if (i % 2 === 0) parts.push((i / 2 + 1) + ".");
    parts.push(san);
  });
  return parts.join(" ");
}

function render(state) {
  let card = document.getElementById("board-" + state.id);
  if (!card) {
    card = el("section", "board");
    card.id = "board-" + state.id;
    const after = [...boardsEl.children].find((c) => Number(c.dataset.id) > state.id);
    boardsEl.insertBefore(card, after || null);
  }
  card.dataset.id = state.id;
  card.dataset.plies = state.moves.length;
  card.replaceChildren();
  const title = el("h2");
  title.append(el("span", "", "Board " + state.round), el("span", "result", state.result));
  card.append(title);
  const black = el("div", "players");
  black.append(el("span", "black", "♚ " + state.black), clock(state, "black"));
  card.append(black);

  const last = state.last_move ? [state.last_move.slice(0, 2), state.last_move.slice(2, 4)] : [];
  const grid = el("div", "grid");
  squares(state.fen).forEach((piece, i) => {
    const name = FILES[i % 8] + (8 - Math.floor(i / 8));
    const dark = (Math.floor(i / 8) + i) % 2 === 1;
    const sq = el("div", "sq " + (dark ? "dark" : "light"), GLYPHS[piece] || "");
    sq.dataset.square = name;
    if (last.includes(name)) sq.classList.add("last");
    if (state.squares_to_fix.includes(name)) sq.classList.add("fix");
    grid.append(sq);
  });
  card.append(grid);

  const white = el("div", "players");
  white.append(el("span", "white", "♔ " + state.white), clock(state, "white"));
  card.append(white);
  const [kind, text] = statusText(state);
  card.append(el("div", "status " + kind, text));
  card.append(el("div", "moves", moveList(state.moves)));
  card.append(el("div", "meta", state.port + " · " + state.connection.replace("_", " ")
    + (state.serial ? " · #" + state.serial : "")));
}

// A side's clock; the running one is marked.
function clock(state, side) {
  const running = state.clock_running === side;
  return el("span", "clock " + side + "-clock" + (running ? " running" : ""),
    (state["clock_" + side] || "") + (running ? " ◀" : ""));
}

function connect() {
  const source = new EventSource("/api/events");
  source.onopen = () => { connectionEl.textContent = "live"; connectionEl.className = "online"; };
  source.onerror = () => { connectionEl.textContent = "reconnecting…"; connectionEl.className = "offline"; };
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "snapshot") event.boards.forEach(render);
    else render(event.state);
  };
}

connect();
