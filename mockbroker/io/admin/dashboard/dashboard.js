// mockbroker's dashboard: reads the admin API (the same calls as AdminClient) and renders each
// section; the event stream (GET /events/stream) says which sections to read again.
//
// The token, where the API requires one, comes from the page's fragment (/#token=TOKEN): a
// fragment is never sent to the server nor kept in its logs.  fetch() sends it as
// Authorization: Bearer; the event stream, which EventSource cannot add headers to, as the
// access_token query parameter (RFC 6750, section 2.3).
//
// Everything shown is set as text (never as HTML): record keys and values, client ids and
// member ids are whatever clients sent.

const TOKEN = new URLSearchParams(location.hash.slice(1)).get("token");
// a refresh at most this often, however many events arrive
const MIN_REFRESH_MS = 250;
// Produced records, the request log and a real clock change without events: those sections
// are read again this often while the stream is live, everything this often without it.
const POLL_LIVE_MS = 3000;
const POLL_WITHOUT_STREAM_MS = 1500;
const FEED_SIZE = 60;
// the event stream's types (EventSource hands named events only to listeners of that name;
// the list is mockbroker.core.observe.events.EVENT_TYPES)
const EVENT_TYPES = [
  "group_state", "member_joined", "member_left", "member_expired", "member_removed",
  "assignment", "offsets_committed", "topic_created", "partitions_created", "topic_deleted",
  "broker_stopped", "broker_started", "leader_changed", "coordinator_moved", "rule_fired",
  "transaction_state", "transaction_begun", "transaction_committed", "transaction_aborted",
  "clock_advanced", "reset", "message", "schema_registered", "schema_incompatible",
  "schema_deleted", "subject_deleted",
];
// the sections each type of event changes; any other type: every section
const AFFECTS = {
  group_state: ["groups", "brokers"],
  member_joined: ["groups"],
  member_left: ["groups"],
  member_expired: ["groups"],
  member_removed: ["groups"],
  assignment: ["groups"],
  offsets_committed: ["groups"],
  topic_created: ["topics", "brokers"],
  partitions_created: ["topics", "brokers"],
  topic_deleted: ["topics", "brokers", "groups"],
  broker_stopped: ["brokers", "topics", "groups", "transactions"],
  broker_started: ["brokers", "topics", "groups", "transactions"],
  leader_changed: ["topics", "brokers"],
  coordinator_moved: ["groups", "brokers", "transactions"],
  rule_fired: ["faults", "requests"],
  transaction_state: ["transactions", "topics"],
  transaction_begun: ["transactions"],
  transaction_committed: ["transactions", "topics", "groups"],
  transaction_aborted: ["transactions", "topics", "groups"],
  clock_advanced: ["clock", "groups", "transactions"],
  schema_registered: ["schema-registry", "topics"],
  schema_incompatible: [],
  schema_deleted: ["schema-registry", "topics"],
  subject_deleted: ["schema-registry", "topics"],
};
const SECTIONS = ["brokers", "topics", "groups", "transactions", "faults", "requests", "clock",
  "schema-registry"];
const POLLED = ["topics", "groups", "transactions", "faults", "requests", "clock"];

const state = {
  stream: "connecting", // live | polling | no access
  clock: null,          // {mode, now_ms} or null where GET /clock is not served
  groups: [],           // GET /groups
  topics: [],           // GET /topics
  rules: new Map(),     // rule id -> {view, gone, status}: rules stay listed once spent
  firedEvents: new Map(), // rule id -> rule_fired events seen
  events: [],           // the feed, newest first
  lastSeq: null,
  recordsShown: false,
};

// -- the API ------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, path) {
    super(`${path}: ${message}`);
    this.status = status;
    this.path = path;
    this.reason = message;
  }

  // the route itself is not served (an older broker), rather than a missing resource
  get unserved() {
    return (this.status === 404 || this.status === 405) && /no such endpoint|not allowed/
      .test(this.reason);
  }
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (TOKEN) headers.Authorization = `Bearer ${TOKEN}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, cache: "no-store",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    // an empty or non-JSON body: the status says enough
  }
  if (!response.ok) {
    if (response.status === 401) noAccess(data && data.error);
    throw new ApiError(response.status, (data && data.error) || response.statusText, path);
  }
  return data;
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

const enc = encodeURIComponent;

// -- DOM helpers --------------------------------------------------------------------------

// h("td", {class: "num", "data-x": 1}, "text", child, ...): an element; children are nodes or
// text (null and undefined skipped)
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const $ = (selector) => document.querySelector(selector);

function row(cells, attrs = {}) {
  return h("tr", attrs, cells.map((cell) => (cell instanceof Node
    && (cell.tagName === "TD" || cell.tagName === "TH")) ? cell : h("td", {}, cell)));
}

function fill(tbody, rows, empty, columns) {
  tbody.replaceChildren(...(rows.length ? rows
    : [h("tr", { class: "empty" }, h("td", { colspan: columns }, empty))]));
}

function pad(n, width = 2) {
  return String(n).padStart(width, "0");
}

function time(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.` +
    pad(d.getMilliseconds(), 3);
}

function duration(ms) {
  if (ms === null || ms === undefined) return "under way";
  return ms < 10000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function assignment(topics) {
  if (!topics) return "–";
  const parts = Object.entries(topics).map(([topic, ps]) => `${topic}[${ps.join(",")}]`);
  return parts.length ? parts.join(" ") : "none";
}

function orNone(value, none = "–") {
  return value === null || value === undefined || value === "" ? none : value;
}

function text(value, base64) {
  if (value !== null && value !== undefined) return value;
  if (base64) return h("span", { class: "binary", title: "not UTF-8 text: base64" },
    `b64:${base64}`);
  return h("span", { class: "muted" }, "null");
}

function sectionError(section, error) {
  const host = document.getElementById(section);
  if (!host || !host.querySelector("h2")) return;
  let line = host.querySelector(":scope > .error");
  if (!error) {
    if (line) line.remove();
    return;
  }
  if (!line) {
    line = h("p", { class: "error" });
    host.querySelector("h2").after(line);
  }
  line.textContent = error.unserved ? `not served by this broker (${error.path})` : error.message;
}

function noAccess(reason) {
  state.stream = "no access";
  showLive();
  const problem = $("#problem");
  problem.hidden = false;
  problem.textContent = (TOKEN ? "The token in this page's address was refused: "
    : "This admin API requires a token: open this page as /#token=TOKEN (the token= of "
      + "mockbroker serve's ready line, or MockCluster.admin_token). ") + (reason || "");
}

function showLive() {
  const live = $("#live");
  live.textContent = state.stream === "live" ? "live"
    : state.stream === "polling" ? `polling every ${POLL_WITHOUT_STREAM_MS / 1000} s`
      : state.stream;
  live.className = `pill ${state.stream.replace(" ", "-")}`;
}

// -- brokers ------------------------------------------------------------------------------

async function refreshBrokers() {
  const [brokers, groups] = await Promise.all([api("/brokers"), api("/groups")]);
  const coordinated = new Map();
  for (const group of groups) {
    if (!coordinated.has(group.coordinator)) coordinated.set(group.coordinator, []);
    coordinated.get(group.coordinator).push(group.group_id);
  }
  fill($("#brokers tbody"), brokers.map((b) => row([
    b.id,
    `${b.host}:${b.port}`,
    h("span", { class: `state ${b.state === "up" ? "ok" : "bad"}` },
      b.state === "up" ? "alive" : "stopped"),
    b.controller ? "controller" : "",
    h("td", { class: "num" }, b.leader_partitions),
    (coordinated.get(b.id) || []).sort().join(", "),
  ], { "data-broker": b.id })), "no brokers", 6);
}

// -- topics and records -------------------------------------------------------------------

async function refreshTopics() {
  const internal = $("#topics-internal").checked;
  const topics = await api(`/topics${internal ? "?internal=true" : ""}`);
  state.topics = topics;
  const list = $("#topics-list");
  if (!topics.length) {
    list.replaceChildren(h("p", { class: "muted" }, "no topics"));
  } else {
    list.replaceChildren(...topics.map((topic) => {
      const records = topic.partitions.reduce((sum, p) => sum + p.records, 0);
      return h("div", { class: "topic", "data-topic": topic.name },
        h("h3", {}, topic.name, h("span", { class: "muted" },
          ` ${topic.partitions.length} partitions, ${records} records`)),
        h("table", {},
          h("thead", {}, row(["partition", "leader", "epoch", "replicas", "isr",
            "log start", "last stable", "high watermark", "records"].map((n) => h("th", {}, n)))),
          h("tbody", {}, topic.partitions.map((p) => h("tr", {
            "data-partition": `${topic.name}-${p.partition}`,
          }, [p.partition, p.leader, p.leader_epoch, p.replicas.join(","), p.isr.join(","),
            p.log_start_offset, p.last_stable_offset, p.high_watermark, p.records]
            .map((v) => h("td", { class: "num" }, v)))))));
    }));
  }
  fillRecordChoices();
  if (!state.recordsShown && topics.length) {
    state.recordsShown = true;  // the record browser opens on the first topic
    loadRecords();
  }
}

function fillRecordChoices() {
  const topicSelect = $("#records-topic");
  const chosen = topicSelect.value;
  const names = state.topics.map((t) => t.name);
  if (names.join("\n") !== [...topicSelect.options].map((o) => o.value).join("\n")) {
    topicSelect.replaceChildren(...names.map((n) => h("option", { value: n }, n)));
    if (names.includes(chosen)) topicSelect.value = chosen;
  }
  const topic = state.topics.find((t) => t.name === topicSelect.value);
  const partitionSelect = $("#records-partition");
  const partition = partitionSelect.value;
  const wanted = ["", ...(topic ? topic.partitions.map((p) => String(p.partition)) : [])];
  if (wanted.join(",") !== [...partitionSelect.options].map((o) => o.value).join(",")) {
    partitionSelect.replaceChildren(...wanted.map((p) => h("option", { value: p },
      p === "" ? "all" : p)));
    if (wanted.includes(partition)) partitionSelect.value = partition;
  }
}

async function loadRecords() {
  const topic = $("#records-topic").value;
  const body = $("#records tbody");
  if (!topic) {
    fill(body, [], "no topic", 7);
    return;
  }
  try {
    const records = await api(`/topics/${enc(topic)}/records${query({
      partition: $("#records-partition").value,
      offset: $("#records-offset").value,
      limit: $("#records-limit").value,
    })}`);
    sectionError("topics", null);
    fill(body, records.map((r) => row([
      h("td", { class: "num" }, r.partition),
      h("td", { class: "num" }, r.offset),
      h("span", { title: new Date(r.timestamp).toISOString() },
        `${time(r.timestamp)} ${r.timestamp_type === "LogAppendTime" ? "(append)" : ""}`),
      text(r.key, r.key_base64),
      text(r.value, r.value_base64),
      r.headers.map((hd) => h("span", { class: "header" }, `${hd.key}=`,
        text(hd.value, hd.value_base64))),
      orNone(r.transaction, ""),
    ], { "data-offset": `${r.partition}-${r.offset}` })), "no records there", 7);
  } catch (error) {
    sectionError("topics", error);
  }
}

// -- groups and their rebalances ----------------------------------------------------------

async function refreshGroups() {
  const summaries = await api("/groups");
  state.groups = summaries;
  const groups = await Promise.all(summaries.map(async (summary) => {
    const id = enc(summary.group_id);
    const [view, rebalances] = await Promise.all([
      api(`/groups/${id}`).catch((error) => ({ ...summary, error })),
      api(`/groups/${id}/rebalances`).catch((error) => error),
    ]);
    return { view, rebalances };
  }));
  const list = $("#groups-list");
  if (!groups.length) {
    list.replaceChildren(h("p", { class: "muted" }, "no groups"));
    return;
  }
  groups.sort((a, b) => a.view.group_id.localeCompare(b.view.group_id));
  list.replaceChildren(...groups.map(({ view, rebalances }) => renderGroup(view, rebalances)));
}

function renderGroup(group, rebalances) {
  // a group of epochs (consumer and share groups) rather than generations (classic)
  const consumer = group.group_epoch !== null && group.group_epoch !== undefined;
  const epoch = consumer ? `group epoch ${orNone(group.group_epoch)}, assignment epoch `
    + orNone(group.assignment_epoch) : `generation ${group.generation}`;
  const head = h("h3", {}, group.group_id, " ",
    h("span", { class: `state ${group.state === "Stable" ? "ok"
      : group.state === "Empty" || group.state === "Dead" ? "" : "busy"}` }, group.state),
    h("span", { class: "muted" }, ` ${group.type || "classic"} · ${epoch}`
      + ` · protocol ${orNone(group.protocol)} · coordinator broker ${group.coordinator}`));
  const article = h("article", { class: "group", "data-group": group.group_id }, head);
  if (group.error) {
    article.append(h("p", { class: "error" }, group.error.message));
    return article;
  }
  if (group.state === "loading") {
    article.append(h("p", { class: "muted" }, "its coordinator is loading it"));
    return article;
  }

  const memberColumns = ["member id", "client id", "host", "instance id", "assignment"];
  if (consumer) memberColumns.push("member epoch", "target assignment");
  article.append(h("table", { class: "members" },
    h("thead", {}, row(memberColumns.map((n) => h("th", {}, n)))),
    h("tbody", {}, group.members.length ? group.members.map((m) => row([
      h("td", { class: "id" }, m.member_id, m.member_id === group.leader
        ? h("span", { class: "tag" }, "leader") : null),
      m.client_id, orNone(m.client_host), orNone(m.group_instance_id),
      assignment(m.assignment),
      ...(consumer ? [orNone(m.member_epoch), assignment(m.target_assignment)] : []),
    ], { "data-member": m.member_id })) : h("tr", { class: "empty" },
      h("td", { colspan: memberColumns.length }, "no members")))));

  const offsets = [];
  let totalLag = 0;
  for (const [topic, partitions] of Object.entries(group.offsets || {})) {
    for (const [partition, offset] of Object.entries(partitions)) {
      const lag = ((group.lag || {})[topic] || {})[partition];
      totalLag += lag || 0;
      offsets.push(h("tr", { "data-partition": `${topic}-${partition}` },
        h("td", {}, topic), h("td", { class: "num" }, partition),
        h("td", { class: "num committed" }, offset),
        h("td", { class: `num lag${lag ? " behind" : ""}` }, orNone(lag))));
    }
  }
  if (group.share_partitions) {
    article.append(renderSharePartitions(group.share_partitions));
    article.append(renderTimeline(group, rebalances));
    return article;
  }
  article.append(h("table", { class: "offsets" },
    h("caption", {}, `committed offsets · total lag `,
      h("span", { class: "total-lag" }, totalLag)),
    h("thead", {}, row(["topic", "partition", "committed", "lag"].map((n) => h("th", {}, n)))),
    h("tbody", {}, offsets.length ? offsets : h("tr", { class: "empty" },
      h("td", { colspan: 4 }, "nothing committed")))));

  article.append(renderTimeline(group, rebalances));
  return article;
}

function renderSharePartitions(partitions) {
  // a share group's records in flight, per share partition, as its leader holds them
  const inFlight = (runs) => runs.length ? runs.map((r) => h("span", {
    class: `run ${r.state.toLowerCase()}`,
    title: r.member_id ? `held by ${r.member_id} until ${time(r.lock_deadline_ms)}` : r.state,
  }, `${r.first_offset}${r.last_offset !== r.first_offset ? `–${r.last_offset}` : ""} `
    + `${r.state} ×${r.delivery_count}`)) : h("span", { class: "muted" }, "none");
  return h("table", { class: "share-partitions" },
    h("caption", {}, "share partitions"),
    h("thead", {}, row(["topic", "partition", "leader", "start", "end", "lag", "in flight"]
      .map((n) => h("th", {}, n)))),
    h("tbody", {}, partitions.length ? partitions.map((p) => row([
      p.topic, h("td", { class: "num" }, p.partition), h("td", { class: "num" }, p.leader),
      h("td", { class: "num" }, p.start_offset), h("td", { class: "num" }, p.end_offset),
      h("td", { class: `num lag${p.lag ? " behind" : ""}` }, p.lag),
      h("td", { class: "in-flight" }, inFlight(p.in_flight)),
    ], { "data-partition": `${p.topic}-${p.partition}` })) : h("tr", { class: "empty" },
      h("td", { colspan: 7 }, "nothing fetched yet"))));
}

function renderTimeline(group, rebalances) {
  const box = h("div", { class: "timeline" }, h("h4", {}, "rebalances"));
  if (rebalances instanceof Error) {
    box.append(h("p", { class: "error" }, rebalances.unserved
      ? "the rebalance history is not served by this broker" : rebalances.message));
    return box;
  }
  if (!rebalances.length) {
    box.append(h("p", { class: "muted" }, "none yet"));
    return box;
  }
  // the axis: from the first start to the last end (now, while one is under way)
  const start = Math.min(...rebalances.map((r) => r.started_ms));
  let end = Math.max(...rebalances.map((r) => r.ended_ms ?? r.started_ms));
  if (rebalances.some((r) => r.ended_ms === null)) {
    end = Math.max(end, state.clock ? state.clock.now_ms : Date.now());
  }
  const span = Math.max(end - start, 1);
  const label = group.group_epoch !== null && group.group_epoch !== undefined ? "epoch" : "gen";
  box.append(h("div", { class: "axis" }, h("span", {}),
    h("div", { class: "ends" }, h("span", {}, time(start)), h("span", {}, time(end))),
    h("span", {}, `${duration(end - start)} shown`)));
  rebalances.forEach((r, index) => {
    const bar = h("div", {
      class: `bar${r.ended_ms === null ? " running" : ""}`,
      title: `${time(r.started_ms)} → ${r.ended_ms === null ? "…" : time(r.ended_ms)}`,
    });
    const left = ((r.started_ms - start) / span) * 100;
    const width = (((r.ended_ms ?? end) - r.started_ms) / span) * 100;
    bar.style.left = `${Math.min(left, 99.5)}%`;
    bar.style.width = `${Math.max(width, 0.5)}%`;
    const who = [];
    if (r.joined.length) who.push(h("span", { class: "joined" }, `joined ${r.joined.join(", ")}`));
    if (r.left.length) who.push(h("span", { class: "left" }, `left ${r.left.join(", ")}`));
    if (r.expired.length) {
      who.push(h("span", { class: "expired" }, `expired ${r.expired.join(", ")}`));
    }
    box.append(h("div", {
      class: `rebalance${r.ended_ms === null ? " running" : ""}`,
      "data-index": index,
      "data-generation": r.generation,
    },
    h("span", { class: "gen" }, `${label} ${r.generation}`),
    h("div", { class: "track" }, bar),
    h("div", { class: "detail" },
      h("span", { class: "cause" }, r.cause), " · ",
      h("span", { class: "duration" }, duration(r.duration_ms)),
      ` · started ${time(r.started_ms)} · ${r.members} members`,
      r.outcome ? ` · ${r.outcome}` : "",
      who.length ? h("div", { class: "who" }, who) : null)));
  });
  return box;
}

// -- transactions -------------------------------------------------------------------------

async function refreshTransactions() {
  const transactions = await api("/transactions");
  fill($("#transactions tbody"), transactions.map((t) => row([
    t.transactional_id, t.state, h("td", { class: "num" }, t.producer_id),
    h("td", { class: "num" }, t.producer_epoch), assignment(t.partitions),
    duration(t.timeout_ms), t.age_ms === null ? "–" : duration(t.age_ms), t.coordinator,
  ], { "data-transaction": t.transactional_id })), "no transactional ids", 8);
}

// -- the Schema Registry ------------------------------------------------------------------

async function refreshSchemaRegistry() {
  const section = $("#schema-registry");
  let registry;
  try {
    registry = await api("/schema-registry");
  } catch (error) {
    if (error.status === 404) {  // the cluster runs none: the section stays hidden
      section.hidden = true;
      return;
    }
    throw error;
  }
  section.hidden = false;
  $("#schema-registry-summary").textContent =
    `${registry.url} · ${registry.compatibility} · ${registry.mode}`;
  const rows = [];
  for (const subject of registry.subjects) {
    const own = [subject.compatibility, subject.mode].filter((x) => x).join(", ");
    for (const v of subject.versions) {
      rows.push(row([
        own ? `${subject.subject} (${own})` : subject.subject,
        h("td", { class: "num" }, v.deleted ? `${v.version} (deleted)` : v.version),
        h("td", { class: "num" }, v.id), v.schema_type,
        v.references.map((r) => `${r.name} → ${r.subject} v${r.version}`).join(", ") || "–",
        h("td", { class: "schema" }, h("code", {}, v.schema)),
      ], { "data-subject": subject.subject, "data-version": String(v.version) }));
    }
  }
  fill($("#schema-registry tbody"), rows, "no subjects", 6);
}

// -- control rules ------------------------------------------------------------------------

async function refreshFaults() {
  const rules = await api("/faults");
  const present = new Set();
  for (const view of rules) {
    present.add(view.id);
    state.rules.set(view.id, { view, gone: false });
  }
  // A rule whose count runs out leaves the list: it stays shown, spent, with what it fired
  // (from the request log, which names the rules that acted on each request).
  const vanished = [...state.rules.values()].filter((r) => !r.gone && !present.has(r.view.id));
  if (vanished.length) {
    const log = await api("/requests").catch(() => []);
    for (const rule of vanished) {
      const logged = log.filter((entry) => (entry.rules || []).includes(rule.view.id)).length;
      rule.gone = true;
      rule.fired = Math.max(rule.view.fired, logged, state.firedEvents.get(rule.view.id) || 0);
      rule.status = rule.view.count !== null && rule.fired >= rule.view.fired + rule.view.count
        ? "spent" : "removed";
    }
  }
  const shown = [...state.rules.values()].sort((a, b) => (a.gone - b.gone)
    || (a.view.id - b.view.id));
  fill($("#faults tbody"), shown.map((rule) => {
    const v = rule.view;
    const fired = rule.gone ? rule.fired : v.fired;
    const remove = rule.gone ? h("span", { class: "muted" }, rule.status)
      : h("button", { type: "button", class: "remove", "data-remove": v.id }, "remove");
    return row([
      h("td", { class: "num" }, v.id), orNone(v.api, "any"), v.action,
      v.action === "error" ? orNone(v.error) : v.action === "delay" ? `${v.delay_ms} ms`
        : orNone(v.error, ""),
      rule.gone ? 0 : orNone(v.count, "∞"),
      h("td", { class: `num fired${fired ? " hot" : ""}` }, fired),
      orNone(v.broker, "any"), orNone(v.topic, "any"), orNone(v.group, "any"), remove,
    ], { "data-rule": v.id, class: rule.gone ? `gone ${rule.status}` : null });
  }), "no rules", 10);
}

async function addRule(event) {
  event.preventDefault();
  const value = (id) => $(id).value.trim();
  const integer = (id) => (value(id) === "" ? null : Number.parseInt(value(id), 10));
  const action = value("#fault-action");
  const spec = {
    api: value("#fault-api") || null,
    action,
    count: integer("#fault-count"),
    broker: integer("#fault-broker"),
    topic: value("#fault-topic") || null,
  };
  if (action === "error") spec.error = value("#fault-error") || null;
  if (action === "delay") spec.delay_ms = integer("#fault-delay") || 0;
  const form = $("#fault-form");
  try {
    await api("/faults", { method: "POST", body: spec });
    sectionError("faults", null);
  } catch (error) {
    sectionError("faults", error);
  }
  form.querySelector("button[type=submit]").blur();
  markDirty(["faults"]);
}

async function removeRule(event) {
  const button = event.target.closest("button[data-remove]");
  if (!button) return;
  const id = Number(button.dataset.remove);
  try {
    await api(`/faults/${id}`, { method: "DELETE" });
    state.rules.delete(id);
    sectionError("faults", null);
  } catch (error) {
    sectionError("faults", error);
  }
  markDirty(["faults"]);
}

// -- the request log ----------------------------------------------------------------------

async function refreshRequests() {
  const requests = await api(`/requests${query({
    api: $("#requests-api").value.trim(),
    broker: $("#requests-broker").value,
    client_id: $("#requests-client").value.trim(),
    limit: $("#requests-limit").value || 50,
  })}`);
  fill($("#requests tbody"), requests.reverse().map((r) => row([
    h("td", { class: "num" }, r.seq), time(r.time_ms), h("td", { class: "num" }, r.broker),
    `${r.api} v${r.api_version}`, orNone(r.client_id),
    h("span", { class: r.outcome === "answered" ? "" : "state bad" }, r.outcome),
    h("span", { class: r.error ? "state bad" : "" }, orNone(r.error, "")),
    (r.rules || []).join(", "),
  ], { "data-seq": r.seq })), "no requests", 8);
}

// -- the clock ----------------------------------------------------------------------------

async function refreshClock() {
  let problem = "";
  try {
    state.clock = await api("/clock");
  } catch (error) {
    state.clock = null;
    problem = error.message;
  }
  const clock = state.clock;
  $("#clock-text").textContent = clock ? `${clock.mode} · ${time(clock.now_ms)}` : "n/a";
  $("#clock").title = problem || "the cluster's clock (GET /clock)";
  $("#clock").dataset.mode = clock ? clock.mode : "";
  $("#clock-advance").hidden = !clock || clock.mode !== "manual";
}

async function advanceClock() {
  const ms = Number.parseInt($("#clock-ms").value, 10);
  if (!(ms > 0)) return;
  try {
    state.clock = await api("/clock/advance", { method: "POST", body: { ms } });
  } catch (error) {
    $("#clock-text").textContent = error.message;
  }
  markDirty(["clock", "groups", "transactions"]);
}

// -- refreshing: what changed, at most every MIN_REFRESH_MS --------------------------------

const REFRESH = {
  brokers: refreshBrokers,
  topics: refreshTopics,
  groups: refreshGroups,
  transactions: refreshTransactions,
  faults: refreshFaults,
  requests: refreshRequests,
  clock: refreshClock,
  "schema-registry": refreshSchemaRegistry,
};
const dirty = new Set();
let timer = null;
let running = false;
let lastRun = 0;

function markDirty(sections) {
  for (const section of sections) dirty.add(section);
  schedule();
}

function schedule() {
  if (timer !== null || running || !dirty.size) return;
  const wait = Math.max(0, lastRun + MIN_REFRESH_MS - Date.now());
  timer = setTimeout(flush, wait);
}

async function flush() {
  timer = null;
  running = true;
  const sections = [...dirty];
  dirty.clear();
  await Promise.all(sections.map(async (section) => {
    try {
      await REFRESH[section]();
      sectionError(section, null);
    } catch (error) {
      sectionError(section, error);
    }
  }));
  running = false;
  lastRun = Date.now();
  $("#updated").textContent = `updated ${time(lastRun)}`;
  schedule();
}

// -- events -------------------------------------------------------------------------------

function summary(event) {
  const skip = new Set(["seq", "time_ms", "type"]);
  return Object.entries(event).filter(([name]) => !skip.has(name)).map(([name, value]) =>
    `${name}=${typeof value === "object" && value !== null ? JSON.stringify(value) : value}`)
    .join(" ").slice(0, 240);
}

function showEvents() {
  $("#events-feed").replaceChildren(...state.events.map((e) => h("li", {
    "data-seq": e.seq, "data-type": e.type,
  }, h("span", { class: "muted" }, `${time(e.time_ms)} `), h("b", {}, e.type), " ",
  summary(e))));
}

function received(event) {
  if (state.lastSeq !== null && event.seq <= state.lastSeq) return; // seen (a reconnect)
  state.lastSeq = event.seq;
  state.events.unshift(event);
  state.events.length = Math.min(state.events.length, FEED_SIZE);
  if (event.type === "rule_fired" && event.rule !== undefined) {
    state.firedEvents.set(event.rule, (state.firedEvents.get(event.rule) || 0) + 1);
  }
  if (event.type === "reset") {
    state.rules.clear();
    state.firedEvents.clear();
  }
  markDirty([...(AFFECTS[event.type] || SECTIONS), "events"]);
}

REFRESH.events = async () => showEvents();

async function newestSeq() {
  // GET /events answers oldest first (limit keeps the oldest): the newest seq is found by
  // galloping, then bisecting, over "is there an event after seq?" (seqs have no gaps)
  const after = async (seq) => (await api(`/events${query({ since: seq, limit: 1 })}`))
    .length > 0;
  const [oldest] = await api(`/events${query({ limit: 1 })}`);
  if (!oldest) return 0;
  let low = oldest.seq;  // an event has this seq
  let step = 64;
  let high = low + step;
  while (await after(high - 1)) {
    low = high;
    step *= 2;
    high = low + step;
  }
  while (high - low > 1) {  // low has an event, high has none
    const middle = Math.floor((low + high) / 2);
    if (await after(middle - 1)) low = middle;
    else high = middle;
  }
  return low;
}

async function history() {
  // the latest events, for the feed, and where the stream is to start
  try {
    const newest = await newestSeq();
    const since = Math.max(0, newest - FEED_SIZE);
    const events = await api(`/events${query({ since, limit: FEED_SIZE })}`);
    for (const event of events) received(event);
    if (state.lastSeq === null) state.lastSeq = newest;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
    sectionError("events", error);
  }
}

let stream = null;

function subscribe() {
  if (stream !== null || state.stream === "no access") return;
  const url = `/events/stream${query({ since: state.lastSeq, access_token: TOKEN })}`;
  stream = new EventSource(url);
  stream.onopen = () => {
    state.stream = "live";
    showLive();
    sectionError("events", null);
  };
  const onEvent = (message) => {
    try {
      received(JSON.parse(message.data));
    } catch {
      // not an event of ours: ignored
    }
  };
  for (const type of EVENT_TYPES) stream.addEventListener(type, onEvent);
  stream.onerror = () => {
    if (stream.readyState === EventSource.CLOSED) {
      // refused (not served, or no access): poll instead, and try the stream again later
      stream = null;
      if (state.stream !== "no access") state.stream = "polling";
      showLive();
      setTimeout(subscribe, 15000);
    } else if (state.stream === "live") {
      state.stream = "reconnecting";  // EventSource reconnects on its own
      showLive();
    }
  };
}

function poll() {
  if (!document.hidden && state.stream !== "no access") {
    markDirty(state.stream === "live" ? POLLED : SECTIONS);
  }
  setTimeout(poll, state.stream === "live" ? POLL_LIVE_MS : POLL_WITHOUT_STREAM_MS);
}

// -- start --------------------------------------------------------------------------------

async function start() {
  $("#fault-form").addEventListener("submit", addRule);
  $("#faults tbody").addEventListener("click", removeRule);
  $("#requests-form").addEventListener("submit", (event) => {
    event.preventDefault();
    markDirty(["requests"]);
  });
  $("#records-form").addEventListener("submit", (event) => {
    event.preventDefault();
    loadRecords();
  });
  $("#records-topic").addEventListener("change", () => {
    fillRecordChoices();
    loadRecords();
  });
  $("#topics-internal").addEventListener("change", () => markDirty(["topics"]));
  $("#clock-advance-button").addEventListener("click", advanceClock);
  showLive();
  markDirty(SECTIONS);
  try {
    await history();
  } catch {
    // 401: shown by noAccess
  }
  subscribe();
  setTimeout(poll, POLL_WITHOUT_STREAM_MS);
}

start();
