/* bonnieboard history charts.
 *
 * Reads the JSON /history embeds (<script type="application/json" id="history-data">, app/history/view.py's
 * page_data: per configuration its runs' ids and times, per test and configuration the values by run position
 * (`at`, null when every run has one), the
 * stable stretches [first, last, level, band low, band high], the changes [point, ratio, id, explained] and the
 * +++++ points)
 * and draws one Chart.js chart per <canvas data-test="TEST">: time across, the figure on a log axis. Each run is a
 * point (a click opens it); a +++++ run is a ▲ at the rate it is above, never zero; each stretch is a step at its
 * level inside its 95 % band; a change is a ◆ at its first run (a step the runner's evidence explains, the machine's
 * load or the page cache, a hollow ◇); a setup change is a dashed line across the chart.
 * No inline script, no eval: the page's CSP allows only this file, Chart.js and htmx.
 */
(function () {
  "use strict";

  // The same eight as app.css's .swatch-N: a configuration keeps its colour on every chart and in the legend.
  const PALETTE = ["#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#475569"];
  const PHONE = window.matchMedia("(max-width: 700px)");
  const DAY_S = 86400;

  function colour(config, alpha) {
    const hex = PALETTE[config % PALETTE.length];
    if (alpha === undefined) return hex;
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  function dateText(seconds, withTime) {
    const iso = new Date(seconds * 1000).toISOString();
    return withTime ? iso.slice(0, 16).replace("T", " ") : iso.slice(0, 10);
  }

  function formatValue(value) {
    if (value >= 100) return Math.round(value).toLocaleString("en");
    return value.toPrecision(3);
  }

  function seriesDatasets(series, config) {
    const times = config.t;
    const position = function (pointIndex) { return series.at === null ? pointIndex : series.at[pointIndex]; };
    const time = function (pointIndex) { return times[position(pointIndex)]; };
    const band = [];
    const level = [];
    for (const step of series.steps) {
      const from = time(step[0]);
      const to = time(step[1]);
      if (step[2] !== null) {
        level.push({ x: from, y: step[2] }, { x: to, y: step[2] }, { x: to, y: null });
      }
      if (step[3] !== null) {
        band.push({ x: from, y: step[3], hi: step[4] }, { x: to, y: step[3], hi: step[4] }, { x: to, y: null, hi: null });
      }
    }
    const above = new Set(series.above);
    const changed = new Map(series.changes.map(function (c) { return [c[0], c]; }));
    const points = series.v.map(function (value, i) {
      return { x: time(i), y: value, run: config.runs[position(i)], above: above.has(i), change: changed.get(i) };
    });
    const c = series.config;
    return [
      {
        label: "band", data: band.map(function (p) { return { x: p.x, y: p.y }; }), borderWidth: 0,
        pointRadius: 0, fill: false, spanGaps: false, order: 3,
      },
      {
        label: "band-hi", data: band.map(function (p) { return { x: p.x, y: p.hi }; }), borderWidth: 0,
        pointRadius: 0, fill: "-1", backgroundColor: colour(c, 0.14), spanGaps: false, order: 3,
      },
      {
        label: "level", data: level, borderColor: colour(c), borderWidth: 2, pointRadius: 0,
        spanGaps: false, order: 2,
      },
      {
        label: "runs", data: points, showLine: false, order: 1,
        borderColor: colour(c), backgroundColor: colour(c, 0.55),
        pointStyle: points.map(function (p) { return p.change ? "rectRot" : p.above ? "triangle" : "circle"; }),
        pointRadius: points.map(function (p) { return p.change ? 7 : p.above ? 5 : 3; }),
        pointBorderWidth: points.map(function (p) { return p.change ? 2 : 1; }),
        pointBorderColor: points.map(function (p) { return p.change && !p.change[3] ? "#111" : colour(c); }),
        pointBackgroundColor: points.map(function (p) {
          return p.change && p.change[3] ? "#fff" : colour(c, 0.55);
        }),
      },
    ];
  }

  const setupLines = {
    id: "bbSetupLines",
    afterDatasetsDraw: function (chart, _args, options) {
      const area = chart.chartArea;
      const ctx = chart.ctx;
      const x = chart.scales.x;
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = "#555";
      ctx.fillStyle = "#333";
      ctx.font = "11px system-ui, sans-serif";
      for (const mark of options.marks || []) {
        const px = x.getPixelForValue(mark.t);
        if (px < area.left || px > area.right) continue;
        ctx.beginPath();
        ctx.moveTo(px, area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
        ctx.fillText("setup", Math.min(px + 3, area.right - 30), area.top + 10);
      }
      ctx.restore();
    },
  };

  function tooltipLines(item, unit) {
    const p = item.raw;
    if (!p || p.run === undefined) return null;
    const lines = ["run " + p.run + ", " + dateText(p.x, true)];
    lines.push(p.above ? "+++++ too fast: above " + formatValue(p.y) + " " + unit : formatValue(p.y) + " " + unit);
    if (p.change) {
      lines.push((p.change[3] ? "step the runner's evidence explains: ×" : "change here: ×") + p.change[1].toFixed(2));
    }
    return lines;
  }

  function draw(canvas, data) {
    const test = canvas.dataset.test;
    const unit = data.units[test];
    const datasets = [];
    for (const series of data.charts[test] || []) {
      datasets.push.apply(datasets, seriesDatasets(series, data.configs[series.config]));
    }
    const marks = [];
    for (const config of data.configs) {
      for (const s of config.setup) marks.push({ t: Date.parse(s.time) / 1000, text: s.changes.join("; ") });
    }
    const first = Math.min.apply(null, data.configs.map(function (c) { return c.t[0]; }));
    const last = Math.max.apply(null, data.configs.map(function (c) { return c.t[c.t.length - 1]; }));
    const span = last - first;
    const pad = Math.max(span * 0.02, 60);
    return new Chart(canvas, {
      type: "line",
      data: { datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: true,
        normalized: true,
        interaction: { mode: "nearest", intersect: true },
        onClick: function (_event, elements, chart) {
          for (const element of elements) {
            const raw = chart.data.datasets[element.datasetIndex].data[element.index];
            if (raw && raw.run !== undefined) {
              window.location.assign(canvas.closest("[data-run-url]").dataset.runUrl.replace("RUN", raw.run));
              return;
            }
          }
        },
        scales: {
          x: {
            type: "linear",
            min: first - pad,
            max: last + pad,
            ticks: {
              maxTicksLimit: PHONE.matches ? 4 : 8,
              callback: function (value) { return dateText(value, span < 2 * DAY_S); },
            },
          },
          y: {
            type: "logarithmic",
            ticks: {
              maxTicksLimit: 6,
              callback: function (value) { return formatValue(value); },
            },
          },
        },
        plugins: {
          legend: { display: false },
          bbSetupLines: { marks: marks },
          tooltip: {
            filter: function (item) { return item.dataset.label === "runs"; },
            callbacks: {
              title: function () { return ""; },
              label: function (item) { return tooltipLines(item, unit); },
            },
          },
        },
      },
      plugins: [setupLines],
    });
  }

  function init() {
    const source = document.getElementById("history-data");
    if (!source || typeof Chart === "undefined") return;
    const data = JSON.parse(source.textContent);
    for (const canvas of document.querySelectorAll("canvas[data-test]")) draw(canvas, data);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
