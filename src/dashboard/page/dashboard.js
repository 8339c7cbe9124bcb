// The live dashboard page: the program's events arrive over Server-Sent Events and are
// drawn with uPlot (served by the program itself: no network needed). Every connection,
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
};
/** Earlier strategies of the same run, muted. */
const MUTED = ["#a6bddb", "#c2a5cf", "#bdbdbd", "#fdbf6f", "#b2df8a", "#fb9a99", "#cab2d6", "#d9d9d9"];
const GRID = { stroke: "rgba(0, 0, 0, 0.06)", width: 1 };
const PHASE_FILL = { steady: "rgba(31, 119, 180, 0.05)", outage: "rgba(214, 39, 40, 0.15)", observe: "rgba(44, 160, 44, 0.10)" };

/** runs[n]: { strategy, limit, phases: [{ phase, atS }], server: {...arrays}, client: {...arrays}, verdict } */
let runs = [];
let ended = false;
let drawPending = false;
let xMax = 1;
const plots = {};

const $ = (id) => document.getElementById(id);

function pushServer(run, atS, concurrency, delayS) {
  run.server.t.push(atS);
  run.server.concurrency.push(concurrency);
  run.server.delay.push(delayS);
}

function newRun(event) {
  return {
    strategy: event.strategy,
    limit: event.limit,
    phases: [],
    server: { t: [], concurrency: [], delay: [], points: 0, lastConcurrency: null, lastDelayS: null },
    client: { t: [], ok: [], errors: [], timedout: [], throttled: [], attempts: [], hasThrottled: false, behind: [] },
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
    case "server": {
      // A server stopped by an outage reports nothing: its lines break off between the reports around it.
      const previous = run.server.t.at(-1);
      const stopped = run.phases.some((phase) => phase.phase === "outage" && phase.atS >= previous && phase.atS < event.atS);
      if (stopped) pushServer(run, (previous + event.atS) / 2, null, null);
      // The delay is drawn as its logarithm (it grows past 1e60 s, more decades than a log
      // axis can label); 0 (no request yet) and an infinite delay have no place there.
      pushServer(run, event.atS, event.concurrency, event.delayS !== null && event.delayS > 0 ? Math.log10(event.delayS) : null);
      run.server.lastDelayS = event.delayS;
      run.server.lastConcurrency = event.concurrency;
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
  plot(
    "concurrency",
    withServer.map((other) => [other.server.t, other.server.concurrency]),
    withServer.map((other, index) =>
      other === run ? line(run.strategy, COLOURS.concurrency, 2) : line(label(other), MUTED[index % MUTED.length], 1),
    ),
    { distr: 4, range: fromZero },
    drawLimit,
    compactNumber,
  );
  plot(
    "delay",
    withServer.map((other) => [other.server.t, other.server.delay]),
    withServer.map((other, index) => ({
      ...(other === run ? line(run.strategy, COLOURS.delay, 2) : line(label(other), MUTED[index % MUTED.length], 1)),
      value: (u, exponent) => (exponent === null || exponent === undefined ? "--" : readableSeconds(10 ** exponent)),
    })),
    { range: (u, min, max) => [Math.floor(min ?? -1), Math.max(Math.ceil(max ?? 0), Math.floor(min ?? -1) + 1)] },
    undefined,
    tenToThe,
    [1, 2, 3, 5, 10, 20, 50, 100],
  );
  const names = ["ok", "errors", "timedout", ...(run.client.hasThrottled ? ["throttled"] : []), "attempts"];
  const earlierWithClient = earlier.filter((other) => other.client.t.length > 0);
  plot(
    "client",
    [...earlierWithClient.map((other) => [other.client.t, other.client.ok]), [run.client.t, ...names.map((name) => run.client[name])]],
    [
      ...earlierWithClient.map((other, index) => line(`OK · ${label(other)}`, MUTED[index % MUTED.length], 1)),
      ...names.map((name) => line(name === "ok" ? "OK" : name, COLOURS[name], name === "ok" ? 2 : 1.5)),
    ],
    { distr: 4, range: fromZero },
    undefined,
    compactNumber,
  );
}

/** Log-like (asinh) axes start at 0, where asinh is linear, and end at a power of ten. */
const fromZero = (u, min, max) => [0, 10 ** Math.ceil(Math.log10(Math.max(max, 1) * 1.01))];

/** Labels of an axis of exponents: 0.1, 1, 10, 1,000, 1e4 … */
const tenToThe = (u, splits) =>
  splits.map((exponent) => (!Number.isInteger(exponent) ? "" : exponent >= 4 ? `1e${exponent}` : (10 ** exponent).toLocaleString("en")));

/** Labels at 0 and powers of ten only, short enough to fit: 1e6 rather than 1,000,000. */
const compactNumber = (u, splits) =>
  splits.map((value) => {
    if (value === 0) return "0";
    if (!(value > 0) || !Number.isInteger(Math.round(Math.log10(value) * 1e6) / 1e6)) return "";
    return value >= 1e4 ? value.toExponential(0).replace("+", "") : value.toLocaleString("en");
  });

/** Every chart's time axis runs from 0 to the latest report of any run: points without values at both ends. */
function spanTime([data]) {
  if (data[0][0] > 0) data.forEach((values, index) => (data[index] = [index === 0 ? 0 : undefined, ...values]));
  if (data[0].at(-1) < xMax) data.forEach((values, index) => (data[index] = [...values, index === 0 ? xMax : undefined]));
  return data;
}

// Gaps of the join (another series' times) are bridged; explicit nulls (an outage) are not.
const line = (label, stroke, width) => ({ label, stroke, width, spanGaps: false, points: { show: false } });

/** Draws one chart; it is made anew only when its series change, and fed new data otherwise. */
function plot(name, tables, series, yScale, drawExtra, yValues, yIncrements) {
  const container = $(`chart-${name}`);
  if (tables.length === 0 || tables[0][0].length === 0) return;
  const data = spanTime(tables.length === 1 ? tables.map((table) => table.slice()) : [uPlot.join(tables)]);
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
    axes: [
      { label: "seconds since the run started", grid: GRID },
      {
        size: 60,
        grid: GRID,
        ...(yValues === undefined ? {} : { values: yValues }),
        ...(yIncrements === undefined ? {} : { incrs: yIncrements }),
      },
    ],
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

/** The current run's phases as shaded bands, each named at its top. */
function shadePhases(u) {
  const run = runs.at(-1);
  if (run === undefined) return;
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  const clamp = (x) => Math.min(left + width, Math.max(left, x));
  ctx.save();
  ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
  // uPlot leaves the alignment of its axis labels set.
  ctx.textAlign = "left";
  ctx.textBaseline = "alphabetic";
  run.phases.forEach((phase, index) => {
    const end = index + 1 < run.phases.length ? run.phases[index + 1].atS : u.scales.x.max;
    const from = clamp(u.valToPos(phase.atS, "x", true));
    const to = clamp(u.valToPos(end, "x", true));
    if (to <= from) return;
    ctx.fillStyle = PHASE_FILL[phase.phase];
    ctx.fillRect(from, top, to - from, height);
    ctx.fillStyle = "#555";
    ctx.fillText(phase.phase, from + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
  });
  ctx.restore();
}

/** The concurrency limit, dashed: above it the delay grows. */
function drawLimit(u) {
  const run = runs.at(-1);
  if (run === undefined) return;
  const y = u.valToPos(run.limit, "y", true);
  const { ctx } = u;
  ctx.save();
  ctx.strokeStyle = "#888";
  ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
  ctx.beginPath();
  ctx.moveTo(u.bbox.left, y);
  ctx.lineTo(u.bbox.left + u.bbox.width, y);
  ctx.stroke();
  ctx.fillStyle = "#555";
  ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
  // uPlot leaves the alignment of its axis labels set.
  ctx.textAlign = "left";
  ctx.textBaseline = "alphabetic";
  ctx.fillText(`limit ${run.limit}`, u.bbox.left + u.bbox.width - 60 * devicePixelRatio, y - 4 * devicePixelRatio);
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

const YEAR_S = 365.25 * 24 * 3600;

function readableSeconds(seconds) {
  if (seconds === null) return "forever";
  if (seconds < 1) return `${(seconds * 1000).toFixed(0)} ms`;
  if (seconds < 120) return `${seconds.toFixed(2)} s`;
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 2 * 86400) return `${(seconds / 3600).toFixed(1)} h`;
  if (seconds < YEAR_S) return `${(seconds / 86400).toFixed(1)} days`;
  return `${(seconds / YEAR_S).toPrecision(3)} years`;
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
