// The report's interactive charts: every strategy overlaid on shared axes, drawn with uPlot
// (inlined in the page, so it works offline). Drag to zoom, double-click to zoom out; the
// legend under each chart shows the values under the cursor, in all three charts at once.
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const endS = Math.max(...data.strategies.map((strategy) => strategy.phases.endS));
  const outage = data.strategies[0].phases;
  const GRID = { stroke: "rgba(0, 0, 0, 0.06)", width: 1 };

  /** Log-like (asinh) axes start at 0, where asinh is linear, and end at a power of ten. */
  const fromZero = (u, min, max) => [0, 10 ** Math.ceil(Math.log10(Math.max(max, 1) * 1.01))];
  /** Labels at 0 and powers of ten only, short enough to fit: 1e6 rather than 1,000,000. */
  const powersOfTen = (u, splits) =>
    splits.map((value) => {
      if (value === 0) return "0";
      if (!(value > 0) || !Number.isInteger(Math.round(Math.log10(value) * 1e6) / 1e6)) return "";
      return value >= 1e4 ? value.toExponential(0).replace("+", "") : value.toLocaleString("en");
    });

  const labelled = (ctx, text, x, y) => {
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    ctx.fillStyle = "#555";
    ctx.fillText(text, x, y);
  };

  /** The outage, shaded (its times are the same for every strategy, give or take a few ms). */
  function shadeOutage(u) {
    const { ctx } = u;
    const { left, top, width, height } = u.bbox;
    const clamp = (x) => Math.min(left + width, Math.max(left, x));
    const from = clamp(u.valToPos(outage.stopS, "x", true));
    const to = clamp(u.valToPos(outage.resumeS, "x", true));
    if (to <= from) return;
    ctx.save();
    ctx.fillStyle = "rgba(214, 39, 40, 0.12)";
    ctx.fillRect(from, top, to - from, height);
    labelled(ctx, "outage", from + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
    ctx.restore();
  }

  function drawLimit(u) {
    const y = u.valToPos(data.limit, "y", true);
    const { ctx } = u;
    ctx.save();
    ctx.strokeStyle = "#888";
    ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    labelled(ctx, `limit ${data.limit}`, u.bbox.left + u.bbox.width - 60 * devicePixelRatio, y - 4 * devicePixelRatio);
    ctx.restore();
  }

  /** Labels of an axis of exponents: 0.1, 1, 10, 1,000, 1e4 … */
  const tenToThe = (u, splits) =>
    splits.map((exponent) => (!Number.isInteger(exponent) ? "" : exponent >= 4 ? `1e${exponent}` : (10 ** exponent).toLocaleString("en")));
  const YEAR_S = 365.25 * 24 * 3600;
  const readableSeconds = (seconds) =>
    seconds < 1
      ? `${(seconds * 1000).toFixed(0)} ms`
      : seconds < 120
        ? `${seconds.toFixed(2)} s`
        : seconds < YEAR_S
          ? `${(seconds / 3600).toFixed(1)} h`
          : `${(seconds / YEAR_S).toPrecision(3)} years`;

  /** A server stopped by the outage reports nothing: its line breaks off between the reports around it. */
  const serverSeries = (strategy, values) => {
    const { t } = strategy.server;
    const after = t.findIndex((time) => time > strategy.phases.stopS);
    if (after < 1) return [t, values];
    const gapAt = (t[after - 1] + t[after]) / 2;
    return [
      [...t.slice(0, after), gapAt, ...t.slice(after)],
      [...values.slice(0, after), null, ...values.slice(after)],
    ];
  };

  const charts = [
    {
      id: "overlay-concurrency",
      pick: (s) => serverSeries(s, s.server.concurrency),
      y: { distr: 4, range: fromZero },
      values: powersOfTen,
      draw: drawLimit,
    },
    {
      // The delay is drawn as its logarithm: it grows past 1e60 s, more decades than a log axis can label.
      id: "overlay-delay",
      pick: (s) =>
        serverSeries(
          s,
          s.server.delay.map((delay) => (delay === null ? null : Math.log10(delay))),
        ),
      y: { range: (u, min, max) => [Math.floor(min ?? -1), Math.max(Math.ceil(max ?? 0), Math.floor(min ?? -1) + 1)] },
      values: tenToThe,
      incrs: [1, 2, 3, 5, 10, 20, 50, 100],
      value: (u, exponent) => (exponent === null || exponent === undefined ? "--" : readableSeconds(10 ** exponent)),
    },
    { id: "overlay-goodput", pick: (s) => [s.client.t, s.client.ok], y: { range: (u, min, max) => [0, Math.max(1, max) * 1.05] } },
  ];

  const plots = {};
  for (const chart of charts) {
    const container = document.getElementById(chart.id);
    const aligned = uPlot.join(data.strategies.map(chart.pick));
    // Every chart spans the whole run, from 0.
    if (aligned[0][0] > 0) aligned.forEach((values, index) => values.unshift(index === 0 ? 0 : undefined));
    if (aligned[0].at(-1) < endS) aligned.forEach((values, index) => values.push(index === 0 ? endS : undefined));
    plots[chart.id.replace("overlay-", "")] = new uPlot(
      {
        width: container.clientWidth || 900,
        height: 240,
        cursor: { sync: { key: "report" } },
        scales: { x: { time: false }, y: chart.y },
        axes: [
          { label: "seconds since the run started", grid: GRID },
          { size: 60, grid: GRID, ...(chart.values ? { values: chart.values } : {}), ...(chart.incrs ? { incrs: chart.incrs } : {}) },
        ],
        series: [
          { label: "t (s)" },
          ...data.strategies.map((strategy, index) => ({
            label: `${strategy.name} (${strategy.verdict})`,
            stroke: data.colours[index % data.colours.length],
            width: 1.5,
            points: { show: false },
            ...(chart.value ? { value: chart.value } : {}),
          })),
        ],
        hooks: { drawClear: [shadeOutage], draw: chart.draw ? [chart.draw] : [] },
      },
      aligned,
      container,
    );
  }
  addEventListener("resize", () => {
    for (const chart of charts)
      plots[chart.id.replace("overlay-", "")].setSize({ width: document.getElementById(chart.id).clientWidth, height: 240 });
  });
  /** For tests and the curious. */
  window.reportCharts = plots;
})();
