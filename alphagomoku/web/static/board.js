// The board: a canvas for the drawing, and one transparent button per point on top of it, so
// every point can be clicked, focused and found by tests as [data-point="h8"].

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

export function pointName(x, y, size) {
  return `${LETTERS[x]}${size - y}`;
}

export function pointXY(name, size) {
  const x = LETTERS.indexOf(name[0]);
  const y = size - parseInt(name.slice(1), 10);
  return [x, y];
}

export class Board {
  constructor(canvas, points, { onClick = null, labels = true } = {}) {
    this.canvas = canvas;
    this.points = points;
    this.onClick = onClick;
    this.labels = labels;
    this.size = 0;
    this.view = { stones: new Map(), last: null, winLine: [], forbidden: [], heat: null,
                  marks: [], preview: [] };
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => this.draw()).observe(canvas);
    }
  }

  setSize(size) {
    if (size === this.size) return;
    this.size = size;
    if (!this.points) return;
    this.points.replaceChildren();
    this.points.style.gridTemplateColumns = `repeat(${size}, 1fr)`;
    this.points.style.gridTemplateRows = `repeat(${size}, 1fr)`;
    const pad = this.padding();
    this.points.style.padding = `${pad * 100}%`;
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const b = document.createElement("button");
        const name = pointName(x, y, size);
        b.dataset.point = name;
        b.dataset.stone = "";
        b.setAttribute("aria-label", name);
        b.addEventListener("click", () => this.onClick && this.onClick(name));
        this.points.appendChild(b);
      }
    }
  }

  // The margin around the grid, as a share of the board's width (room for coordinates).
  padding() {
    return this.labels ? 0.55 / (this.size + 1.1) : 0.5 / this.size;
  }

  // view: stones (Map name -> 1 black / 2 white), last, winLine, forbidden, heat (array per
  // point or null), marks ([{name, text}] numbered ghosts), preview ([{name, colour, text}]).
  update(view) {
    Object.assign(this.view, view);
    if (this.points) {
      // What the canvas shows, also on the points themselves (for tests and screen readers).
      const forbidden = new Set(this.view.forbidden), win = new Set(this.view.winLine);
      for (const b of this.points.children) {
        const name = b.dataset.point;
        const s = this.view.stones.get(name);
        b.dataset.stone = s === 1 ? "black" : s === 2 ? "white" : "";
        b.toggleAttribute("data-forbidden", forbidden.has(name));
        b.toggleAttribute("data-win", win.has(name));
        b.setAttribute("aria-label", `${name}${s ? ` ${b.dataset.stone}` : ""}` +
          `${forbidden.has(name) ? " forbidden" : ""}${win.has(name) ? " winning line" : ""}`);
      }
    }
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const px = c.clientWidth;
    if (!px || !this.size) return;
    const ratio = window.devicePixelRatio || 1;
    if (c.width !== Math.round(px * ratio)) {
      c.width = c.height = Math.round(px * ratio);
    }
    const g = c.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    const n = this.size;
    const margin = this.padding() * px;
    const cell = (px - 2 * margin) / n;
    const at = (i) => margin + cell * (i + 0.5);
    g.fillStyle = "#e3bd7a";
    g.fillRect(0, 0, px, px);
    g.strokeStyle = "#5a4320";
    g.lineWidth = 1;
    g.beginPath();
    for (let i = 0; i < n; i++) {
      g.moveTo(at(0), at(i)); g.lineTo(at(n - 1), at(i));
      g.moveTo(at(i), at(0)); g.lineTo(at(i), at(n - 1));
    }
    g.stroke();
    if (this.labels) {
      g.fillStyle = "#5a4320";
      g.font = `${Math.max(8, cell * 0.32)}px system-ui, sans-serif`;
      g.textAlign = "center"; g.textBaseline = "middle";
      for (let i = 0; i < n; i++) {
        g.fillText(LETTERS[i], at(i), margin * 0.45);
        g.fillText(String(n - i), margin * 0.45, at(i));
      }
    }
    const xy = (name) => pointXY(name, n);
    // Star points: the centre, and the 4-4 points of boards large enough to have them.
    g.fillStyle = "#5a4320";
    const mid = (n - 1) / 2, off = n >= 13 ? 3 : 2;
    const stars = Number.isInteger(mid) ? [[mid, mid]] : [];
    if (n >= 9) for (const a of [off, n - 1 - off]) for (const b of [off, n - 1 - off]) stars.push([a, b]);
    for (const [x, y] of stars) { g.beginPath(); g.arc(at(x), at(y), Math.max(2, cell * 0.08), 0, 7); g.fill(); }

    const heat = this.view.heat;
    // Numbered stones (a proved line, a previewed one) are not hidden under the heatmap.
    const covered = new Set([...this.view.marks, ...this.view.preview].map((m) => m.name));
    if (heat) {
      let top = 0;
      for (const v of heat) top = Math.max(top, v);
      if (top > 0) {
        for (let i = 0; i < heat.length; i++) {
          const v = heat[i];
          if (v <= 0) continue;
          const x = i % n, y = Math.floor(i / n);
          const name = pointName(x, y, n);
          if (this.view.stones.has(name) || covered.has(name)) continue;
          const share = v / top;
          g.fillStyle = `rgba(214, 48, 39, ${0.12 + 0.7 * share})`;
          const r = cell * (0.18 + 0.27 * Math.sqrt(share));
          g.beginPath(); g.arc(at(x), at(y), r, 0, 7); g.fill();
          if (v >= 0.01 && cell > 18) {
            g.fillStyle = share > 0.5 ? "#fff" : "#4a1410";
            g.font = `${cell * 0.3}px system-ui, sans-serif`;
            g.textAlign = "center"; g.textBaseline = "middle";
            g.fillText(Math.round(v * 100), at(x), at(y));
          }
        }
      }
    }
    g.strokeStyle = "#b3261e"; g.lineWidth = Math.max(1.5, cell * 0.07);
    for (const name of this.view.forbidden) {
      const [x, y] = xy(name), d = cell * 0.2;
      g.beginPath();
      g.moveTo(at(x) - d, at(y) - d); g.lineTo(at(x) + d, at(y) + d);
      g.moveTo(at(x) + d, at(y) - d); g.lineTo(at(x) - d, at(y) + d);
      g.stroke();
    }
    for (const [name, colour] of this.view.stones) {
      const [x, y] = xy(name);
      this.stone(g, at(x), at(y), cell, colour, 1);
    }
    const win = new Set(this.view.winLine);
    if (win.size) {
      g.strokeStyle = "#d62f27"; g.lineWidth = Math.max(2, cell * 0.1);
      for (const name of win) {
        const [x, y] = xy(name);
        g.beginPath(); g.arc(at(x), at(y), cell * 0.47, 0, 7); g.stroke();
      }
    }
    if (this.view.last && !win.has(this.view.last)) {
      const [x, y] = xy(this.view.last);
      g.fillStyle = "#d62f27";
      g.beginPath(); g.arc(at(x), at(y), cell * 0.12, 0, 7); g.fill();
    }
    for (const m of [...this.view.marks, ...this.view.preview]) {
      const [x, y] = xy(m.name);
      if (m.colour) this.stone(g, at(x), at(y), cell, m.colour, 0.6);
      else {
        g.fillStyle = "rgba(47, 111, 79, 0.85)";
        g.beginPath(); g.arc(at(x), at(y), cell * 0.3, 0, 7); g.fill();
      }
      g.fillStyle = m.colour === 1 ? "#fff" : m.colour === 2 ? "#000" : "#fff";
      g.font = `600 ${cell * 0.38}px system-ui, sans-serif`;
      g.textAlign = "center"; g.textBaseline = "middle";
      g.fillText(m.text, at(x), at(y) + 0.5);
    }
  }

  stone(g, x, y, cell, colour, alpha) {
    g.globalAlpha = alpha;
    g.fillStyle = colour === 1 ? "#151515" : "#fafafa";
    g.beginPath(); g.arc(x, y, cell * 0.45, 0, 7); g.fill();
    g.strokeStyle = "#333"; g.lineWidth = 1; g.stroke();
    g.globalAlpha = 1;
  }
}
