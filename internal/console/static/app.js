// rocketd console: a small single-page app over the JSON API (doc.go).
// Every value from the server is put in the page as text (never as HTML).
"use strict";

const main = () => document.getElementById("main");

// el builds an element: attrs are properties/attributes, children strings or nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick" || k === "onsubmit") e[k] = v;
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// results holds the last result of each form (by its paragraph's id): a
// successful change redraws the page 300 ms later with fresh data, and the
// result must still be there to read.
const results = {};

// resultLine is a form's result paragraph, showing its last result.
// redrawSoon redraws the page a moment after a change, so that it shows
// the broker's new state; not if the user has gone to another page since,
// whose form it would wipe.
function redrawSoon() {
  const here = location.hash;
  setTimeout(() => { if (location.hash === here) render(); }, 300);
}

function resultLine(id) {
  const r = results[id];
  return el("p", { id, class: r ? r.cls : "" }, r ? r.text : "");
}

// showResult sets a form's result, kept across the next redraws of the page.
function showResult(out, cls, text) {
  results[out.id] = { cls, text };
  out.className = cls;
  out.textContent = text;
}

function table(id, headers, rows) {
  return el("table", { id },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) =>
      (c instanceof Node) ? el("td", {}, c) : el("td", typeof c === "number" ? { class: "num" } : {}, c))))));
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// post sends a write action: JSON body and the console's header (the CSRF check).
async function post(path, data) {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Rocketd-Console": "1" },
    body: JSON.stringify(data),
  });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function status(text) { document.getElementById("status").textContent = text; }
function errorBox(id, err) { return el("p", { class: "error", id }, String(err.message || err)); }
function fmtTime(ms) { return ms > 0 ? new Date(ms).toISOString().replace("T", " ").replace("Z", "") : "-"; }
function fmtRate(v) { return v < 0 ? "n/a" : v >= 1000 ? (v / 1000).toFixed(1) + "k" : v.toFixed(1); }

// --- charts: inline SVG drawn here ---

function lineChart(title, points, key, unit) {
  const W = 360, H = 120, P = 28;
  const vals = points.map((p) => p[key]).filter((v) => v >= 0);
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  svg.setAttribute("class", "chart-" + key);
  const maxV = Math.max(1, ...vals);
  const line = (x1, y1, x2, y2, color) => {
    const l = document.createElementNS(svgNS, "line");
    Object.entries({ x1, y1, x2, y2, stroke: color }).forEach(([k, v]) => l.setAttribute(k, v));
    svg.append(l);
  };
  const text = (x, y, s) => {
    const t = document.createElementNS(svgNS, "text");
    t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("font-size", "10");
    t.textContent = s; svg.append(t);
  };
  line(P, H - P, W - 4, H - P, "#999");
  line(P, 4, P, H - P, "#999");
  text(2, 12, fmtRate(maxV));
  text(2, H - P, "0");
  const pts = points.filter((p) => p[key] >= 0);
  if (pts.length > 0) {
    const t0 = pts[0].t, t1 = pts[pts.length - 1].t || t0 + 1;
    const xs = (t) => P + (W - P - 4) * (pts.length === 1 ? 1 : (t - t0) / (t1 - t0));
    const ys = (v) => H - P - (H - P - 6) * (v / maxV);
    const poly = document.createElementNS(svgNS, "polyline");
    poly.setAttribute("fill", "none"); poly.setAttribute("stroke", "#2d6cdf"); poly.setAttribute("stroke-width", "1.5");
    poly.setAttribute("points", pts.map((p) => xs(p.t).toFixed(1) + "," + ys(p[key]).toFixed(1)).join(" "));
    svg.append(poly);
    text(P + 4, H - 8, "last: " + fmtRate(pts[pts.length - 1][key]) + " " + unit);
  } else {
    text(P + 4, H / 2, points.length > 0 ? "not reported by this broker" : "no samples yet");
  }
  return el("div", { class: "chart" }, el("div", {}, title), svg);
}

// --- pages ---

const pages = {
  async cluster() {
    const [c, t] = await Promise.all([api("/api/cluster"), api("/api/throughput")]);
    const rows = c.brokers.map((b) => {
      const rt = b.runtime || {};
      return [b.cluster, b.name, Object.entries(b.addrs).map(([id, a]) => id + "=" + a).join(" "),
        rt.brokerRole || "-", rt.brokerVersionDesc || "-", rt.putTps || "-", rt.getTransferedTps || "-",
        rt.msgPutTotalTodayNow || "-", rt.commitLogMaxOffset || "-", rt.commitLogDiskRatio || "-", b.error || ""];
    });
    const charts = t.series.map((s) => el("div", {},
      el("h3", {}, s.broker + (s.source === "tps" ? " (broker TPS)" : " (from offsets)")),
      el("div", { class: "charts" },
        lineChart("put msgs/s", s.points, "put", "msg/s"),
        lineChart("get msgs/s", s.points, "get", "msg/s"),
        lineChart("CommitLog bytes/s", s.points, "bytes", "B/s"))));
    return [el("h2", {}, "Cluster"),
      table("brokers", ["cluster", "broker", "addresses", "role", "version", "putTps", "getTransferedTps",
        "put today", "commitLogMaxOffset", "disk ratio", "error"], rows),
      el("h2", {}, "Throughput (sampled every " + t.intervalMs / 1000 + " s)"), ...charts];
  },

  async topics() {
    const { topics } = await api("/api/topics");
    const out = resultLine("create-result");
    const form = el("form", { id: "create-topic", onsubmit: async (ev) => {
      ev.preventDefault();
      const f = ev.target;
      showResult(out, "", "");
      try {
        const r = await post("/api/topics", { topic: f.topic.value.trim(), cluster: f.cluster.value.trim(),
          readQueues: +f.readQueues.value, writeQueues: +f.writeQueues.value, order: f.order.checked });
        showResult(out, "ok", "created " + r.topic + " on " + r.brokers.join(", "));
        redrawSoon();
      } catch (e) { showResult(out, "error", e.message); }
    } },
    el("label", {}, "topic", el("input", { name: "topic", required: "", pattern: "[A-Za-z0-9%|_-]{1,127}" })),
    el("label", {}, "cluster (blank: all)", el("input", { name: "cluster" })),
    el("label", {}, "read queues", el("input", { name: "readQueues", type: "number", min: 1, max: 1024, value: 8 })),
    el("label", {}, "write queues", el("input", { name: "writeQueues", type: "number", min: 1, max: 1024, value: 8 })),
    el("label", {}, "order", el("input", { name: "order", type: "checkbox" })),
    el("button", { type: "submit", id: "create-topic-submit" }, "Create topic"));
    const filter = el("input", { id: "topic-filter", placeholder: "filter" });
    const list = el("ul", { id: "topic-list" });
    const fill = () => {
      list.replaceChildren(...topics.filter((t) => t.includes(filter.value))
        .map((t) => el("li", {}, el("a", { href: "#topic/" + encodeURIComponent(t) }, t))));
    };
    filter.oninput = fill; fill();
    return [el("h2", {}, "Topics (" + topics.length + ")"), form, out, filter, list];
  },

  async topic(name) {
    const t = await api("/api/topic?topic=" + encodeURIComponent(name));
    const route = t.route;
    return [el("h2", {}, "Topic " + name),
      el("h3", {}, "Route"),
      table("route-queues", ["broker", "read queues", "write queues", "perm"],
        route.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm])),
      table("route-brokers", ["broker", "cluster", "addresses"],
        route.brokerDatas.map((b) => [b.brokerName, b.cluster, Object.entries(b.brokerAddrs).map(([id, a]) => id + "=" + a).join(" ")])),
      el("h3", {}, "Queues"),
      table("topic-queues", ["broker", "queue", "min offset", "max offset", "messages", "last update"],
        t.queues.map((q) => [q.broker, q.queueId, q.minOffset, q.maxOffset, q.maxOffset - q.minOffset, fmtTime(q.lastUpdateTime)])),
      el("h3", {}, "Consumer groups"),
      el("ul", { id: "topic-consumers" }, t.consumers.length === 0 ? el("li", {}, "none") :
        t.consumers.map((g) => el("li", {}, el("a", { href: "#group/" + encodeURIComponent(g) }, g))))];
  },

  async groups() {
    const { groups } = await api("/api/groups");
    return [el("h2", {}, "Consumer groups (" + groups.length + ")"),
      el("ul", { id: "group-list" }, groups.map((g) => el("li", {}, el("a", { href: "#group/" + encodeURIComponent(g) }, g))))];
  },

  async group(name) {
    const g = await api("/api/group?group=" + encodeURIComponent(name));
    // The group's own topics first, its %RETRY% (and %DLQ%) topics after:
    // the form's default is the first, and a reset is meant for a topic.
    const system = (t) => t.startsWith("%RETRY%") || t.startsWith("%DLQ%");
    const topics = [...new Set(g.progress.map((p) => p.topic))]
      .sort((a, b) => (system(a) - system(b)) || a.localeCompare(b));
    const out = resultLine("reset-result");
    const form = el("form", { id: "reset-offset", onsubmit: async (ev) => {
      ev.preventDefault();
      const f = ev.target;
      const ts = f.when.value === "" ? -1 : new Date(f.when.value).getTime();
      showResult(out, "", "");
      try {
        const r = await post("/api/group/reset", { group: name, topic: f.topic.value, timestamp: ts });
        showResult(out, "ok", "reset " + r.topic + " on " + r.brokers.join(", "));
        redrawSoon();
      } catch (e) { showResult(out, "error", e.message); }
    } },
    el("label", {}, "topic", el("select", { name: "topic" }, topics.map((t) => el("option", { value: t }, t)))),
    el("label", {}, "to time (blank: the end)", el("input", { name: "when", type: "datetime-local", step: 1 })),
    el("button", { type: "submit", id: "reset-offset-submit" }, "Reset offset"));
    const members = g.members.map((m) => [m.clientId, m.clientAddr, m.language, m.version]);
    const subs = Object.entries(g.subscriptions || {}).map(([t, s]) => [t, s.subString]);
    return [el("h2", {}, "Group " + name),
      el("p", {}, "Total lag: ", el("b", { id: "total-lag" }, String(g.totalLag)), "  consume TPS: " + g.consumeTps.toFixed(1) +
        (g.online === false ? "  (no member online)" : "")),
      el("h3", {}, "Members"), table("members", ["client id", "address", "language", "version"], members),
      el("h3", {}, "Subscriptions"), table("subscriptions", ["topic", "expression"], subs),
      el("h3", {}, "Progress per queue"),
      table("progress", ["topic", "broker", "queue", "broker offset", "consumer offset", "lag", "last consumed"],
        g.progress.map((p) => [p.topic, p.broker, p.queueId, p.brokerOffset, p.consumerOffset, p.lag, fmtTime(p.lastTimestamp)])),
      el("h3", {}, "Reset offset by time"), form, out];
  },

  async messages() {
    const results = el("div", { id: "message-results" });
    const show = async (path) => {
      results.replaceChildren(el("p", {}, "searching…"));
      try {
        const r = await api(path);
        results.replaceChildren(el("p", {}, r.messages.length + " message(s)"), ...r.messages.map(messageCard));
      } catch (e) { results.replaceChildren(errorBox("message-error", e)); }
    };
    const q = (o) => Object.entries(o).map(([k, v]) => k + "=" + encodeURIComponent(v.trim())).join("&");
    const byId = el("form", { id: "by-id", onsubmit: (ev) => { ev.preventDefault(); const f = ev.target;
      show("/api/message?" + q({ topic: f.topic.value, msgId: f.msgId.value })); } },
      el("label", {}, "topic", el("input", { name: "topic", required: "" })),
      el("label", {}, "message id", el("input", { name: "msgId", required: "", size: 36 })),
      el("button", { type: "submit" }, "Find by id"));
    const byKey = el("form", { id: "by-key", onsubmit: (ev) => { ev.preventDefault(); const f = ev.target;
      show("/api/messages?" + q({ topic: f.topic.value, key: f.key.value })); } },
      el("label", {}, "topic", el("input", { name: "topic", required: "" })),
      el("label", {}, "key", el("input", { name: "key", required: "" })),
      el("button", { type: "submit" }, "Find by key"));
    const byOffset = el("form", { id: "by-offset", onsubmit: (ev) => { ev.preventDefault(); const f = ev.target;
      show("/api/message/at?" + q({ topic: f.topic.value, broker: f.broker.value, queue: f.queue.value, offset: f.offset.value })); } },
      el("label", {}, "topic", el("input", { name: "topic", required: "" })),
      el("label", {}, "broker (blank: the only one)", el("input", { name: "broker" })),
      el("label", {}, "queue", el("input", { name: "queue", type: "number", min: 0, required: "" })),
      el("label", {}, "offset", el("input", { name: "offset", type: "number", min: 0, required: "" })),
      el("button", { type: "submit" }, "Find at offset"));
    return [el("h2", {}, "Messages"), byId, byKey, byOffset, results];
  },

  async dlq() {
    const results = el("div", { id: "dlq-results" });
    const form = el("form", { id: "dlq-form", onsubmit: async (ev) => {
      ev.preventDefault();
      const group = ev.target.group.value.trim();
      try {
        const r = await api("/api/dlq?group=" + encodeURIComponent(group));
        results.replaceChildren(el("p", {}, r.messages.length + " message(s) in " + r.topic),
          ...r.messages.map((m) => {
            const res = el("span", { class: "resend-result" });
            const btn = el("button", { class: "resend", onclick: async () => {
              try {
                const x = await post("/api/dlq/resend", { group, msgId: m.msgId });
                res.className = "ok"; res.textContent = " " + x.consumeResult + " by " + x.clientId;
              } catch (e) { res.className = "error"; res.textContent = " " + e.message; }
            } }, "Re-send to a consumer");
            return el("div", {}, messageCard(m), btn, res);
          }));
      } catch (e) { results.replaceChildren(errorBox("dlq-error", e)); }
    } },
    el("label", {}, "consumer group", el("input", { name: "group", required: "" })),
    el("button", { type: "submit" }, "Show DLQ"));
    return [el("h2", {}, "Dead-letter messages"),
      el("p", {}, "Re-send hands the message to an online consumer of the group (CONSUME_MESSAGE_DIRECTLY), as rocketmq-dashboard does."),
      form, results];
  },

  async backlog() {
    const { brokers } = await api("/api/backlog");
    return [el("h2", {}, "Transaction, timer and delay backlog"),
      table("backlog", ["broker", "half messages (max)", "checked up to", "half backlog", "op records", "timer messages held", "timer stats",
        "delay backlog", "by level", "error"],
        brokers.map((b) => [b.broker, b.halfMax, b.halfChecked, b.halfBacklog, b.opMax, b.timerEnqueued,
          Object.entries(b.timer).map(([k, v]) => k + "=" + v).join(" ") || "-", b.delayBacklog,
          Object.entries(b.delayLevels).map(([k, v]) => "L" + k + "=" + v).join(" ") || "-", b.error || ""]))];
  },
};

function messageCard(m) {
  const props = Object.entries(m.properties || {}).sort().map(([k, v]) => [k, v]);
  return el("div", { class: "msg" },
    el("div", {}, el("b", {}, m.topic), " queue " + m.queueId + " offset " + m.queueOffset + " on " + m.broker),
    el("div", {}, "msgId ", el("code", { class: "msg-id" }, m.msgId), "  uniqKey ", el("code", {}, m.uniqKey || "-")),
    el("div", {}, "stored " + fmtTime(m.storeTimestamp) + " by " + m.storeHost + ", born " + fmtTime(m.bornTimestamp) + " at " + m.bornHost +
      ", reconsumed " + m.reconsumeTimes + (m.compressed ? ", compressed (shown inflated)" : "")),
    el("div", {}, "body (" + m.bodySize + " bytes, " + m.bodyEncoding + ")" + (m.bodyError ? " — " + m.bodyError : "")),
    el("pre", { class: "msg-body" }, m.body),
    table(null, ["property", "value"], props));
}

let renderSeq = 0;
async function render() {
  const seq = ++renderSeq;
  const hash = location.hash.replace(/^#/, "") || "cluster";
  const [page, ...rest] = hash.split("/");
  const arg = decodeURIComponent(rest.join("/"));
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === page.replace(/^(topic|group)$/, "$&s")));
  const fn = pages[page] || pages.cluster;
  status("loading " + hash);
  try {
    const nodes = await fn(arg);
    if (seq !== renderSeq) return;
    main().replaceChildren(...nodes);
    main().dataset.page = page;
    status("updated " + new Date().toLocaleTimeString());
  } catch (e) {
    if (seq !== renderSeq) return;
    main().replaceChildren(el("h2", {}, hash), errorBox("page-error", e));
    status("");
  }
}

window.addEventListener("hashchange", render);
window.addEventListener("DOMContentLoaded", () => {
  render();
  // The cluster page follows the sampler.
  setInterval(() => { if ((location.hash || "#cluster") === "#cluster") render(); }, 5000);
});
