// The page: one WebSocket to the server, which keeps the game and runs the searches; this
// module only draws what the server sends and sends what the person does.

import { Board } from "./board.js";
import { WinRateGraph } from "./graph.js";

const $ = (id) => document.getElementById(id);
const COLOUR = { 1: "black", 2: "white" };

let socket = null;
let state = null;         // the last "state" message
let analysis = null;      // the last analysis of the position on the board
let rates = new Map();    // ply -> black win rate
let mistakes = [];
let models = [];
let messageTimer = null;

let clickedAt = null;      // when the person last played, to time the model's reply
const board = new Board($("board"), $("points"), {
  onClick: (name) => { clickedAt = performance.now(); send({ type: "move", move: name }); },
});
const graph = new WinRateGraph($("graph"), (ply) => send({ type: "goto", ply }));

function send(msg) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
}

function showMessage(text, kind = "error") {
  const box = $("message");
  box.textContent = text;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 10000 : 6000);
}

const pct = (v) => `${Math.round((v + 1) * 50)}%`;

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws`);
  $("connection").textContent = "connecting…";
  socket.addEventListener("open", () => {
    $("connection").textContent = "connected";
    $("connection").dataset.state = "open";
  });
  socket.addEventListener("close", () => {
    $("connection").textContent = "disconnected: reload the page";
    $("connection").dataset.state = "closed";
  });
  socket.addEventListener("message", (e) => {
    const msg = JSON.parse(e.data);
    const handler = handlers[msg.type];
    if (handler) handler(msg);
  });
}

let openedFromUrl = false;

const handlers = {
  info(msg) {
    models = msg.models.map((m) => m.name);
    const seats = ["human", ...models];
    if (!models.length) seats.push("pure MCTS");
    for (const id of ["black", "white"]) fill($(id), seats);
    for (const id of ["compare-a", "compare-b"]) fill($(id), models.length ? models : ["pure MCTS"]);
    if (models.length > 1) $("compare-b").value = models[1];
    const sizes = [];
    for (let s = msg.sizes[0]; s <= msg.sizes[1]; s++) sizes.push(String(s));
    fill($("size"), sizes);
    $("run-games").hidden = !msg.run_games;
    if (msg.run_games) send({ type: "run_games" });
    if (!openedFromUrl) {
      openedFromUrl = true;
      const params = new URLSearchParams(location.hash.slice(1));
      if (params.has("moves") || params.has("size")) {
        const msgNew = { type: "new", black: "human", white: "human",
                         size: parseInt(params.get("size") || "15", 10),
                         rule: params.get("rule") || "freestyle", moves: params.get("moves") || "" };
        send(msgNew);
        if (params.has("ply")) send({ type: "goto", ply: parseInt(params.get("ply"), 10) });
      }
    }
  },

  state(msg) {
    const sizeChanged = !state || state.size !== msg.size;
    const plyChanged = !state || state.cursor !== msg.cursor || state.position !== msg.position;
    state = msg;
    if (plyChanged) analysis = null;
    board.setSize(msg.size);
    $("black").value = msg.black;
    $("white").value = msg.white;
    $("rule").value = msg.rule;
    $("size").value = String(msg.size);
    $("strength-kind").value = msg.strength.kind;
    $("strength-value").value = String(msg.strength.value);
    $("think").checked = msg.think;
    $("position").value = msg.position;
    if (sizeChanged) rates = new Map();
    const turn = $("turn");
    turn.dataset.over = String(msg.over);
    turn.dataset.toMove = COLOUR[msg.to_move];
    if (msg.over) {
      turn.textContent = msg.winner === 0 ? `Draw (${msg.reason})`
        : `${COLOUR[msg.winner]} wins ${msg.reason}`;
    } else {
      const seat = msg[COLOUR[msg.to_move]];
      turn.textContent = seat === "human" ? `${COLOUR[msg.to_move]} to move`
        : `${COLOUR[msg.to_move]} (${seat}) to move`;
    }
    renderMoves();
    renderBoard();
    renderAnalysis();
    const hash = new URLSearchParams({ size: msg.size, rule: msg.rule, moves: msg.moves.join("") });
    if (msg.cursor !== msg.moves.length) hash.set("ply", msg.cursor);
    history.replaceState(null, "", `#${hash}`);
  },

  values(msg) {
    rates = new Map(Object.entries(msg.black_win_rate).map(([k, v]) => [parseInt(k, 10), v]));
    mistakes = msg.mistakes;
    renderMoves();
    if (msg.review) {
      $("mistakes").textContent = msg.review.done < msg.review.of
        ? `reviewing… ${msg.review.done} of ${msg.review.of}` : mistakesText();
    }
  },

  thinking(msg) {
    const s = msg.strength;
    $("turn").textContent = `${COLOUR[msg.colour]} (${msg.model}) is thinking… ` +
      (s.kind === "seconds" ? `${s.value} s` : `${s.value} simulations`);
    $("turn").dataset.thinking = "true";
  },

  model_move(msg) {
    $("turn").dataset.thinking = "false";
    $("turn").dataset.seconds = String(msg.seconds);
    // The model's reply as the person sees it: from their click to the move on the page.
    if (clickedAt !== null) $("turn").dataset.replyMs = String(Math.round(performance.now() - clickedAt));
    clickedAt = null;
    if (msg.note) showMessage(`${msg.model}: ${msg.note}`, "notice");
  },

  analysis(msg) {
    if (!state || msg.ply !== state.cursor) return;
    // A live snapshot of the model's own move search lacks the network's view: keep it.
    analysis = { ...(analysis || {}), ...msg };
    renderAnalysis();
  },

  compare(msg) { renderCompare(msg); },
  error(msg) { showMessage(msg.message, "error"); },
  notice(msg) { showMessage(msg.message, "notice"); },
  loaded(msg) { showMessage(`Loaded: ${msg.title}. Use ← → to step through it.`, "notice"); },
  stopped() {},

  run_games(msg) {
    const sel = $("run-file");
    sel.replaceChildren();
    for (const f of msg.files) {
      const o = document.createElement("option");
      o.value = f.file; o.textContent = `${f.file} (${f.games} games)`;
      sel.appendChild(o);
    }
  },
};

function fill(select, values) {
  const keep = select.value;
  select.replaceChildren();
  for (const v of values) {
    const o = document.createElement("option");
    o.value = v; o.textContent = v;
    select.appendChild(o);
  }
  if (values.includes(keep)) select.value = keep;
}

function mistakesText() {
  if (!mistakes.length) return "";
  return "Lost most: " + mistakes.map((m) =>
    `${m.ply}. ${m.move} (−${Math.round(m.loss * 100)}%)`).join(", ");
}

function renderMoves() {
  if (!state) return;
  const list = $("move-list");
  list.replaceChildren();
  const bad = new Set(mistakes.map((m) => m.ply));
  state.moves.forEach((name, i) => {
    const li = document.createElement("li");
    li.textContent = `${i + 1}.${name}`;
    li.dataset.ply = String(i + 1);
    if (i + 1 === state.cursor) li.className = "current";
    if (bad.has(i + 1)) li.classList.add("mistake");
    li.addEventListener("click", () => send({ type: "goto", ply: i + 1 }));
    list.appendChild(li);
  });
  const current = list.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  $("mistakes").textContent = mistakesText();
  graph.update({ rates, plies: state.moves.length, cursor: state.cursor, mistakes });
}

function renderBoard(preview = []) {
  if (!state) return;
  const stones = new Map();
  state.moves.slice(0, state.cursor).forEach((name, i) => stones.set(name, i % 2 === 0 ? 1 : 2));
  const mode = document.querySelector('input[name="heatmap"]:checked').value;
  let heat = null;
  if (analysis && !state.over) {
    heat = mode === "policy" ? (analysis.policy || null) : mode === "visits" ? analysis.visit_share : null;
  }
  $("heatmap-toggle").dataset.shown = heat ? mode : "none";
  const marks = [];
  if (analysis && analysis.solver && !preview.length) {
    const s = analysis.solver;
    s.line.forEach((name, i) => {
      if (name !== "-") marks.push({ name, colour: i % 2 === 0 ? s.attacker : 3 - s.attacker, text: String(i + 1) });
    });
  }
  board.update({
    stones, last: state.cursor ? state.moves[state.cursor - 1] : null,
    winLine: state.win_line, forbidden: state.forbidden, heat, marks, preview,
  });
}

function renderAnalysis() {
  const a = analysis;
  const body = $("candidates").querySelector("tbody");
  body.replaceChildren();
  $("value-head").textContent = a && a.value_head !== undefined ? pct(a.value_head) : "–";
  $("search-value").textContent = a ? (a.solved ? `${a.solved} (proved)` : pct(a.search_value)) : "–";
  $("visits").textContent = a ? String(a.visits) + (a.live ? "…" : "") : "–";
  const side = state ? COLOUR[state.to_move] : "";
  $("values").title = `win chances for ${side}, the side to move`;
  const solver = $("solver");
  if (a && a.solver) {
    solver.hidden = false;
    solver.dataset.kind = a.solver.kind;
    const who = COLOUR[a.solver.attacker];
    const title = { vcf: `${who} wins by fours (VCF):`, vct: `${who} wins by threats from`,
                    threat: `${who} threatens a VCF:` }[a.solver.kind];
    $("solver-line").textContent = `${title} ` + a.solver.line.map((m, i) => `${i + 1}.${m}`).join(" ");
    solver.title = $("solver-line").textContent;
  } else {
    solver.hidden = true;
  }
  if (a) {
    for (const c of a.candidates) {
      const tr = document.createElement("tr");
      tr.dataset.move = c.move;
      const win = c.solved ? c.solved : pct(c.value);
      for (const text of [c.move, c.visits, win, `${(c.prior * 100).toFixed(1)}%`, c.pv.join(" ")]) {
        const td = document.createElement("td");
        td.textContent = String(text);
        tr.appendChild(td);
      }
      tr.addEventListener("mouseenter", () => previewLine(c.pv));
      tr.addEventListener("mouseleave", () => renderBoard());
      tr.addEventListener("click", () => {
        if (state && !state.over && state[COLOUR[state.to_move]] === "human") send({ type: "move", move: c.move });
      });
      body.appendChild(tr);
    }
  }
  renderBoard();
}

function previewLine(pv) {
  if (!state) return;
  const first = state.to_move;
  renderBoard(pv.map((name, i) => ({ name, colour: i % 2 === 0 ? first : 3 - first, text: String(i + 1) })));
}

function renderCompare(msg) {
  const out = $("compare-out");
  out.replaceChildren();
  for (const r of msg.results) {
    const div = document.createElement("div");
    div.className = "side";
    const title = document.createElement("strong");
    title.textContent = r.model;
    const canvas = document.createElement("canvas");
    const info = document.createElement("div");
    const top = r.candidates.slice(0, 3).map((c) => `${c.move} ${c.visits}`).join(", ");
    info.textContent = (r.value_head !== undefined ? `net ${pct(r.value_head)} · ` : "") +
      `search ${pct(r.search_value)} · ${top}`;
    div.append(title, canvas, info);
    out.appendChild(div);
    const mini = new Board(canvas, null, { labels: false });
    mini.setSize(msg.size || state.size);
    const stones = new Map();
    state.moves.slice(0, state.cursor).forEach((name, i) => stones.set(name, i % 2 === 0 ? 1 : 2));
    requestAnimationFrame(() => mini.update({ stones, heat: r.policy || r.visit_share }));
  }
}

// -- controls -------------------------------------------------------------------------------
function strength() {
  return { kind: $("strength-kind").value, value: parseFloat($("strength-value").value) };
}

$("new-game").addEventListener("click", () => {
  const s = strength();
  if (!(s.value > 0)) { showMessage("the strength must be a positive number"); return; }
  send({ type: "settings", strength: s, think: $("think").checked });
  send({ type: "new", size: parseInt($("size").value, 10), rule: $("rule").value,
         black: $("black").value, white: $("white").value });
});
for (const id of ["strength-kind", "strength-value"]) {
  $(id).addEventListener("change", () => {
    const s = strength();
    if (s.value > 0) send({ type: "settings", strength: s });
  });
}
$("think").addEventListener("change", () => send({ type: "settings", think: $("think").checked }));
$("message").addEventListener("click", () => { $("message").hidden = true; });
$("undo").addEventListener("click", () => send({ type: "undo" }));
$("resign").addEventListener("click", () => send({ type: "resign" }));
$("analyse").addEventListener("click", () => send({ type: "analyse", simulations: 2000 }));
$("stop").addEventListener("click", () => send({ type: "stop" }));
$("review").addEventListener("click", () => send({ type: "review" }));
$("compare").addEventListener("click", () => send({ type: "compare", models: [$("compare-a").value, $("compare-b").value] }));
for (const r of document.querySelectorAll('input[name="heatmap"]')) r.addEventListener("change", () => renderBoard());
$("load-position").addEventListener("click", () => {
  send({ type: "new", size: state ? state.size : 15, rule: state ? state.rule : "freestyle",
         black: "human", white: "human", moves: $("position").value });
});
$("position").addEventListener("keydown", (e) => { if (e.key === "Enter") $("load-position").click(); });
$("copy-position").addEventListener("click", async () => {
  const text = location.href;
  try {
    await navigator.clipboard.writeText(text);
    showMessage("Link to this position copied", "notice");
  } catch {
    $("position").select();
    showMessage("Select and copy the position string (the browser refused the clipboard)", "notice");
  }
});
$("psq").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (file) send({ type: "load_psq", text: await file.text() });
  e.target.value = "";
});
$("load-run-game").addEventListener("click", () => {
  send({ type: "load_run_game", file: $("run-file").value, index: parseInt($("run-index").value, 10) || 0 });
});
document.addEventListener("keydown", (e) => {
  if (!state || ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
  const steps = { ArrowLeft: state.cursor - 1, ArrowRight: state.cursor + 1, Home: 0, End: state.moves.length };
  if (!(e.key in steps)) return;
  e.preventDefault();
  const ply = Math.max(0, Math.min(state.moves.length, steps[e.key]));
  if (ply !== state.cursor) send({ type: "goto", ply });
});

connect();
