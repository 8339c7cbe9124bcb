// The report's interactive charts: every strategy overlaid on shared axes, drawn with uPlot
// (inlined in the page, so it works offline) and the shared chart parts of charts.js. Drag
// to zoom, double-click to zoom out; the legend under each chart shows the values under the
// cursor, in all three charts at once.
"use strict";
(() => {
  const { breakAt, delay, delayExponent, drawLimit, fromZero, powersOfTen, shadeBands, spanTime, timeAxes } = herdCharts;
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const endS = Math.max(...data.strategies.map((strategy) => strategy.phases.endS));
  // The trouble's times are the same for every strategy, give or take a few ms: one band per fault, named by kind.
  const first = data.strategies[0];
  const bands = first.bands ?? [{ fromS: first.phases.stopS, toS: first.phases.resumeS, name: "outage" }];
  const shadeOutage = (u) =>
    shadeBands(
      u,
      bands.map((band) => ({ ...band, fill: "rgba(214, 39, 40, 0.12)" })),
    );
  const serverSeries = (strategy, values) => breakAt(strategy.server.t, values, strategy.phases.stopS);

  const charts = [
    {
      id: "overlay-concurrency",
      pick: (s) => serverSeries(s, s.server.concurrency),
      y: { distr: 4, range: fromZero },
      axis: { values: powersOfTen },
      draw: (u) => drawLimit(u, data.limit),
    },
    {
      id: "overlay-delay",
      pick: (s) => serverSeries(s, s.server.delay.map(delayExponent)),
      y: delay.scale,
      axis: delay,
      value: delay.value,
    },
    { id: "overlay-goodput", pick: (s) => [s.client.t, s.client.ok], y: { range: (u, min, max) => [0, Math.max(1, max) * 1.05] } },
  ];

  const plots = {};
  for (const chart of charts) {
    const container = document.getElementById(chart.id);
    // Every chart spans the whole run, from 0.
    const aligned = spanTime(uPlot.join(data.strategies.map(chart.pick)), endS);
    plots[chart.id.replace("overlay-", "")] = new uPlot(
      {
        width: container.clientWidth || 900,
        height: 240,
        cursor: { sync: { key: "report" } },
        scales: { x: { time: false }, y: chart.y },
        axes: timeAxes(chart.axis),
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
  // A chain's arrivals at each tier (docs/tiers.md), one chart per strategy, one line per tier.
  const tierPlots = [];
  for (const container of document.querySelectorAll(".tier-arrivals")) {
    const strategy = data.strategies[Number(container.dataset.strategy)];
    const aligned = spanTime(uPlot.join(strategy.tiers.map((tier) => [tier.t, tier.arrivals])), endS);
    const plot = new uPlot(
      {
        width: container.clientWidth || 900,
        height: 240,
        scales: { x: { time: false }, y: { distr: 4, range: fromZero } },
        axes: timeAxes({ values: powersOfTen }),
        series: [
          { label: "t (s)" },
          ...strategy.tiers.map((tier, index) => ({
            label: tier.name,
            stroke: data.colours[index % data.colours.length],
            width: 1.5,
            points: { show: false },
          })),
        ],
        hooks: { drawClear: [shadeOutage] },
      },
      aligned,
      container,
    );
    tierPlots.push({ plot, container });
  }
  addEventListener("resize", () => {
    for (const chart of charts)
      plots[chart.id.replace("overlay-", "")].setSize({ width: document.getElementById(chart.id).clientWidth, height: 240 });
    for (const { plot, container } of tierPlots) plot.setSize({ width: container.clientWidth, height: 240 });
  });
  /** For tests and the curious. */
  window.reportCharts = plots;
  window.tierCharts = tierPlots.map(({ plot }) => plot);
})();
