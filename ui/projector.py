"""The Debugger on a projector: a control bar that stays on screen, clicker keys, and a view
that follows the lit step.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import streamlit as st

from flowdebug.render.dot import HIGHLIGHT

# The Debugger's controls stay on screen while the graphs scroll under them, just below
# Streamlit's own header (3.75rem high). The sticky element is the container's layout
# wrapper: the keyed block itself is exactly as tall as the wrapper, so it could not move.
# The script gives the bar the app's background. The status under it is one slim line, so
# the graph starts right below.
CSS_CONTROLS = """
<style>
  [data-testid="stLayoutWrapper"]:has(> .st-key-fd_controls) { position: sticky;
    top: 3.75rem; z-index: 99; padding: 0.35rem 0;
    border-bottom: 1px solid rgba(128, 128, 128, 0.25); }
  /* Streamlit's header above it is transparent: what scrolled under the bar would show
     through there, above the buttons. The bar's background (set by the script) covers it. */
  [data-testid="stLayoutWrapper"]:has(> .st-key-fd_controls)::before { content: "";
    position: absolute; left: 0; right: 0; bottom: 100%; height: 3.75rem;
    background: inherit; pointer-events: none; }
  .st-key-fd_controls p { margin: 0; }
  .st-key-fd_status [data-testid="stAlertContainer"] { padding: 0.3rem 0.75rem; }
</style>
"""

# Runs in the page itself (st.html, not iframed). Clicker keys press the Debugger's Step and
# Undo buttons (installed once per tab; on other pages, where those buttons are missing, the
# keys scroll as usual, and never while a field, list or slider has the focus). After a
# step, the view follows the lit arrows: the highlighted labels of the aligned view (or of the
# first separate graph) are scrolled to the middle of what the control bar leaves, for a few
# seconds while the graphs redraw.
#
# The page installs it once (outside the fragment a Step reruns); what a Step sends is one
# call, window.__fdFollowStep(step): at the end of the aligned view's own script, or a line
# of its own under the separate graphs.
_FOLLOW = """
<script>
(() => {
  const paint = () => {
    const keyed = document.querySelector(".st-key-fd_controls");
    const bar = keyed && keyed.closest("[data-testid='stLayoutWrapper']");
    const app = document.querySelector(".stApp");
    if (bar && app) bar.style.backgroundColor = getComputedStyle(app).backgroundColor;
    return bar;
  };
  paint();
  if (!window.__fdClicker) {
    window.__fdClicker = true;
    const keys = {PageDown: "step", ArrowRight: "step", PageUp: "undo", ArrowLeft: "undo"};
    document.addEventListener("keydown", (e) => {
      const key = keys[e.key];
      if (!key || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.defaultPrevented) return;
      const busy = "input, textarea, select, [contenteditable=true], [role=slider], [role=listbox]";
      if (e.target.closest && e.target.closest(busy)) return;
      // Paused mid-way through Play, the arrows move one event (Play's own buttons).
      const event = {ArrowRight: "play_next", ArrowLeft: "play_back"}[e.key];
      const button = (event && document.querySelector(`.st-key-${event} button`))
        || document.querySelector(`.st-key-${key} button`);
      if (!button) return;
      e.preventDefault();
      if (!button.disabled) button.click();
    });
  }
  // The step the page was drawn at (set by the Step's own call, which may run first).
  if (window.__fdStep === undefined) window.__fdStep = window.__fdStepNow;
  window.__fdFollowStep = (step) => {
    window.__fdStepNow = step;
    const bar = paint();
    const seen = window.__fdStep;
    window.__fdStep = step;
    if (seen === undefined || seen === step) return;
    // Following ends after 3 s, or as soon as the person scrolls or clicks on their own: the
    // view never fights them. __fdFollowing says whether it is still going (tests wait on it).
    const stop = () => { clearInterval(window.__fdFollow); window.__fdFollowing = false; };
    if (!window.__fdHands) {
      window.__fdHands = true;
      for (const kind of ["wheel", "touchstart", "mousedown"]) {
        document.addEventListener(kind, () => { if (window.__fdFollowing) stop(); },
          {passive: true, capture: true});
      }
      // The keys that scroll (PageUp and PageDown are the clicker's Undo and Step).
      const scrolls = ["ArrowUp", "ArrowDown", "Home", "End", " "];
      document.addEventListener("keydown", (e) => {
        if (window.__fdFollowing && scrolls.includes(e.key)) stop();
      }, {passive: true, capture: true});
    }
    clearInterval(window.__fdFollow);
    window.__fdFollowing = true;
    const until = Date.now() + 3000;
    window.__fdFollow = setInterval(() => {
      if (Date.now() > until) return stop();
      // The aligned view's lit labels (every vendor's sit on the same rows), else the first
      // separate graph's.
      const aligned = document.querySelector("svg.fd-aligned");
      const chart = document.querySelector("[data-testid='stGraphVizChart'] svg");
      const lit = aligned ? aligned.querySelectorAll(".ev.current rect.bg[fill='%s']")
        : chart ? chart.querySelectorAll("polygon[fill='%s']") : [];
      if (!lit.length) return;
      // The step's arrows (a batch of calls lights several) and, under the last label, its arrow.
      const first = lit[0].getBoundingClientRect();
      const last = lit[lit.length - 1].getBoundingClientRect();
      const top = (bar ? bar.getBoundingClientRect().bottom : 0) + 40;
      const bottom = window.innerHeight - 80;
      if (first.top >= top && last.bottom <= bottom) return;
      // All of them in the middle if they fit, else the last one (the newest).
      const middle = last.bottom - first.top <= bottom - top ? (first.top + last.bottom) / 2
        : last.bottom - (bottom - top) / 2;
      const scroller = document.querySelector("[data-testid='stMain']");
      const by = {top: middle - (top + bottom) / 2, behavior: "instant"};
      if (scroller && scroller.scrollHeight > scroller.clientHeight) scroller.scrollBy(by);
      else window.scrollBy(by);
    }, 150);
  };
  if (window.__fdStepNow !== undefined) window.__fdFollowStep(window.__fdStepNow);
})();
</script>
"""


# Outside presenter mode the sidebar stays open, and at a projector's 1280 px the bar (five
# buttons, where the cycle stands, Play) wrapped to two rows, a bar whose height changed with
# the phase's name under the picture's sticky lane header. The shortcut letters go (each
# button's tooltip names them), so do the icons of the five buttons (their words stay), and
# the gaps narrow, so it keeps one row.
_CONTROL_KEYS = ("step", "step_turn", "run", "undo", "reset")
CSS_COMPACT = (
    "<style>\n  .st-key-fd_controls { column-gap: 0.5rem; }\n"
    "  .st-key-fd_controls button kbd { display: none; }\n  "
    + ", ".join(
        f".st-key-fd_controls .st-key-{k} span:has(> [data-testid='stIconMaterial'])"
        for k in _CONTROL_KEYS
    )
    + " { display: none; }\n</style>\n"
)


def controls_css(compact: bool = False) -> None:
    """Keep the Debugger's control bar (the ``fd_controls`` container) on screen; ``compact``
    (outside presenter mode): on one row beside an open sidebar."""
    st.html(CSS_CONTROLS + (CSS_COMPACT if compact else ""))


def install_follow() -> None:
    """Clicker keys for the Debugger, and the view following the lit step: drawn by the page
    once, outside the fragment a Step reruns. A Step then sends :func:`follow_call` alone."""
    st.html(_FOLLOW % (HIGHLIGHT, HIGHLIGHT), unsafe_allow_javascript=True)


def follow_call(step: int) -> str:
    """The JavaScript that tells the page the cycle is at ``step`` (the view follows the lit
    arrows when it changed)."""
    n = int(step)
    return f"window.__fdStepNow = {n}; window.__fdFollowStep && window.__fdFollowStep({n});"


def follow_step(step: int) -> None:
    """:func:`follow_call` as an element of its own (the separate graphs: the aligned view
    makes the call at the end of its own script). Call it last: it runs once the page is
    drawn."""
    st.html(f"<script>{follow_call(step)}</script>", unsafe_allow_javascript=True)


# Runs in the page each time Play reveals an event: the newest revealed event (its arrows
# and labels in every vendor, ``.ev-N`` in the aligned view) is brought under the control
# bar, a third of the way down what the bar leaves, so the arrows that follow show below it.
# The rules of follow_step: a wheel, a touch or a click outside the control bar means the
# person took over, and this playback stops following them (pressing Play again, a new
# ``run``, follows again); window.__fdFollowing says whether a follow is still going.
_FOLLOW_PLAY = """
<script>
(() => {
  const run = %d, seq = %d, step = %d;
  // The page is at this step while Play shows it: when the playback ends and the whole cycle
  // is drawn, the Step's follow has nothing new to follow (it would fight a reader who
  // scrolled). A drawing of the view still waiting for its box is older than this beat.
  window.__fdStep = window.__fdStepNow = step;
  window.__fdFill = (window.__fdFill || 0) + 1;
  if (!window.__fdPlayHands) {
    window.__fdPlayHands = true;
    for (const kind of ["wheel", "touchstart", "mousedown"]) {
      document.addEventListener(kind, (e) => {
        if (e.target.closest && e.target.closest(".st-key-fd_controls")) return;
        window.__fdPlayLeft = window.__fdPlayRun;
        if (window.__fdFollowing) {
          clearInterval(window.__fdFollow);
          window.__fdFollowing = false;
        }
      }, {passive: true, capture: true});
    }
  }
  window.__fdPlayRun = run;
  if (window.__fdPlayLeft === run) return;
  const stop = () => { clearInterval(window.__fdFollow); window.__fdFollowing = false; };
  clearInterval(window.__fdFollow);
  window.__fdFollowing = true;
  const until = Date.now() + 1500;
  window.__fdFollow = setInterval(() => {
    if (Date.now() > until || window.__fdPlayLeft === run) return stop();
    const parts = document.querySelectorAll(`svg.fd-aligned .ev-${seq}`);
    if (!parts.length) return;
    let first = Infinity, last = -Infinity;
    for (const p of parts) {
      const r = p.getBoundingClientRect();
      if (r.height === 0 && r.width === 0) continue;
      first = Math.min(first, r.top);
      last = Math.max(last, r.bottom);
    }
    if (first === Infinity) return;
    const keyed = document.querySelector(".st-key-fd_controls");
    const bar = keyed && keyed.closest("[data-testid='stLayoutWrapper']");
    const top = (bar ? bar.getBoundingClientRect().bottom : 0) + 24;
    const bottom = window.innerHeight - 60;
    if (first >= top && last <= bottom) return;
    const at = top + Math.max(0, (bottom - top) / 3 - (last - first) / 2);
    const by = {top: first - at, behavior: "instant"};
    const scroller = document.querySelector("[data-testid='stMain']");
    if (scroller && scroller.scrollHeight > scroller.clientHeight) scroller.scrollBy(by);
    else window.scrollBy(by);
  }, 100);
})();
</script>
"""


def follow_event(run: int, seq: int, step: int) -> None:
    """During Play: bring the event ``seq`` just revealed under the control bar, unless the
    person scrolled or clicked during this playback (``run``: one per press of Play). ``step``:
    the cycle's step, which the page then knows it is at (see :func:`follow_call`)."""
    st.html(_FOLLOW_PLAY % (int(run), int(seq), int(step)), unsafe_allow_javascript=True)
