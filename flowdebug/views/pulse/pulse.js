// A room follower's poll (flowdebug/views/room_pulse.py, ui/rooms.py's follow_pulse): asks the
// server for the room's pulse over plain HTTP and, when it moved past the one this page shows,
// fetches the room's follow payload and redraws the step heading, the status line, what the
// phase is and (through the picture's own drawing code, an "fd-follow-picture" event) the
// picture: no Streamlit script run. A script
// run is asked only when the question changes (asked, revealed) or the room closes. What the
// server says reaches the page as text only (textContent).
const LINE = "fdr-pulse-line";

function moved(now, seen) {
  // Revisions only grow: a reused answer older than the page (the server keeps one a tenth
  // of a second for all its followers) is not a change.
  return now.some((n, i) => n > (seen[i] ?? -1));
}

function part(parent, cls, attrs = {}) {
  let e = parent.querySelector(`.${cls}`);
  if (!e) {
    e = parent.appendChild(document.createElement("div"));
    e.className = cls;
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  }
  return e;
}

// "What this phase is": a closed box (its open state kept across redraws), its text set line
// by line.
function explained(parent, what) {
  let box = parent.querySelector(".fdr-phase");
  if (!box) {
    box = parent.appendChild(document.createElement("details"));
    box.className = "fdr-phase";
    box.appendChild(document.createElement("summary")).textContent = "What this phase is";
    box.appendChild(document.createElement("div")).className = "fdr-phase-body";
  }
  const body = box.querySelector(".fdr-phase-body");
  const lines = [document.createElement("p")];
  lines[0].textContent = what?.meaning ?? "";
  for (const [vendor, where] of what?.fields ?? []) {
    const p = document.createElement("p");
    p.appendChild(document.createElement("strong")).textContent = vendor;
    p.appendChild(document.createTextNode(`: ${where}`));
    lines.push(p);
  }
  body.replaceChildren(...lines);
}

export default function (component) {
  const {parentElement, setTriggerValue} = component;
  const d = JSON.parse(new TextDecoder().decode(component.data)); // sent as JSON bytes
  parentElement.__fdPulseStop?.();
  const heading = part(parentElement, "fdr-heading", {role: "heading", "aria-level": "3"});
  const status = part(parentElement, "fdr-status");
  const line = part(parentElement, LINE);
  heading.textContent = d.heading;
  status.textContent = d.status;
  explained(parentElement, d.explained);
  line.textContent = "";
  let stopped = false;
  let timer = null;
  let seen = d.seen; // the pulse the page shows
  let asked = null; // what this page last asked a script run for
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  parentElement.__fdPulseStop = stop;
  window.__fdPulsePolls ??= 0;
  window.__fdFollowDraws ??= 0;

  function show(body) {
    seen = body.pulse;
    heading.textContent = body.heading;
    status.textContent = body.status;
    explained(parentElement, body.explained);
    window.dispatchEvent(new CustomEvent("fd-follow-picture", {detail: body.picture}));
    window.__fdFollowDraws += 1;
  }

  // [status, JSON body]; a body of null: the server answered its page, not JSON (no route).
  async function get(url) {
    window.__fdPulsePolls += 1;
    const r = await fetch(url, {cache: "no-store", credentials: "same-origin"});
    if (r.ok && !(r.headers.get("content-type") || "").startsWith("application/json")) {
      return [r.status, null];
    }
    return [r.status, await r.json()];
  }

  // Once a closed room or a server without the route is seen: stop, say it, true.
  function ended(status, body) {
    if (body === null) {
      stop(); // no poll route on this server (app.py run alone): its page came back
      line.textContent = d.noRoute;
      return true;
    }
    if (status === 404 || status === 410) {
      stop();
      line.textContent = d.closed;
      setTriggerValue("moved", "closed");
      return true;
    }
    return false;
  }

  async function poll() {
    if (stopped) return;
    try {
      // The pulse, a few bytes, at every beat; the payload only once it moved.
      let [status, body] = await get(d.url);
      if (stopped || ended(status, body)) return;
      if (status === 200 && Array.isArray(body.pulse) && moved(body.pulse, seen)) {
        [status, body] = await get(d.follow);
        if (stopped || ended(status, body)) return;
        if (status === 200 && Array.isArray(body.pulse) && moved(body.pulse, seen)) {
          show(body);
          if (body.question !== d.question && body.question !== asked) {
            asked = body.question;
            setTriggerValue("moved", `${body.pulse.join(".")}:${body.question}`);
          }
        }
      }
    } catch (e) {
      // The server is away (a restart, the network): ask again at the next beat.
    }
    if (!stopped) timer = setTimeout(poll, d.every * 1000);
  }

  timer = setTimeout(poll, d.every * 1000);
  return stop;
}
