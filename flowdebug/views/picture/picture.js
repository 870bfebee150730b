// The teaching picture, drawn in the page from the row table (flowdebug/views/teaching.py).
// Everything the table holds came from users, models, tools or vendors: it reaches the page
// as text only (textContent, attributes set one by one), never as markup.
const SVG = "http://www.w3.org/2000/svg";
const LANE_X = ["12.5%", "37.5%", "62.5%", "87.5%"];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.setAttribute("class", cls);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// A wire name breaks where a reader would: after _ . / · , and between camelCase words, so
// "functionResponse" wraps as "function" + "Response" in a narrow column, not at any letter.
function words(parent, text) {
  const parts = String(text).split(/(?<=[_./·,:])|(?<=[a-z])(?=[A-Z])/);
  parts.forEach((part, i) => {
    if (i) parent.appendChild(document.createElement("wbr"));
    parent.appendChild(document.createTextNode(part));
  });
  return parent;
}

function arrow(row, lanes) {
  const at = (lane) => Math.max(0, lanes.indexOf(lane === "mcp" ? "tool" : lane));
  const a = at(row.from), b = at(row.to);
  const box = svg("svg", {class: "fdp-arrow", width: "100%", height: 18, "aria-hidden": "true"});
  if (a === b) {
    box.appendChild(svg("circle", {cx: LANE_X[a], cy: 9, r: 6, class: "fdp-line"}));
    return box;
  }
  box.appendChild(svg("line", {x1: LANE_X[a], x2: LANE_X[b], y1: 9, y2: 9, class: "fdp-line"}));
  // The head: a small triangle drawn at the target lane, pointing the arrow's way.
  const head = svg("svg", {x: LANE_X[b], y: 0, overflow: "visible"});
  const d = a < b ? "M -12 2 L 0 9 L -12 16 Z" : "M 12 2 L 0 9 L 12 16 Z";
  head.appendChild(svg("path", {d, class: "fdp-head"}));
  box.appendChild(head);
  return box;
}

function cell(data) {
  const c = el("div", "fdp-cell");
  if (!data) return c;
  if (data.error) c.classList.add("fdp-error");
  for (const line of data.lines) {
    const l = el("div", "fdp-words");
    for (const [text, role] of line) {
      // A short name or value stays whole ("call_2", is_error:); a long one breaks between
      // its words only. The spaces around it stay outside, where a line may break (" · ").
      const [, lead, core, trail] = String(text).match(/^(\s*)(.*?)(\s*)$/s);
      if (lead) l.appendChild(document.createTextNode(lead));
      const span = l.appendChild(el("span", role ? `fdp-${role}` : ""));
      if (core.length <= 12) {
        span.textContent = core;
        span.classList.add("fdp-whole");
      } else {
        words(span, core);
      }
      if (trail) l.appendChild(document.createTextNode(trail));
    }
    c.appendChild(l);
  }
  return c;
}

function head(data) {
  const h = el("div", "fdp-head-row fdp-grid");
  const lanes = el("div", "fdp-lanes-names");
  for (const [, name] of data.lanes) lanes.appendChild(el("div", "fdp-lane-name", name));
  h.appendChild(lanes);
  for (const [protocol, name] of data.vendors) {
    const v = el("div", "fdp-vendor", name);
    v.setAttribute("data-protocol", protocol);
    h.appendChild(v);
  }
  return h;
}

function rowOf(row, data, setStateValue) {
  const r = el("div", "fdp-row fdp-grid");
  r.setAttribute("data-seq", String(row.seq));
  r.setAttribute("data-kind", row.kind);
  if (row.error) r.classList.add("fdp-failed");
  if (data.lit.includes(row.seq)) r.classList.add("fdp-lit");
  const lanes = el("div", "fdp-lanes");
  words(lanes.appendChild(el("div", "fdp-label")), row.label);
  lanes.appendChild(arrow(row, data.lanes.map(([k]) => k)));
  r.appendChild(lanes);
  for (const c of row.cells) r.appendChild(cell(c));
  // Hovered or lit, it lights in every column at once: the row is one element across them.
  r.addEventListener("click", () => setStateValue("lit", row.seq));
  return r;
}

function wire(data) {
  const strip = el("div", "fdp-wire");
  if (!data.wire.length) return strip;
  strip.appendChild(el("div", "fdp-wire-title", "The lit event on the wire"));
  const cols = el("div", "fdp-wire-cols");
  for (const [vendor, lines] of data.wire) {
    const col = cols.appendChild(el("div", "fdp-wire-col"));
    col.appendChild(el("div", "fdp-vendor", vendor));
    const pre = col.appendChild(el("pre", "fdp-json"));
    for (const [text, marked] of lines) {
      words(pre.appendChild(el("div", marked ? "fdp-mark" : "")), text);
    }
  }
  strip.appendChild(cols);
  return strip;
}

// The lit rows brought to the middle of what the sticky bar and header leave, once per change.
function follow(root, lit) {
  const key = lit.join(",");
  if (root.getAttribute("data-followed") === key) return;
  root.setAttribute("data-followed", key);
  if (!root.querySelector(".fdp-row.fdp-lit")) return;
  requestAnimationFrame(() => center(root));
  settle(root, key);
}

function center(root) {
  const rows = [...root.querySelectorAll(".fdp-row.fdp-lit")];
  const head = root.querySelector(".fdp-head-row");
  if (!rows.length || !head || !root.isConnected) return;
  const first = rows[0].getBoundingClientRect();
  const last = rows[rows.length - 1].getBoundingClientRect();
  const top = head.getBoundingClientRect().bottom + 8, bottom = window.innerHeight - 16;
  if (first.top >= top && last.bottom <= bottom) return;
  const middle = last.bottom - first.top <= bottom - top ? (first.top + last.bottom) / 2
    : last.bottom - (bottom - top) / 2;
  const scroller = document.querySelector("[data-testid='stMain']");
  const by = {top: middle - (top + bottom) / 2, behavior: "instant"};
  if (scroller && scroller.scrollHeight > scroller.clientHeight) scroller.scrollBy(by);
  else window.scrollBy(by);
}

// The run that drew the picture may still take elements away above it as it ends (Streamlit
// clears what a run no longer drew) and so move the lit rows out of sight after they were
// brought to the middle: CI saw step 4's rows under the header and the page at its foot. For
// a moment after a change, each change of the page's height brings them back; a person's own
// scrolling changes no height, and anything a person does (a wheel, a touch, a press of a
// key or a button) ends the moment at once: the page never moves under a hand.
const SETTLE_MS = 2000;
const PERSON = ["wheel", "touchstart", "pointerdown", "keydown"];
function settle(root, key) {
  const page = document.querySelector("[data-testid='stMainBlockContainer']");
  if (root.__fdpSettle) root.__fdpSettle();
  if (!page || typeof ResizeObserver === "undefined") return;
  const watch = new ResizeObserver(() => {
    if (root.getAttribute("data-followed") === key) requestAnimationFrame(() => center(root));
  });
  const end = () => {
    watch.disconnect();
    clearTimeout(timer);
    for (const kind of PERSON) window.removeEventListener(kind, end, true);
    if (root.__fdpSettle === end) root.__fdpSettle = null;
  };
  const timer = setTimeout(end, SETTLE_MS);
  for (const kind of PERSON) window.addEventListener(kind, end, {capture: true, passive: true});
  root.__fdpSettle = end;
  watch.observe(page);
}

function stickBelowBar(h) {
  const keyed = document.querySelector(".st-key-fd_controls");
  const bar = keyed && keyed.closest("[data-testid='stLayoutWrapper']");
  const header = document.querySelector("[data-testid='stHeader']");
  let top = header ? header.getBoundingClientRect().height : 0;
  // Where the bar sticks (its own top) plus its height: not where it is now, which is lower
  // before the page has scrolled.
  if (bar) top = Math.max(top, (parseFloat(getComputedStyle(bar).top) || 0) + bar.offsetHeight);
  // The bar is sticky over the picture: the app's background, or the rows scrolled under it
  // showed through between its buttons (the aligned view's follow script paints it the same).
  const app = document.querySelector(".stApp");
  if (bar && app) bar.style.backgroundColor = getComputedStyle(app).backgroundColor;
  h.style.top = `${Math.round(top)}px`;
  // The bar changes height after this draw (its styles, a wrap, the status line): follow it.
  if (bar && !bar.__fdpWatched) {
    bar.__fdpWatched = true;
    new ResizeObserver(() => {
      const now = document.querySelector(".fdp-head-row");
      if (now) stickBelowBar(now);
    }).observe(bar);
  }
}

// A vendor chip just removed leaves the focus in the sidebar's chip box, where the Step keys
// would type letters and Backspace would remove every other chip: give the keys back.
function releaseChipBox() {
  const focused = document.activeElement;
  if (focused && focused.closest("[data-testid='stSidebar'] [data-testid='stMultiSelect']")) {
    focused.blur();
  }
}

// The server sends the table as JSON bytes (cheaper for it than a dict).
function table(sent) {
  if (typeof sent === "string") return JSON.parse(sent);
  if (sent instanceof ArrayBuffer || ArrayBuffer.isView(sent)) {
    return JSON.parse(new TextDecoder().decode(sent));
  }
  return sent;
}

function draw(parentElement, data, setStateValue) {
  let root = parentElement.querySelector(".fdp");
  if (!root) root = parentElement.appendChild(el("div", "fdp"));
  root.style.setProperty("--fdp-n", String(data.vendors.length));
  const h = head(data);
  const body = el("div", "fdp-body");
  let band = null;
  for (const row of data.rows) {
    if (row.band !== band) {
      band = row.band;
      const b = body.appendChild(el("div", "fdp-band fdp-grid"));
      b.appendChild(el("div", "fdp-band-name", band));
    }
    body.appendChild(rowOf(row, data, setStateValue));
  }
  root.replaceChildren(h, body, wire(data));
  stickBelowBar(h);
  follow(root, data.lit);
  releaseChipBox();
}

// A room's follower (flowdebug/views/pulse/pulse.js) fetches the instructor's new step without
// a script run and hands its row table here as a "fd-follow-picture" event: drawn the same way.
export default function (component) {
  const {parentElement, setStateValue} = component;
  draw(parentElement, table(component.data), setStateValue);
  if (parentElement.__fdpFollow) window.removeEventListener("fd-follow-picture", parentElement.__fdpFollow);
  parentElement.__fdpFollow = (e) => draw(parentElement, e.detail, setStateValue);
  window.addEventListener("fd-follow-picture", parentElement.__fdpFollow);
  return () => window.removeEventListener("fd-follow-picture", parentElement.__fdpFollow);
}
