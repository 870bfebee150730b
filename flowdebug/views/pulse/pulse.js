// A room follower's poll (flowdebug/views/room_pulse.py, ui/rooms.py's follow_pulse): asks the
// server for the room's pulse over plain HTTP and asks for a Streamlit script run only when the
// pulse moved past the one this page was drawn at, so a follower costs no script run while
// nothing changes. What the server says reaches the page as text only (textContent).
const LINE = "fdr-pulse-line";

function moved(now, seen) {
  // Revisions only grow: a reused answer older than the page (the server keeps one a tenth
  // of a second for all its followers) is not a change.
  return now.some((n, i) => n > (seen[i] ?? -1));
}

export default function (component) {
  const {parentElement, setTriggerValue} = component;
  const d = JSON.parse(new TextDecoder().decode(component.data)); // sent as JSON bytes
  parentElement.__fdPulseStop?.();
  let line = parentElement.querySelector(`.${LINE}`);
  if (!line) {
    line = parentElement.appendChild(document.createElement("div"));
    line.className = LINE;
  }
  line.textContent = "";
  let stopped = false;
  let timer = null;
  let asked = null; // the pulse this page last asked a script run for
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  parentElement.__fdPulseStop = stop;
  window.__fdPulsePolls ??= 0;

  async function poll() {
    if (stopped) return;
    try {
      window.__fdPulsePolls += 1;
      const r = await fetch(d.url, {cache: "no-store", credentials: "same-origin"});
      if (r.ok && !(r.headers.get("content-type") || "").startsWith("application/json")) {
        stop(); // no poll route on this server (app.py run alone): its page came back
        line.textContent = d.noRoute;
        return;
      }
      const body = await r.json();
      if (stopped) return;
      if (r.status === 200 && Array.isArray(body.pulse)) {
        const key = body.pulse.join(".");
        if (moved(body.pulse, d.seen) && key !== asked) {
          asked = key;
          setTriggerValue("moved", key);
        }
      } else if (r.status === 404 || r.status === 410) {
        stop();
        line.textContent = d.closed;
        setTriggerValue("moved", "closed");
        return;
      }
    } catch (e) {
      // The server is away (a restart, the network): ask again at the next beat.
    }
    if (!stopped) timer = setTimeout(poll, d.every * 1000);
  }

  timer = setTimeout(poll, d.every * 1000);
  return stop;
}
