// The live dashboard page: the program's events arrive over Server-Sent Events and are
// drawn with uPlot and the chart parts it shares with the report (charts.js), both served
// by the program itself: no network needed. Every connection,
// also after EventSource reconnects by itself, starts with "hello" and the history so
// far, so the page starts over on "hello".
"use strict";

const COLOURS = {
  concurrency: "#1f77b4",
  delay: "#9467bd",
  ok: "#2ca02c",
  errors: "#d62728",
  timedout: "#ff7f0e",
  throttled: "#8c564b",
  attempts: "#7f7f7f",
  queue: "#17becf",
};
/** A chain's tiers, the edge first. */
const TIER_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
/** Earlier strategies of the same run, muted. */
const MUTED = ["#a6bddb", "#c2a5cf", "#bdbdbd", "#fdbf6f", "#b2df8a", "#fb9a99", "#cab2d6", "#d9d9d9"];
const { delay, delayExponent, drawLimit, fromZero, powersOfTen, readableSeconds, shadeBands, spanTime, timeAxes } = herdCharts;
const PHASE_FILL = { steady: "rgba(31, 119, 180, 0.05)", outage: "rgba(214, 39, 40, 0.15)", observe: "rgba(44, 160, 44, 0.10)" };

/**
 * runs[n]: { strategy, limit, phases: [{ phase, atS }], faults: [fault events: { fault, fromS, toS, label, fill, silencesServer }],
 * server: {...arrays},
 * client: {...arrays}, verdict }
 */
let runs = [];
let ended = false;
let drawPending = false;
let xMax = 1;
const plots = {};

const $ = (id) => document.getElementById(id);

function pushServer(run, atS, concurrency, delayS, queueLength) {
  run.server.t.push(atS);
  run.server.concurrency.push(concurrency);
  run.server.delay.push(delayS);
  run.server.queue.push(queueLength);
}

function newRun(event) {
  return {
    strategy: event.strategy,
    limit: event.limit,
    phases: [],
    faults: [],
    server: { t: [], concurrency: [], delay: [], queue: [], points: 0, lastConcurrency: null, lastDelayS: null, lastQueue: null },
    client: { t: [], ok: [], errors: [], timedout: [], throttled: [], attempts: [], hasThrottled: false, behind: [] },
    // A spike's extra users, from their own client: drawn beside the herd's, not added into it (their windows differ).
    spike: { t: [], ok: [], attempts: [] },
    // A chain only: each tier's arrivals per second, the edge first, { name, t, arrivals } (a tier not yet heard from: empty).
    tiers: [],
    verdict: undefined,
  };
}

function receive(event) {
  const run = runs[event.run];
  switch (event.kind) {
    case "hello":
      runs = [];
      ended = false;
      $("source").textContent = event.source;
      document.title = `${event.title}: live`;
      break;
    case "run":
      runs[event.run] = newRun(event);
      break;
    case "phase":
      run.phases.push({ phase: event.phase, atS: event.atS });
      break;
    case "fault":
      run.faults.push(event);
      break;
    case "server": {
      // A server stopped by an outage reports nothing: its lines break off between the reports around it.
      const previous = run.server.t.at(-1);
      const startedBetween = (atS) => atS >= previous && atS < event.atS;
      const stopped =
        run.phases.some((phase) => phase.phase === "outage" && startedBetween(phase.atS)) ||
        run.faults.some((fault) => fault.silencesServer && startedBetween(fault.fromS));
      if (stopped) pushServer(run, (previous + event.atS) / 2, null, null, null);
      pushServer(run, event.atS, event.concurrency, delayExponent(event.delayS), event.queueLength ?? null);
      run.server.lastDelayS = event.delayS;
      run.server.lastConcurrency = event.concurrency;
      // The queue model's state, where the server has one.
      run.server.lastQueue =
        event.threads === undefined ? null : { queueLength: event.queueLength, threadsBusy: event.threadsBusy, threads: event.threads };
      run.server.points++;
      break;
    }
    case "client":
      run.client.t.push(event.atS);
      for (const series of ["ok", "errors", "timedout", "attempts"]) run.client[series].push(event[`${series}PerSec`]);
      run.client.throttled.push(event.throttledPerSec ?? null);
      if (event.throttledPerSec !== undefined) run.client.hasThrottled = true;
      if (event.behind !== undefined) run.client.behind.push({ atS: event.atS, why: event.behind });
      break;
    case "spike-client":
      run.spike.t.push(event.atS);
      run.spike.ok.push(event.okPerSec);
      run.spike.attempts.push(event.attemptsPerSec);
      break;
    case "tier": {
      const tier = (run.tiers[event.index] ??= { name: event.tier, t: [], arrivals: [] });
      tier.t.push(event.atS);
      tier.arrivals.push(event.arrivalsPerSec);
      break;
    }
    case "verdict":
      run.verdict = { verdict: event.verdict, why: event.why };
      break;
    case "end":
      ended = true;
      source.close();
      setStatus("finished", `finished: ${event.note}`);
      break;
  }
  if (!drawPending) {
    drawPending = true;
    requestAnimationFrame(draw);
  }
}

function setStatus(state, text) {
  $("status").dataset.state = state;
  $("status").textContent = text;
}

const source = new EventSource("events");
source.onopen = () => setStatus("live", "live");
source.onerror = () => {
  if (!ended) setStatus("reconnecting", "reconnecting…");
};
source.onmessage = (message) => receive(JSON.parse(message.data));

// ---- drawing ------------------------------------------------------------------------

function draw() {
  drawPending = false;
  const run = runs.at(-1);
  showFigures(run);
  if (run === undefined) return;
  const shown = runs.filter((candidate) => candidate !== undefined);
  // One time axis for all charts: from 0 to the latest report of any run.
  xMax = Math.max(1, ...shown.flatMap((other) => [other.server.t.at(-1) ?? 0, other.client.t.at(-1) ?? 0]));
  const earlier = shown.slice(0, -1);
  const label = (other) => `${other.strategy} (earlier)`;

  const withServer = shown.filter((other) => other.server.t.length > 0);
  // The queue model's waiting requests beside the current run's requests in the server.
  const hasQueue = run.server.queue.some((value) => value !== null);
  plot(
    "concurrency",
    withServer.map((other) =>
      other === run && hasQueue
        ? [other.server.t, other.server.concurrency, other.server.queue]
        : [other.server.t, other.server.concurrency],
    ),
    withServer.flatMap((other, index) =>
      other === run
        ? [line(run.strategy, COLOURS.concurrency, 2), ...(hasQueue ? [line("queue", COLOURS.queue, 1.5)] : [])]
        : [line(label(other), MUTED[index % MUTED.length], 1)],
    ),
    { distr: 4, range: fromZero },
    (u) => drawLimit(u, run.limit),
    { values: powersOfTen },
  );
  plot(
    "delay",
    withServer.map((other) => [other.server.t, other.server.delay]),
    withServer.map((other, index) => ({
      ...(other === run ? line(run.strategy, COLOURS.delay, 2) : line(label(other), MUTED[index % MUTED.length], 1)),
      value: delay.value,
    })),
    delay.scale,
    undefined,
    delay,
  );
  const names = ["ok", "errors", "timedout", ...(run.client.hasThrottled ? ["throttled"] : []), "attempts"];
  const earlierWithClient = earlier.filter((other) => other.client.t.length > 0);
  const spike = run.spike.t.length > 0;
  plot(
    "client",
    [
      ...earlierWithClient.map((other) => [other.client.t, other.client.ok]),
      [run.client.t, ...names.map((name) => run.client[name])],
      ...(spike ? [[run.spike.t, run.spike.ok, run.spike.attempts]] : []),
    ],
    [
      ...earlierWithClient.map((other, index) => line(`OK · ${label(other)}`, MUTED[index % MUTED.length], 1)),
      ...names.map((name) => line(name === "ok" ? "OK" : name, COLOURS[name], name === "ok" ? 2 : 1.5)),
      ...(spike ? [dashed(line("spike's users: OK", COLOURS.ok, 1)), dashed(line("spike's users: attempts", COLOURS.attempts, 1))] : []),
    ],
    { distr: 4, range: fromZero },
    undefined,
    { values: powersOfTen },
  );
  // A chain: the attempts that reached each tier, the multiplication down the chain.
  const tiers = [...run.tiers].filter((tier) => tier !== undefined);
  $("tiers-figure").hidden = tiers.length === 0;
  if (tiers.length > 0) {
    plot(
      "tiers",
      tiers.map((tier) => [tier.t, tier.arrivals]),
      tiers.map((tier, index) => line(tier.name, TIER_COLOURS[index % TIER_COLOURS.length], 1.5)),
      { distr: 4, range: fromZero },
      undefined,
      { values: powersOfTen },
    );
  }
}

/** A series of a spike's extra users: dashed, beside the herd's own. */
const dashed = (series) => ({ ...series, dash: [6, 4] });

// Gaps of the join (another series' times) are bridged; explicit nulls (an outage) are not.
const line = (label, stroke, width) => ({ label, stroke, width, spanGaps: false, points: { show: false } });

/** Draws one chart; it is made anew only when its series change, and fed new data otherwise. `yAxis`: its values and steps. */
function plot(name, tables, series, yScale, drawExtra, yAxis) {
  const container = $(`chart-${name}`);
  if (tables.length === 0 || tables[0][0].length === 0) return;
  // Every chart's time axis runs from 0 to the latest report of any run.
  const data = spanTime(tables.length === 1 ? tables[0].slice() : uPlot.join(tables), xMax);
  const key = JSON.stringify(series.map((one) => [one.label, one.stroke]));
  const existing = plots[name];
  if (existing !== undefined && existing.key === key) {
    // New points keep a zoom the reader chose; otherwise the axes follow the data.
    existing.plot.setData(data, !existing.zoomed);
    return;
  }
  existing?.plot.destroy();
  const options = {
    width: container.clientWidth,
    height: 220,
    scales: { x: { time: false }, y: yScale },
    axes: timeAxes(yAxis),
    series: [{ label: "t (s)" }, ...series],
    legend: { live: true },
    hooks: {
      drawClear: [shadePhases],
      draw: drawExtra === undefined ? [] : [drawExtra],
      // Zoomed in: the x scale is narrower than the data (double-click zooms out again).
      setScale: [
        (u, key) => {
          if (key === "x") entry.zoomed = u.scales.x.min > u.data[0][0] || u.scales.x.max < u.data[0].at(-1);
        },
      ],
    },
  };
  const entry = { key, zoomed: false, plot: undefined };
  entry.plot = new uPlot(options, data, container);
  plots[name] = entry;
}

/** The current run's phases as shaded bands, each named at its top; then its faults, each in its kind's colour and named below. */
function shadePhases(u) {
  const run = runs.at(-1);
  if (run === undefined) return;
  shadeBands(
    u,
    run.phases.map((phase, index) => ({
      fromS: phase.atS,
      toS: index + 1 < run.phases.length ? run.phases[index + 1].atS : u.scales.x.max,
      fill: PHASE_FILL[phase.phase],
      name: phase.phase,
    })),
  );
  shadeFaults(u, run.faults);
}

/** Fault bands over the phases: overlapping faults' labels go one line lower each, so that every one can be read. */
function shadeFaults(u, faults) {
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  const clamp = (x) => Math.min(left + width, Math.max(left, x));
  ctx.save();
  ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
  ctx.textAlign = "left";
  ctx.textBaseline = "alphabetic";
  faults.forEach((fault, index) => {
    const from = clamp(u.valToPos(fault.fromS, "x", true));
    const to = clamp(u.valToPos(fault.toS, "x", true));
    if (to <= from) return;
    const row = faults.slice(0, index).filter((other) => other.toS > fault.fromS && other.fromS < fault.toS).length;
    ctx.fillStyle = fault.fill;
    ctx.fillRect(from, top, to - from, height);
    ctx.fillStyle = "#333";
    ctx.fillText(fault.label, from + 4 * devicePixelRatio, top + (26 + 13 * row) * devicePixelRatio);
  });
  ctx.restore();
}

// ---- figures -------------------------------------------------------------------------

function showFigures(run) {
  const last = (values) => (values.length === 0 ? undefined : values[values.length - 1]);
  $("strategy").textContent = run?.strategy ?? "–";
  $("phase").textContent = last(run?.phases ?? [])?.phase ?? "–";
  const hasServer = run !== undefined && run.server.points > 0;
  $("concurrency").textContent = hasServer ? run.server.lastConcurrency.toLocaleString("en") : "–";
  $("delay").textContent = hasServer ? readableSeconds(run.server.lastDelayS) : "–";
  const queue = hasServer ? run.server.lastQueue : null;
  $("queue-figures").hidden = queue === null;
  $("queue").textContent = queue === null ? "–" : queue.queueLength.toLocaleString("en");
  $("threads").textContent = queue === null ? "–" : `${queue.threadsBusy}/${queue.threads}`;
  const now = run?.server.t.at(-1) ?? 0;
  const faultsOn = (run?.faults ?? []).filter((fault) => fault.fromS <= now && now < fault.toS).map((fault) => fault.label);
  $("faults").textContent = faultsOn.length === 0 ? "–" : faultsOn.join(", ");
  const rate = (values) => {
    const value = last(values);
    return value === undefined ? "–" : value.toFixed(1);
  };
  $("ok").textContent = rate(run?.client.ok ?? []);
  $("timedout").textContent = rate(run?.client.timedout ?? []);
  // A window in which the client fell behind is not evidence about the server: said loudly, with its figure.
  const behind = run?.client.behind ?? [];
  $("behind").hidden = behind.length === 0;
  $("behind").textContent =
    behind.length === 0
      ? ""
      : `The client fell behind in ${behind.length} window(s), last at ${last(behind).atS.toFixed(0)} s: ${last(behind).why}. ` +
        "Those windows measure the client, not the server.";
  $("verdicts").replaceChildren(
    ...runs
      .filter((other) => other?.verdict !== undefined)
      .map((other) => {
        const item = document.createElement("li");
        item.textContent = `${other.strategy}: ${other.verdict.verdict}. ${other.verdict.why}`;
        return item;
      }),
  );
}

addEventListener("resize", () => {
  for (const name of Object.keys(plots)) plots[name].plot.setSize({ width: $(`chart-${name}`).clientWidth, height: 220 });
});

/** For tests and the curious: what the page holds and has drawn. */
window.dashboard = {
  get runs() {
    return runs;
  },
  get plots() {
    return Object.fromEntries(Object.entries(plots).map(([name, entry]) => [name, entry.plot]));
  },
};
