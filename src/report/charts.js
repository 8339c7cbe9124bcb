// What the dashboard's live charts and the report's interactive charts share: uPlot axes,
// scales, labels and marks for a crash experiment's timelines. A plain browser script that
// defines `herdCharts`: the dashboard serves it as /charts.js, the report inlines it (see
// src/report/chart-files.ts), each before its own charts.
"use strict";
window.herdCharts = (() => {
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

  /** Labels of an axis of exponents: 0.1, 1, 10, 1,000, 1e4 … */
  const tenToThe = (u, splits) =>
    splits.map((exponent) => (!Number.isInteger(exponent) ? "" : exponent >= 4 ? `1e${exponent}` : (10 ** exponent).toLocaleString("en")));

  const YEAR_S = 365.25 * 24 * 3600;

  /** A delay in seconds as a reader says it: 206 ms, 2.60 s, 3.5 min, 1.2 h, 4.0 days, 1.65e+53 years; null is forever. */
  function readableSeconds(seconds) {
    if (seconds === null) return "forever";
    if (seconds < 1) return `${(seconds * 1000).toFixed(0)} ms`;
    if (seconds < 120) return `${seconds.toFixed(2)} s`;
    if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
    if (seconds < 2 * 86400) return `${(seconds / 3600).toFixed(1)} h`;
    if (seconds < YEAR_S) return `${(seconds / 86400).toFixed(1)} days`;
    return `${(seconds / YEAR_S).toPrecision(3)} years`;
  }

  /**
   * The delay chart draws the delay's logarithm: it grows past 1e60 s, more decades than a
   * log axis can label. Its y scale, axis steps and hover value, in exponents.
   */
  const delay = {
    scale: { range: (u, min, max) => [Math.floor(min ?? -1), Math.max(Math.ceil(max ?? 0), Math.floor(min ?? -1) + 1)] },
    values: tenToThe,
    incrs: [1, 2, 3, 5, 10, 20, 50, 100],
    value: (u, exponent) => (exponent === null || exponent === undefined ? "--" : readableSeconds(10 ** exponent)),
  };

  /** A delay in seconds as the delay chart plots it; 0 (no request yet) and forever (null) have no place there. */
  const delayExponent = (seconds) => (seconds !== null && seconds > 0 ? Math.log10(seconds) : null);

  /** The two axes of a chart over time: seconds since the run started, and `y` (its values and steps). */
  const timeAxes = (y = {}) => [
    { label: "seconds since the run started", grid: GRID },
    { size: 60, grid: GRID, ...(y.values === undefined ? {} : { values: y.values }), ...(y.incrs === undefined ? {} : { incrs: y.incrs }) },
  ];

  /** Small text on a chart, left-aligned (uPlot leaves the alignment of its axis labels set). */
  function label(ctx, text, x, y) {
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    ctx.fillStyle = "#555";
    ctx.fillText(text, x, y);
  }

  /** Time bands as shaded rectangles, each named at its top: [{ fromS, toS, fill, name }]. */
  function shadeBands(u, bands) {
    const { ctx } = u;
    const { left, top, width, height } = u.bbox;
    const clamp = (x) => Math.min(left + width, Math.max(left, x));
    ctx.save();
    for (const band of bands) {
      const from = clamp(u.valToPos(band.fromS, "x", true));
      const to = clamp(u.valToPos(band.toS, "x", true));
      if (to <= from) continue;
      ctx.fillStyle = band.fill;
      ctx.fillRect(from, top, to - from, height);
      label(ctx, band.name, from + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
    }
    ctx.restore();
  }

  /** The concurrency limit, dashed: above it the delay grows. */
  function drawLimit(u, limit) {
    const y = u.valToPos(limit, "y", true);
    const { ctx } = u;
    ctx.save();
    ctx.strokeStyle = "#888";
    ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    label(ctx, `limit ${limit}`, u.bbox.left + u.bbox.width - 60 * devicePixelRatio, y - 4 * devicePixelRatio);
    ctx.restore();
  }

  /** Aligned data whose time axis runs from 0 to `endS`: a point without values added at either end where needed. */
  function spanTime(data, endS) {
    if (data[0][0] > 0) data.forEach((values, index) => (data[index] = [index === 0 ? 0 : undefined, ...values]));
    if (data[0].at(-1) < endS) data.forEach((values, index) => (data[index] = [...values, index === 0 ? endS : undefined]));
    return data;
  }

  /** A server stopped by an outage reports nothing: its line breaks off (a null) between the reports around `stopS`. */
  function breakAt(t, values, stopS) {
    const after = t.findIndex((time) => time > stopS);
    if (after < 1) return [t, values];
    const gapAt = (t[after - 1] + t[after]) / 2;
    return [
      [...t.slice(0, after), gapAt, ...t.slice(after)],
      [...values.slice(0, after), null, ...values.slice(after)],
    ];
  }

  return {
    GRID,
    fromZero,
    powersOfTen,
    tenToThe,
    readableSeconds,
    delay,
    delayExponent,
    timeAxes,
    shadeBands,
    drawLimit,
    spanTime,
    breakAt,
  };
})();
