// timerhost dashboard (#33): a read-only single page over the node's
// JSON-RPC. Routes: #/ (now, timeline, ahead), #/timers, #/timer/<id>,
// #/watches, #/cron, #/actor/<address>, #/governance (#48: proposals, the
// validator set and its changes, the config history). Addresses show a name
// where one is known: the system actors, and a deployed actor's class. It follows new blocks through a
// WebSocket subscription (th_subscribe ["newHeads"], #48) and re-renders the
// current view when one arrives; if the socket fails it polls th_status once
// a second and tries the socket again. <body data-live> says which it uses.
"use strict";

const view = document.getElementById("view");
const heightEl = document.querySelector('[data-testid="height"]');
let lastHeight = null;
let rendering = false;
let charts = [];

async function rpc(method, params = []) {
  const r = await fetch("/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const j = await r.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

function esc(v) {
  return String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
const short = (h) => (h && h.length > 18 ? `${h.slice(0, 10)}…${h.slice(-6)}` : h || "");
const num = (v) => (v === null || v === undefined ? "—" : Number(v).toLocaleString("en-US"));
const card = (k, v, testid) => `<div class="card"><div class="k">${esc(k)}</div><div class="v"${testid ? ` data-testid="${testid}"` : ""}>${v}</div></div>`;
const actorLink = (a) =>
  a ? `<a class="mono" href="#/actor/${esc(a)}">${esc(short(a))}</a><span class="name" data-name-of="${esc(a)}"></span>` : "";

// Names of addresses: the system actors', and each deployed actor's class
// (the first `class` of its source, read once with th_getCode).
const SYSTEM = (n) => "0x" + "00".repeat(19) + n;
const names = new Map([
  [SYSTEM("06"), "CronRegistry"],
  [SYSTEM("0a"), "governance"],
  [SYSTEM("0b"), "timer deposit escrow"],
  [SYSTEM("0c"), "proposal deposit escrow"],
]);
async function nameOf(address) {
  const a = address.toLowerCase();
  if (!names.has(a)) {
    names.set(a, null);
    try {
      const code = await rpc("th_getCode", [a]);
      const m = code && code.source ? /^class\s+([A-Za-z_]\w*)/m.exec(code.source) : null;
      names.set(a, m ? m[1] : "");
    } catch (e) {
      names.set(a, "");
    }
  }
  return names.get(a);
}
async function fillNames() {
  for (const el of view.querySelectorAll("[data-name-of]")) {
    const n = await nameOf(el.dataset.nameOf);
    if (n) el.textContent = ` ${n}`;
  }
}
// An event's or a record's fields for people: amounts grouped, addresses
// linked and named, nested values as JSON.
function fields(data) {
  if (data === null || typeof data !== "object") return `<span class="mono">${esc(JSON.stringify(data))}</span>`;
  return `<div class="kv small">${Object.entries(data)
    .map(([k, raw]) => {
      // Bytes come as {"$bytes": "0x…"}: shown as their hex.
      const v = raw && typeof raw === "object" && "$bytes" in raw ? raw["$bytes"] : raw;
      let shown;
      if (v === null || v === undefined || v === "") shown = `<span class="muted">—</span>`;
      else if (typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v)) shown = actorLink(v);
      else if (typeof v === "string" && /^0x[0-9a-fA-F]{64}$/.test(v)) shown = k.includes("timer") ? timerLink(v) : `<span class="mono">${esc(short(v))}</span>`;
      else if (typeof v === "string" && /^0x[0-9a-fA-F]*$/.test(v)) shown = v.length > 2 ? `<span class="mono">${esc(short(v))}</span> <span class="muted">(${(v.length - 2) / 2} bytes)</span>` : `<span class="muted">empty</span>`;
      else if (typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v))) shown = num(v);
      else if (Array.isArray(v)) shown = v.length ? v.map((x) => esc(typeof x === "object" ? JSON.stringify(x) : x)).join(", ") : `<span class="muted">none</span>`;
      else if (v && typeof v === "object") shown = fields(v);
      else shown = esc(v);
      return `<div>${esc(k.replace(/_/g, " "))}</div><div>${shown}</div>`;
    })
    .join("")}</div>`;
}
function timerLink(id) {
  return `<a class="mono" href="#/timer/${esc(id)}">${esc(short(id))}</a>`;
}

function trigger(t) {
  const g = t.trigger || {};
  if (g.kind === "height") return `height ${num(g.height)}`;
  if (g.kind === "time") return `time ${new Date(g.timestamp_ms).toISOString()}`;
  if (g.kind === "state") return `state: ${esc((g.keys || []).join(", "))} of ${short(g.actor)}`;
  return esc(g.kind);
}

function chart(el, title, labels, xs, series, opts = {}) {
  const box = document.createElement("div");
  box.className = "chart";
  box.innerHTML = `<h3>${esc(title)}</h3>`;
  el.appendChild(box);
  const colors = ["#2563eb", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#0891b2"];
  const u = new uPlot(
    {
      width: Math.max(300, box.clientWidth - 18),
      height: 180,
      scales: { x: { time: false } },
      axes: [{ label: opts.xlabel || "block" }, { size: 100, values: (u, vals) => vals.map((v) => Number(v).toLocaleString("en-US")) }],
      series: [{ label: opts.xlabel || "block" }].concat(
        labels.map((l, i) => ({
          label: l,
          stroke: colors[i % colors.length],
          fill: opts.bars ? colors[i % colors.length] + "55" : undefined,
          paths: opts.bars ? uPlot.paths.bars({ size: [0.6, 40] }) : undefined,
          points: { show: false },
        }))
      ),
    },
    [xs].concat(series),
    box
  );
  charts.push(u);
}

async function renderNow() {
  const [s, stats, ahead, tc, bc] = await Promise.all([
    rpc("th_status"),
    rpc("th_getBlockStats", [{ count: 60 }]),
    rpc("th_getAhead", [{ blocks: 30, seconds: 60 }]),
    rpc("th_getTimerConfig"),
    rpc("th_getBasefeeConfig"),
  ]);
  const p = s.producer || {};
  const mode = p.mode === "consensus" ? (p.validator ? "validator" : "follower") : p.mode === "interval" || p.mode === "manual" ? "dev" : p.mode;
  const blockTime = p.block_time_ms ? `${p.block_time_ms} ms` : "on demand";
  view.innerHTML = `
    <h1>Now</h1>
    <div class="cards">
      ${card("height", num(s.height), "now-height")}
      ${card("chain id", esc(s.chain_id))}
      ${card("block time", esc(blockTime))}
      ${card("producer", esc(mode), "producer-mode")}
      ${card("timers", esc(s.timers.status), "timer-status")}
      ${card("ordering", esc(s.timers.ordering))}
      ${card("pending timers", num(s.timers.pending), "pending-timers")}
      ${card("fired since genesis", num(s.timers.fired_total), "fired-total")}
      ${card("carried over now", ahead.carried_over >= ahead.counts_capped_at ? `≥ ${num(ahead.carried_over)}` : num(ahead.carried_over), "carried-over")}
      ${card("cycle basefee", num(bc.cycle_basefee))}
      ${card("cell basefee", num(bc.cell_basefee))}
      ${card("lane basefee", num(s.timers.lane_basefee), "lane-basefee")}
      ${card("mempool", `${num(s.mempool.size)} / ${num(s.mempool.capacity)}`, "mempool")}
      ${card("deposits held", num(s.timers.deposits_held))}
    </div>
    <h2>Timeline — the last ${stats.blocks.length} blocks</h2>
    <div class="charts" id="timeline"></div>
    <h2>Ahead</h2>
    <p class="muted">Timers queued for the next blocks and seconds with the lane cycles they reserve (what <span class="mono">timer_quote</span> reads); lane ${num(tc.lane_cycles_per_block)} cycles, at most ${num(tc.max_fires_per_block)} fires a block.
    ${tc.ordering === "fifo" ? "" : `Globalbox: <b data-testid="globalbox-size">${num(ahead.globalbox)}</b> queued, ${num(ahead.globalbox_waiting)} waiting for the lane basefee.`}</p>
    <div class="charts" id="ahead"></div>`;
  const b = stats.blocks;
  const xs = b.map((r) => r.height);
  const tl = document.getElementById("timeline");
  chart(tl, "timers fired, by trigger", ["height", "time", "state", "fired late (carried over)"], xs, [
    b.map((r) => r.fired.height), b.map((r) => r.fired.time), b.map((r) => r.fired.state), b.map((r) => r.carried_over_fired),
  ]);
  chart(tl, "timers removed", ["expired", "unfunded", "cancelled", "revoked", "waiting (below basefee)"], xs, [
    b.map((r) => r.expired), b.map((r) => r.unfunded), b.map((r) => r.cancelled), b.map((r) => r.revoked), b.map((r) => r.deferred),
  ]);
  chart(tl, `timer lane (lane ${num(stats.lane_budget)} cycles)`, ["reserved by fires", "used by fires", "lane"], xs, [
    b.map((r) => r.lane_cycles_reserved), b.map((r) => r.lane_cycles_used), b.map(() => stats.lane_budget),
  ]);
  chart(tl, "fees burned and tipped", ["burned", "tipped"], xs, [b.map((r) => Number(r.burned)), b.map((r) => Number(r.tipped))]);
  chart(tl, "deliveries and transactions", ["deliveries", "transactions"], xs, [b.map((r) => r.deliveries), b.map((r) => r.txs)]);
  const ah = document.getElementById("ahead");
  const hx = ahead.by_height.map((r) => r.height);
  chart(ah, "queued by due height", ["timers", "reserved lane cycles / 10,000"], hx, [
    ahead.by_height.map((r) => r.queued), ahead.by_height.map((r) => r.reserved / 10000),
  ], { bars: true, xlabel: "height" });
  // #45: booked and free capacity of each of the next blocks.
  const share = ahead.bookable || { fires: 0, cycles: 0 };
  const bookedAt = new Map(ahead.by_height.map((r) => [r.height, r.booked_fires || 0]));
  const bx = Array.from({ length: 30 }, (_, i) => ahead.head + 1 + i);
  chart(ah, `booked capacity by height (a block's bookable share: ${num(share.fires)} fires, ${num(share.cycles)} cycles)`, ["booked fires", "free to book"], bx, [
    bx.map((h) => bookedAt.get(h) || 0), bx.map((h) => Math.max(0, share.fires - (bookedAt.get(h) || 0))),
  ], { bars: true, xlabel: "height" });
  const sx = ahead.by_second.map((r) => Math.round((r.from_ms - ahead.head_timestamp) / 1000));
  chart(ah, "queued by due time (seconds from the head)", ["timers", "reserved lane cycles / 10,000"], sx, [
    ahead.by_second.map((r) => r.queued), ahead.by_second.map((r) => r.reserved / 10000),
  ], { bars: true, xlabel: "seconds" });
}

function params() {
  const q = location.hash.split("?")[1] || "";
  return Object.fromEntries(new URLSearchParams(q));
}

async function renderTimers() {
  const f = params();
  const query = {};
  for (const k of ["actor", "fee_payer", "kind", "handler", "cursor"]) if (f[k]) query[k] = f[k];
  const page = await rpc("th_getTimersPage", [query]);
  const rows = page.timers
    .map((t) => `<tr data-testid="timer-row-${esc(t.timer_id)}">
      <td>${timerLink(t.timer_id)}</td><td>${actorLink(t.actor)}</td><td>${actorLink(t.fee_payer)}</td>
      <td>${trigger(t)}</td><td class="mono">${esc(t.handler)}</td><td>${num(t.gas_limit_per_fire)}</td>
      <td>${num(t.expires_at)}</td><td>${num(t.deposit)}</td></tr>`)
    .join("");
  const next = page.next ? `<a data-testid="next-page" href="#/timers?${new URLSearchParams({ ...query, cursor: page.next })}">next page →</a>` : "";
  view.innerHTML = `<h1>Timers <span class="muted">(${num(page.pending)} pending)</span></h1>
    <form class="filters" id="filters">
      <input name="actor" placeholder="actor 0x…" value="${esc(f.actor)}" size="44">
      <input name="fee_payer" placeholder="fee payer 0x…" value="${esc(f.fee_payer)}" size="44">
      <select name="kind"><option value="">any trigger</option>${["height", "time", "state"].map((k) => `<option${f.kind === k ? " selected" : ""}>${k}</option>`).join("")}</select>
      <input name="handler" placeholder="handler" value="${esc(f.handler)}">
      <button>Filter</button>
    </form>
    <table><thead><tr><th>timer</th><th>actor</th><th>fee payer</th><th>trigger</th><th>handler</th><th>gas / fire</th><th>expires at</th><th>deposit</th></tr></thead>
    <tbody>${rows || `<tr><td colspan="8" class="muted">no pending timer matches</td></tr>`}</tbody></table>
    <p>${next}</p>`;
  document.getElementById("filters").onsubmit = (e) => {
    e.preventDefault();
    const data = Object.fromEntries([...new FormData(e.target)].filter(([, v]) => v));
    location.hash = `#/timers?${new URLSearchParams(data)}`;
  };
}

async function renderTimer(id) {
  const life = await rpc("th_getTimerLife", [id]);
  const t = life.timer;
  const fire = life.events.filter((e) => e.name === "TimerFired").pop();
  const record = t
    ? `<div class="kv">
        <div>actor</div><div>${actorLink(t.actor)}</div>
        <div>fee payer</div><div>${actorLink(t.fee_payer)}</div>
        <div>trigger</div><div>${trigger(t)}</div>
        <div>handler</div><div class="mono">${esc(t.handler)}</div>
        <div>gas limit per fire</div><div>${num(t.gas_limit_per_fire)}</div>
        <div>expires at</div><div>${num(t.expires_at)}</div>
        <div>deposit</div><div>${num(t.deposit)}</div>
        <div>bid (max priority fee)</div><div>${num(t.bid)}</div>
        <div>max fee per cycle</div><div>${num(t.max_fee_per_cycle)}</div>
        <div>escrow</div><div class="mono">${esc(t.escrow_key || "—")}</div>
        <div>queued in</div><div>${esc(life.queued)}</div>
      </div>`
    : "";
  const fired = fire
    ? `<h2>Fired</h2><div class="kv" data-testid="fire">
        <div>block</div><div>${num(fire.height)}</div>
        <div>success</div><div>${esc(fire.data.success)}${fire.data.error ? ` — ${esc(fire.data.error)}` : ""}</div>
        <div>cycles used</div><div>${num(fire.data.cycles_used)}</div>
        <div>cost</div><div data-testid="fire-cost">${num(fire.data.cost)}</div>
        <div>refund</div><div>${num(fire.data.refund)}</div>
        <div>tip</div><div>${num(fire.data.tip)}</div>
        <div>lane basefee / priority fee</div><div>${num(fire.data.lane_basefee)} / ${num(fire.data.priority_fee)}</div>
      </div>`
    : "";
  const events = life.events
    .map((e) => `<tr><td>${num(e.height)}</td><td>${esc(e.name)}</td><td>${fields(e.data)}</td></tr>`)
    .join("");
  view.innerHTML = `<h1>Timer <span class="mono">${esc(short(id))}</span></h1>
    <p class="mono muted">${esc(id)}</p>
    <div data-testid="timer-state">${life.pending ? "pending" : "not pending"}</div>
    <div class="why" data-testid="why">${life.pending ? "Why it has not fired: " : "How it ended: "}${esc(life.why)}</div>
    ${record}${fired}
    <h2>Its life</h2>
    <table><thead><tr><th>block</th><th>event</th><th>data</th></tr></thead><tbody>${events || `<tr><td colspan="3" class="muted">no events found</td></tr>`}</tbody></table>`;
}

async function renderWatches() {
  const page = await rpc("th_getWatches", [params().cursor ? { cursor: params().cursor } : {}]);
  const rows = page.watches
    .map((w) => `<tr data-testid="watch-row-${esc(w.timer_id)}"><td>${timerLink(w.timer_id)}</td><td>${actorLink(w.actor)}</td>
      <td>${trigger(w)}</td><td class="mono">${esc(w.handler)}</td><td>${num(w.trigger.fires)}</td><td>${actorLink(w.fee_payer)}</td><td>${num(w.expires_at)}</td></tr>`)
    .join("");
  view.innerHTML = `<h1>State watches</h1>
    <table><thead><tr><th>watch</th><th>owner</th><th>watches</th><th>handler</th><th>fires</th><th>fee payer</th><th>expires at</th></tr></thead>
    <tbody>${rows || `<tr><td colspan="7" class="muted">no watch</td></tr>`}</tbody></table>
    <p>${page.next ? `<a href="#/watches?cursor=${esc(page.next)}">next page →</a>` : ""}</p>`;
}

async function renderCron() {
  const page = await rpc("th_getCronJobs", [params().cursor ? { cursor: params().cursor } : {}]);
  const rows = page.jobs
    .map((j) => `<tr data-testid="cron-row-${esc(j.id)}"><td>${esc(j.id)}</td><td>${actorLink(j.owner)}</td><td>${actorLink(j.target)}</td>
      <td class="mono">${esc(j.method)}</td><td>${j.nextRunAt ? new Date(j.nextRunAt * 1000).toISOString() : "—"}</td>
      <td>${num(j.intervalSec)} s</td><td>${j.maxRuns ? num(j.runsLeft) : "until the escrow runs out"}</td><td>${num(j.escrow)}</td>
      <td>${j.timer ? timerLink(j.timer["$bytes"] || j.timer) : "—"}</td></tr>`)
    .join("");
  view.innerHTML = `<h1>Cron jobs <span class="muted">(ARC-21 registry 0x…06)</span></h1>
    <table><thead><tr><th>job</th><th>owner</th><th>target</th><th>method</th><th>next run</th><th>interval</th><th>runs left</th><th>escrow</th><th>next run's timer</th></tr></thead>
    <tbody>${rows || `<tr><td colspan="9" class="muted">no job</td></tr>`}</tbody></table>
    <p>${page.next ? `<a href="#/cron?cursor=${esc(page.next)}">next page →</a>` : ""}</p>`;
}

// A proposal's action in a line: a config change as the fields it would
// change against the config in force now (the rest equal), other actions
// with their fields.
function action(a, inForce) {
  if (a.config && inForce) {
    const changed = Object.entries(a.config).filter(([k, v]) => JSON.stringify(inForce[k]) !== JSON.stringify(v));
    const what = changed.length
      ? changed.map(([k, v]) => `${esc(k)}: ${esc(JSON.stringify(inForce[k]))} → <b>${esc(JSON.stringify(v))}</b>`).join(", ")
      : `<span class="muted">the config in force now</span>`;
    return `<b>${esc(a.kind)}</b> ${what}`;
  }
  if (a.config) return `<b>${esc(a.kind)}</b> <span class="muted">(what it changed: the config history below)</span>`;
  const rest = Object.entries(a).filter(([k]) => k !== "kind");
  return `<b>${esc(a.kind)}</b>${rest.length ? " " + rest.map(([k, v]) => `${esc(k)}=${typeof v === "object" ? esc(JSON.stringify(v)) : esc(v)}`).join(", ") : ""}`;
}

const SET_CHANGES = ["AddValidator", "RemoveValidator", "SetValidatorPower"];

async function renderGovernance() {
  const [proposals, set, timerCfg, basefeeCfg, timerGenesis, basefeeGenesis, executed, timerUpdates, basefeeUpdates] = await Promise.all([
    rpc("th_getProposals", [{ from: 1, limit: 200 }]),
    rpc("th_getValidators", []).catch(() => null),
    rpc("th_getTimerConfig", []),
    rpc("th_getBasefeeConfig", []),
    rpc("th_getTimerConfig", [0]),
    rpc("th_getBasefeeConfig", [0]),
    rpc("th_getEvents", [{ name: "ProposalExecuted", limit: 200 }]),
    rpc("th_getEvents", [{ name: "timer_config.updated", limit: 100 }]),
    rpc("th_getEvents", [{ name: "basefee_config.updated", limit: 100 }]),
  ]);
  const inForce = (kind) => (kind === "UpdateTimerConfig" ? timerCfg : kind === "UpdateBasefeeConfig" ? basefeeCfg : null);
  const tally = (p) => {
    const needed = Math.floor((2 * p.total_power) / 3) + 1;
    const when = p.closed_at != null ? `; at block ${num(p.closed_at)}` : "";
    return `<span data-testid="tally-${esc(p.proposal_id)}">${num(p.yes_power)} yes / ${num(p.no_power)} no of ${num(p.total_power)}</span> <span class="muted">(passes at ${num(needed)}${when})</span>`;
  };
  const rows = proposals
    .slice()
    .reverse()
    .map((p) => `<tr data-testid="proposal-row-${esc(p.proposal_id)}"><td>${num(p.proposal_id)}</td><td>${action(p.action, p.status === "executed" ? null : inForce(p.action.kind))}</td><td>${actorLink(p.proposer)}</td>
      <td>${num(p.deposit)}</td><td>${num(p.submitted_at)} → ${num(p.voting_ends_at)}</td><td>${tally(p)}</td><td class="status-${esc(p.status)}">${esc(p.status)}</td></tr>`)
    .join("");
  const members = set
    ? set.validators
        .map((v) => `<tr><td class="mono">${esc(short(v.address))}</td><td>${num(v.power)}</td><td>${actorLink(v.operator)}</td><td class="mono">${esc(short(v.public_key))}</td></tr>`)
        .join("")
    : "";
  const executedActions = executed.map((e) => ({ height: e.data.effective_height ?? e.height, id: e.data.proposal_id, action: e.data.action }));
  const changes = executedActions
    .filter((x) => SET_CHANGES.includes(x.action.kind))
    .map((x) => `<tr><td>${num(x.id)}</td><td>${action(x.action)}</td><td>from block ${num(x.height)}</td></tr>`)
    .join("");
  // A config's history: every executed proposal that set it and every
  // update emitted by the chain itself, each shown as what it changed.
  // RPC writes amounts as decimal strings, events as numbers: a value is
  // compared and shown as its text.
  const shown = (v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));
  const history = (kind, updates, genesis) => {
    const steps = [
      { height: 0, config: genesis, by: "genesis" },
      ...executedActions.filter((x) => x.action.kind === kind).map((x) => ({ height: x.height, config: x.action.config, by: `proposal ${num(x.id)}` })),
      ...updates.map((e) => ({ height: e.height, config: e.data, by: "governance instruction" })),
    ].sort((a, b) => a.height - b.height);
    // Each change against the step before it, the first against genesis
    // (which is listed only as the base).
    return steps
      .map((step, i) => {
        if (i === 0) return "";
        const before = steps[i - 1].config;
        const changed = Object.entries(step.config).filter(([k, v]) => shown(before[k]) !== shown(v));
        return `<tr><td>${num(step.height)}</td><td>${esc(step.by)}</td><td>${changed.map(([k, v]) => `${esc(k)}: ${esc(shown(before[k]))} → <b>${esc(shown(v))}</b>`).join("<br>") || "<span class='muted'>no change</span>"}</td></tr>`;
      })
      .reverse()
      .join("");
  };
  view.innerHTML = `<h1>Governance</h1>
    <h2>Proposals</h2>
    <table data-testid="proposals"><thead><tr><th>id</th><th>action</th><th>proposer</th><th>deposit</th><th>voting (blocks)</th><th>votes (power)</th><th>status</th></tr></thead>
    <tbody>${rows || `<tr><td colspan="7" class="muted">no proposal yet</td></tr>`}</tbody></table>
    <h2>Validator set ${set ? `<span class="muted">of block ${num(set.height)}: total power ${num(set.total_power)}</span>` : ""}</h2>
    ${set ? `<table data-testid="validators"><thead><tr><th>validator</th><th>power</th><th>operator</th><th>public key</th></tr></thead><tbody>${members}</tbody></table>` : `<p class="muted">This chain has no validator set: one node produces its blocks.</p>`}
    <h2>Changes of the set</h2>
    <table><thead><tr><th>proposal</th><th>change</th><th>in force</th></tr></thead><tbody>${changes || `<tr><td colspan="3" class="muted">none since genesis</td></tr>`}</tbody></table>
    <h2>TimerConfig changes</h2>
    <table data-testid="timer-config-history"><thead><tr><th>from block</th><th>by</th><th>what changed</th></tr></thead><tbody>${history("UpdateTimerConfig", timerUpdates, timerGenesis) || `<tr><td colspan="3" class="muted">none since genesis</td></tr>`}</tbody></table>
    <h2>BasefeeConfig changes</h2>
    <table><thead><tr><th>from block</th><th>by</th><th>what changed</th></tr></thead><tbody>${history("UpdateBasefeeConfig", basefeeUpdates, basefeeGenesis) || `<tr><td colspan="3" class="muted">none since genesis</td></tr>`}</tbody></table>`;
}

async function renderActor(address) {
  const f = params();
  const head = lastHeight ?? (await rpc("th_status")).height;
  const since = Math.max(0, head - 100);
  const [account, keys, events, timers, letters] = await Promise.all([
    rpc("th_getAccount", [address]),
    rpc("th_getStorageKeys", [address, f.prefix || "", 50]),
    rpc("th_getEvents", [{ actor: address, from: since, limit: 50 }]),
    rpc("th_getTimersPage", [{ actor: address }]),
    rpc("th_getDeadLetters", [{ actor: address }]),
  ]);
  view.innerHTML = `<h1>Actor <span class="mono">${esc(short(address))}</span></h1>
    <p class="mono muted">${esc(address)}</p>
    <div class="cards">${card("balance", num(account.balance))}${card("nonce", num(account.nonce))}${card("is an actor", esc(account.is_actor))}${card("live timers", num(timers.timers.length) + (timers.next ? "+" : ""))}</div>
    <h2>Live timers</h2>
    <table><thead><tr><th>timer</th><th>trigger</th><th>handler</th><th>fee payer</th></tr></thead><tbody>
    ${timers.timers.map((t) => `<tr data-testid="timer-row-${esc(t.timer_id)}"><td>${timerLink(t.timer_id)}</td><td>${trigger(t)}</td><td class="mono">${esc(t.handler)}</td><td>${actorLink(t.fee_payer)}</td></tr>`).join("") || `<tr><td colspan="4" class="muted">none</td></tr>`}
    </tbody></table>
    <p>${timers.next ? `<a href="#/timers?actor=${esc(address)}">all its timers →</a>` : ""}</p>
    <h2>Dead letters <span class="muted">(timers whose retries all failed; only the actor retries or drops them)</span></h2>
    <table data-testid="dead-letters"><thead><tr><th>timer</th><th>attempts</th><th>last error</th><th>failed at</th><th>expires at</th><th>deposit</th></tr></thead><tbody>
    ${letters.map((d) => `<tr data-testid="dead-letter-${esc(d.timer_id)}"><td class="mono">${esc(short(d.timer_id))}</td><td>${num(d.attempts)}</td><td class="mono" title="${esc(d.traceback)}">${esc(d.error)}</td><td>${num(d.dead_at)}</td><td>${num(d.expires_at)}</td><td>${num(d.deposit)}</td></tr>`).join("") || `<tr><td colspan="6" class="muted">none</td></tr>`}
    </tbody></table>
    <h2>Storage keys</h2>
    <p class="mono">${keys.map(esc).join("<br>") || "<span class='muted'>none</span>"}</p>
    ${keys.length === 50 ? `<p><a href="#/actor/${esc(address)}?prefix=${encodeURIComponent(keys[keys.length - 1])}">keys from ${esc(keys[keys.length - 1])} →</a></p>` : ""}
    <h2>Events since block ${num(since)} (the first 50)</h2>
    <table><thead><tr><th>block</th><th>event</th><th>data</th></tr></thead><tbody>
    ${events.map((e) => `<tr><td>${num(e.height)}</td><td>${esc(e.name)}</td><td class="mono">${esc(JSON.stringify(e.data))}</td></tr>`).join("")}
    </tbody></table>`;
}

async function render() {
  if (rendering) return;
  rendering = true;
  charts.forEach((c) => c.destroy());
  charts = [];
  const route = location.hash.replace(/^#/, "").split("?")[0] || "/";
  try {
    if (route === "/") await renderNow();
    else if (route === "/timers") await renderTimers();
    else if (route.startsWith("/timer/")) await renderTimer(route.slice(7));
    else if (route === "/watches") await renderWatches();
    else if (route === "/cron") await renderCron();
    else if (route.startsWith("/actor/")) await renderActor(route.slice(7));
    else if (route === "/governance") await renderGovernance();
    else view.innerHTML = `<p class="error">No view at ${esc(route)}.</p>`;
    await fillNames();
  } catch (e) {
    view.innerHTML = `<p class="error">${esc(e.message)}</p>`;
  } finally {
    rendering = false;
  }
}

function newHead(height) {
  heightEl.textContent = height;
  if (lastHeight !== null && height !== lastHeight && !document.querySelector("form.filters input:focus")) render();
  lastHeight = height;
}

async function poll() {
  if (document.body.dataset.live === "subscription") return;
  try {
    const s = await rpc("th_status");
    newHead(s.height);
  } catch (e) {
    heightEl.textContent = "offline";
  }
}

function follow() {
  let ws;
  try {
    ws = new WebSocket(location.origin.replace(/^http/, "ws") + "/");
  } catch (e) {
    document.body.dataset.live = "polling";
    setTimeout(follow, 5000);
    return;
  }
  ws.onopen = () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "th_subscribe", params: ["newHeads"] }));
  ws.onmessage = (m) => {
    const j = JSON.parse(m.data);
    if (j.id === 1 && j.result !== undefined) document.body.dataset.live = "subscription";
    if (j.method === "th_subscription" && j.params && j.params.result) newHead(j.params.result.height);
  };
  ws.onclose = () => {
    document.body.dataset.live = "polling";
    setTimeout(follow, 5000);
  };
}

window.addEventListener("hashchange", render);
render();
poll();
follow();
setInterval(poll, 1000);
