/* bonnieboard comparison charts.
 *
 * Reads the JSON the /compare page embeds (<script type="application/json" id="compare-data">:
 * {"compare": the body of GET /api/compare, "view": names, titles and display units from app/charts.py,
 * the unit steps from app/units.py}) and draws one Chart.js bar chart per <canvas data-chart="KEY">:
 * one dataset per configuration (compare.configurations), whose bars are the API's means (absolute)
 * or its ratios to the baseline configuration as a % (relative), each with its 95 % CI drawn as an
 * error bar (a small drawing hook, bbErrorBars) and its verdict as a mark above it (bbVerdicts:
 * ▲ better, ▼ worse, ~ within noise, ? unknown). Only better and worse bars are green or red in
 * relative mode: noise is never coloured. Display units (MiB/s, ms) are applied only in tick and tooltip
 * text. A +++++ result (status too_fast) has no value, so no bar: it gets a hatched mark at the axis
 * instead, never a zero-height bar. Re-run after every htmx swap (htmx 4: htmx:after:swap).
 * No inline script, no eval: the page's CSP allows only this file, Chart.js and htmx.
 */
(function () {
  "use strict";

  const OK = "ok";
  const TOO_FAST = "too_fast";
  const MARK_PX = 26; // height of a +++++ mark
  const CAP_PX = 4; // half width of an error bar's caps
  const VERDICT_MARK = { better: "▲", worse: "▼", within_noise: "~", unknown: "?" };
  const LEGEND_MAX_RUNS = 10; // more runs: the list above the charts is the legend
  const NARROW_PX = 520;

  function cssVar(name, fallback) {
    const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }

  // The run colours live in app.css (--run-0 .. --run-9), shared with the swatches of the page.
  function runColor(index) {
    return cssVar("--run-" + (index % 10), "#4e79a7");
  }

  function hatch(color) {
    const size = 8;
    const tile = document.createElement("canvas");
    tile.width = tile.height = size;
    const ctx = tile.getContext("2d");
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(0, size);
    ctx.lineTo(size, 0);
    ctx.moveTo(-2, 2);
    ctx.lineTo(2, -2);
    ctx.moveTo(size - 2, size + 2);
    ctx.lineTo(size + 2, size - 2);
    ctx.stroke();
    return ctx.createPattern(tile, "repeat");
  }

  // ==== Numbers for people ====

  function fmtNumber(x) {
    const a = Math.abs(x);
    const digits = a >= 1000 ? 0 : a >= 10 ? 1 : 2;
    return x.toLocaleString("en-US", { maximumFractionDigits: digits });
  }

  // steps: [[factor, unit], ...] from app/charts.py; the largest factor not above the value.
  function withUnit(value, steps, unit) {
    if (!steps) return fmtNumber(value) + " " + unit;
    let chosen = steps[0];
    for (const step of steps) if (Math.abs(value) >= step[0]) chosen = step;
    return fmtNumber(value / chosen[0]) + " " + chosen[1];
  }

  function formatValue(value, chart, view, relative) {
    if (relative) return (value > 0 ? "+" : "") + value.toFixed(1) + " %";
    const shown = withUnit(value, view.steps, chart.unit);
    const exact = value.toLocaleString("en-US") + " " + chart.unit;
    return shown === exact ? shown : shown + " (" + exact + ")";
  }

  function tickLabel(value, view, relative, log) {
    if (relative) return (value > 0 ? "+" : "") + fmtNumber(value) + " %";
    if (log) {
      if (value <= 0) return "";
      const power = Math.pow(10, Math.floor(Math.log10(value) + 1e-9));
      return Math.abs(value / power - 1) < 1e-9 ? withUnit(value, view.steps, view.display_unit) : "";
    }
    return fmtNumber(value / view.divisor);
  }

  // A round step for about `count` ticks over `range` (1, 2, 2.5 or 5 times a power of ten).
  function niceStep(range, count) {
    const raw = range / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / power;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * power;
  }

  // Ticks at round numbers of the display unit (1 MiB/s steps, not 1000 KiB/s ones); the data
  // stays in the stored unit, so the ticks are placed at display value * divisor.
  function displayUnitTicks(divisor) {
    return function (scale) {
      if (divisor === 1 || !isFinite(scale.min) || !isFinite(scale.max)) return;
      const low = Math.min(0, scale.min) / divisor;
      const high = Math.max(0, scale.max) / divisor;
      const step = niceStep(high - low || 1, 6);
      const start = Math.floor(low / step) * step;
      const end = Math.ceil(high / step) * step;
      const ticks = [];
      for (let i = 0; start + i * step <= end + step / 1e6; i++) {
        ticks.push({ value: Math.round((start + i * step) / step) * step * divisor });
      }
      scale.ticks = ticks;
      scale.min = start * divisor;
      scale.max = end * divisor;
    };
  }

  // ==== Chart.js additions (registered once) ====

  // Every run's bar of the test under the pointer, missing ones included, so that the tooltip
  // can say why a bar is missing ("+++++ too fast to measure", "not run", ...).
  function categoryMode(chart, e) {
    const pos = Chart.helpers.getRelativePosition(e, chart);
    const area = chart.chartArea;
    if (!area || pos.x < area.left || pos.x > area.right || pos.y < area.top || pos.y > area.bottom) return [];
    const index = chart.scales.x.getValueForPixel(pos.x);
    const items = [];
    chart.data.datasets.forEach(function (dataset, datasetIndex) {
      const meta = chart.getDatasetMeta(datasetIndex);
      if (chart.isDatasetVisible(datasetIndex) && meta.data[index]) {
        items.push({ element: meta.data[index], datasetIndex: datasetIndex, index: index });
      }
    });
    return items;
  }

  function atPointer(items, eventPosition) {
    return eventPosition ? { x: eventPosition.x, y: eventPosition.y } : false;
  }

  // Draws a hatched, outlined mark at the axis for each +++++ result and records where
  // (chart.$bbMarks) so that a test can find it.
  const tooFastMarks = {
    id: "bbTooFast",
    afterDatasetsDraw(chart) {
      const yScale = chart.scales.y;
      const area = chart.chartArea;
      const log = yScale.type === "logarithmic";
      const relative = chart.$bb && chart.$bb.relative;
      let base = log ? area.bottom : yScale.getPixelForValue(0);
      base = Math.min(Math.max(base, area.top + MARK_PX), area.bottom);
      const ctx = chart.ctx;
      const marks = [];
      chart.data.datasets.forEach(function (dataset, datasetIndex) {
        if (!chart.isDatasetVisible(datasetIndex)) return;
        const meta = chart.getDatasetMeta(datasetIndex);
        dataset.bbStatus.forEach(function (status, index) {
          if (status !== TOO_FAST || dataset.data[index] !== null) return;
          const el = meta.data[index];
          if (!el || !isFinite(el.x) || !isFinite(el.width)) return;
          const w = Math.max(el.width, 3);
          const x = el.x - w / 2;
          const top = relative ? base - MARK_PX / 2 : base - MARK_PX;
          ctx.save();
          ctx.fillStyle = dataset.bbHatch;
          ctx.fillRect(x, top, w, MARK_PX);
          ctx.strokeStyle = dataset.bbColor;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 0.75, top + 0.75, w - 1.5, MARK_PX - 1.5);
          if (w >= 10) {
            ctx.translate(el.x, top + MARK_PX / 2);
            ctx.rotate(-Math.PI / 2);
            ctx.fillStyle = "#1d232a";
            ctx.font = "bold 9px system-ui, sans-serif";
            ctx.textAlign = "center";
            ctx.textBaseline = "middle";
            ctx.fillText("+++++", 0, 0);
          }
          ctx.restore();
          marks.push({ datasetIndex: datasetIndex, index: index, run: dataset.bbRun, test: chart.data.labels[index],
                       x: x, y: top, width: w, height: MARK_PX });
        });
      });
      chart.$bbMarks = marks;
    },
  };

  // Draws each bar's 95 % CI as a vertical line with caps, and its verdict mark above it; records
  // both (chart.$bbErrorBars, chart.$bbVerdictMarks) so that a test can read what was drawn.
  const errorBars = {
    id: "bbErrorBars",
    // options (plugins.bbErrorBars): relative, better and worse colours; set before the first draw.
    afterDatasetsDraw(chart, args, options) {
      const yScale = chart.scales.y;
      const area = chart.chartArea;
      const relative = options.relative;
      const ctx = chart.ctx;
      const bars = [];
      const marks = [];
      const clamp = function (y) { return Math.min(Math.max(y, area.top), area.bottom); };
      chart.data.datasets.forEach(function (dataset, datasetIndex) {
        if (!chart.isDatasetVisible(datasetIndex) || !dataset.bbErrors) return;
        const meta = chart.getDatasetMeta(datasetIndex);
        dataset.data.forEach(function (value, index) {
          const el = meta.data[index];
          if (value === null || !el || !isFinite(el.x)) return;
          let top = yScale.getPixelForValue(value);
          const error = dataset.bbErrors[index];
          if (error) {
            const yLow = clamp(yScale.getPixelForValue(error[0] > 0 || yScale.type !== "logarithmic" ? error[0] : yScale.min));
            const yHigh = clamp(yScale.getPixelForValue(error[1]));
            ctx.save();
            ctx.strokeStyle = "#1d232a";
            ctx.lineWidth = 1.25;
            ctx.beginPath();
            ctx.moveTo(el.x, yLow);
            ctx.lineTo(el.x, yHigh);
            const cap = Math.min(CAP_PX, Math.max(el.width / 2 - 1, 1));
            ctx.moveTo(el.x - cap, yLow);
            ctx.lineTo(el.x + cap, yLow);
            ctx.moveTo(el.x - cap, yHigh);
            ctx.lineTo(el.x + cap, yHigh);
            ctx.stroke();
            ctx.restore();
            bars.push({ datasetIndex: datasetIndex, index: index, low: error[0], high: error[1], x: el.x, yLow: yLow, yHigh: yHigh });
            top = Math.min(top, yHigh, yLow);
          }
          const verdict = dataset.bbVerdicts[index];
          if (!verdict || (!relative && verdict === "unknown")) return;
          const text = VERDICT_MARK[verdict];
          const below = relative && value < 0;
          const y = below ? Math.max(yScale.getPixelForValue(value), error ? Math.max(yScale.getPixelForValue(error[0]), yScale.getPixelForValue(error[1])) : 0) + 10
                          : top - 8;
          ctx.save();
          ctx.font = "bold 12px system-ui, sans-serif";
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          ctx.fillStyle = verdict === "better" ? options.better : verdict === "worse" ? options.worse : "#1d232a";
          ctx.fillText(text, el.x, clamp(y));
          ctx.restore();
          marks.push({ datasetIndex: datasetIndex, index: index, verdict: verdict, text: text, x: el.x, y: clamp(y) });
        });
      });
      chart.$bbErrorBars = bars;
      chart.$bbVerdictMarks = marks;
    },
  };

  // The y axis also spans the error bars, not only the bars.
  function includeErrors(scale) {
    scale.chart.data.datasets.forEach(function (dataset, datasetIndex) {
      if (!dataset.bbErrors || !scale.chart.isDatasetVisible(datasetIndex)) return;
      dataset.bbErrors.forEach(function (error) {
        if (!error) return;
        if (error[1] > scale.max) scale.max = error[1];
        if (scale.type !== "logarithmic" && error[0] < scale.min) scale.min = error[0];
        if (scale.type === "logarithmic" && error[0] > 0 && error[0] < scale.min) scale.min = error[0];
      });
    });
  }

  let registered = false;
  function registerOnce() {
    if (registered) return;
    Chart.Interaction.modes.bbCategory = categoryMode;
    Chart.Tooltip.positioners.bbPointer = atPointer;
    Chart.register(tooFastMarks, errorBars);
    registered = true;
  }

  // ==== One chart ====

  function buildChart(canvas, payload) {
    const compare = payload.compare;
    const view = payload.view;
    const key = canvas.dataset.chart;
    const chartIndex = compare.charts.findIndex(function (c) { return c.key === key; });
    if (chartIndex < 0) return null;
    const chart = compare.charts[chartIndex];
    const chartView = view.charts[chartIndex];
    const relative = compare.mode === "relative";
    const log = chartView.scale === "logarithmic";
    const better = cssVar("--better", "#2f9e5b");
    const worse = cssVar("--worse", "#d64545");
    const neutral = cssVar("--muted", "#5b6670");
    const configIds = compare.configurations.map(function (c) { return c.id; });
    const runsOf = {};
    compare.configurations.forEach(function (c) { runsOf[c.id] = c.runs.length; });
    const repeated = compare.configurations.some(function (c) { return c.runs.length > 1; });
    const baseId = compare.baseline_configuration;
    const baseCells = chart.configurations.find(function (e) { return e.configuration === baseId; }).tests;
    const shown = chart.configurations.filter(function (e) { return !(relative && e.configuration === baseId); });
    const percent = function (ratio) { return Math.round((ratio - 1) * 1000) / 10 + 0; };

    const datasets = shown.map(function (entry) {
      const color = runColor(configIds.indexOf(entry.configuration));
      const isBase = entry.configuration === baseId;
      const data = [], errors = [], verdicts = [], statuses = [], ns = [];
      entry.tests.forEach(function (cell, i) {
        let status = cell.status;
        if (relative && status === OK) {
          const base = baseCells[i];
          if (base.status !== OK) status = "baseline_" + base.status;
          else if (cell.ratio === null) status = "baseline_zero";
        }
        statuses.push(status);
        ns.push(cell.n);
        verdicts.push(isBase ? null : cell.verdict);
        if (status !== OK) {
          data.push(null);
          errors.push(null);
        } else if (relative) {
          data.push(percent(cell.ratio));
          errors.push(cell.ratio_ci95 ? [percent(cell.ratio_ci95[0]), percent(cell.ratio_ci95[1])] : null);
        } else {
          data.push(cell.mean);
          errors.push(cell.ci95);
        }
      });
      const fill = relative
        ? verdicts.map(function (v) { return v === "better" ? better : v === "worse" ? worse : neutral; })
        : color;
      const name = view.configuration_names[String(entry.configuration)];
      return {
        label: repeated ? name + " (N=" + runsOf[entry.configuration] + ")" : name,
        data: data,
        backgroundColor: fill,
        borderColor: color,
        borderWidth: relative ? 2 : 0,
        bbConfiguration: entry.configuration,
        bbRun: entry.configuration,
        bbStatus: statuses,
        bbErrors: errors,
        bbVerdicts: verdicts,
        bbN: ns,
        bbColor: color,
        bbHatch: hatch(color),
      };
    });
    const hasTooFast = datasets.some(function (d) { return d.bbStatus.indexOf(TOO_FAST) >= 0; });
    const hasValues = datasets.some(function (d) { return d.data.some(function (v) { return v !== null; }); });

    const legendLabels = function (c) {
      const items = [];
      // On a narrow screen the list of runs above the charts (same colours) is the legend.
      if (c.data.datasets.length <= LEGEND_MAX_RUNS && c.width >= NARROW_PX) {
        c.data.datasets.forEach(function (dataset, i) {
          items.push({ text: dataset.label, fillStyle: dataset.bbColor, strokeStyle: dataset.bbColor, lineWidth: 0,
                       hidden: !c.isDatasetVisible(i), datasetIndex: i });
        });
      }
      if (hasTooFast) {
        items.push({ text: view.status_text[TOO_FAST], fillStyle: hatch("#555"), strokeStyle: "#555", lineWidth: 1,
                     hidden: false, bbMark: true });
      }
      return items;
    };

    const config = {
      type: "bar",
      data: { labels: chart.tests.slice(), datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "bbCategory", intersect: false },
        scales: {
          x: {
            ticks: {
              autoSkip: false,
              // Narrow charts (phones) show bonnie++'s names alone; wider ones add what the test does.
              callback: function (value, index) {
                const narrow = this.chart.width / chart.tests.length < 90;
                return narrow ? chart.tests[index] : [chart.tests[index], chartView.test_titles[index]];
              },
            },
            grid: { display: false },
          },
          y: {
            type: chartView.scale,
            beginAtZero: !log,
            title: { display: true, text: chartView.axis_title },
            // Without a single value the axis has nothing to measure: no numbers on it.
            ticks: { display: hasValues, callback: function (value) { return tickLabel(value, chartView, relative, log); } },
            afterDataLimits: includeErrors,
            afterBuildTicks: log ? undefined : displayUnitTicks(chartView.divisor),
            grid: {
              color: function (c) { return relative && c.tick && c.tick.value === 0 ? "#1d232a" : "rgba(0,0,0,0.08)"; },
              lineWidth: function (c) { return relative && c.tick && c.tick.value === 0 ? 2 : 1; },
            },
          },
        },
        plugins: {
          bbErrorBars: { relative: relative, better: better, worse: worse },
          legend: {
            display: function (ctx) { return hasTooFast || (datasets.length <= LEGEND_MAX_RUNS && ctx.chart.width >= NARROW_PX); },
            position: "bottom",
            labels: { generateLabels: legendLabels, boxWidth: 14 },
            onClick: function (e, item, legend) {
              if (item.bbMark) return;
              Chart.defaults.plugins.legend.onClick.call(this, e, item, legend);
            },
          },
          tooltip: {
            position: "bbPointer",
            callbacks: {
              title: function (items) {
                if (!items.length) return "";
                const i = items[0].dataIndex;
                return chart.tests[i] === chartView.test_titles[i] ? chart.tests[i] : chart.tests[i] + " (" + chartView.test_titles[i] + ")";
              },
              label: function (item) {
                const i = item.dataIndex;
                const status = item.dataset.bbStatus[i];
                if (status !== OK || item.raw === null) return item.dataset.label + ": " + (view.status_text[status] || status);
                const error = item.dataset.bbErrors[i];
                const verdict = item.dataset.bbVerdicts[i];
                let text = item.dataset.label + ": " + formatValue(item.raw, chart, chartView, relative);
                const extra = ["N=" + item.dataset.bbN[i]];
                if (error) extra.push("95 % CI " + formatValue(error[0], chart, chartView, relative) + " to " + formatValue(error[1], chart, chartView, relative));
                if (verdict) extra.push(VERDICT_MARK[verdict] + " " + view.verdict_text[verdict]);
                return [text, "  " + extra.join(", ")];
              },
              footer: function (items) {
                if (!items.length) return "";
                const i = items[0].dataIndex;
                const fast = items.some(function (item) { return item.dataset.bbStatus[i] === TOO_FAST; });
                return fast ? [view.too_fast_explanation, "For " + chart.tests[i] + ", " + chartView.hints[i] + " would measure it."] : "";
              },
            },
          },
        },
      },
    };
    const instance = new Chart(canvas, config);
    instance.$bb = { relative: relative, key: key };
    return instance;
  }

  // ==== Life cycle ====

  const built = new Set();

  function initCharts() {
    for (const chart of built) {
      if (!chart.canvas || !chart.canvas.isConnected) {
        chart.destroy();
        built.delete(chart);
      }
    }
    const dataElement = document.getElementById("compare-data");
    if (!dataElement || typeof Chart === "undefined") return;
    registerOnce();
    const payload = JSON.parse(dataElement.textContent);
    document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      if (Chart.getChart(canvas)) return;
      const chart = buildChart(canvas, payload);
      if (chart) built.add(chart);
    });
  }

  document.addEventListener("htmx:after:swap", initCharts);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initCharts);
  else initCharts();
})();
