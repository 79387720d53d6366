/* bonnieboard comparison charts.
 *
 * Reads the JSON the /compare page embeds (<script type="application/json" id="compare-data">:
 * {"compare": the body of GET /api/compare, "view": names, titles, display units and each chart's bars
 * from app/compare/engine.py, the unit steps from app/units.py}) and draws one Chart.js bar chart per
 * <canvas data-chart="KEY">. It only draws: each bar's value, error bar, status (why it is missing),
 * verdict and colour come worked out by the view (charts.chart_bars), and so do the words and marks.
 * One dataset per configuration, always in that configuration's colour (and, past 12 configurations,
 * a pattern), whose bars are the API's means (absolute) or their difference from the baseline
 * configuration (relative): a % for rates, a ratio on a log axis (×0.5 … ×2 … ×100) for latency,
 * percentage points for %CPU. Each bar has its 95 % CI as an error bar (bbErrorBars) and
 * its verdict as a mark (▲ better, ▼ worse, ~ within noise, ? unknown); better/worse is said by the
 * sign, that mark and the verdict, never by repainting the bar (noise and unknown bars are paler).
 * A value beyond the axis (an outlier) is clipped with a labelled "off scale" marker (bbOffScale).
 * A +++++ result (status too_fast) has no value, so no bar: a rate chart marks it at the top ("faster
 * than measurable"), its absolute axis reaching past the rate every +++++ run is above, and marks a cell of
 * which only some runs were +++++ there too, above its measured runs' bar; the %CPU chart draws an empty
 * labelled slot (bbTooFast). Relative, a difference a +++++ bound decided is drawn as that bound ("≥ +150 %",
 * "≤ -93 %"); a +++++ result no bound decided has no bar there (it is no "far better"). Absolute charts draw the
 * baseline configuration's mean as a dashed reference line per test (bbReference); values are printed
 * on the bars where they fit (bbValueLabels). Display units (MiB/s, ms) are applied only in text.
 * Past 12 configurations the charts share one HTML legend above them (buildSharedLegend).
 * Re-run after every htmx swap (htmx 4: htmx:after:swap).
 * No inline script, no eval: the page's CSP allows only this file, Chart.js and htmx.
 */
(function () {
  "use strict";

  const OK = "ok";
  const TOO_FAST = "too_fast";
  const MARK_PX = 22; // height of a +++++ mark at the top of a chart
  const TOO_FAST_HEADROOM = 1.2; // an absolute axis's top over the highest +++++ floor: room for the mark above it
  const ABSOLUTE_HEADROOM = 1.08; // an absolute axis's top over its highest bar: room for the verdict mark above it
  const CAP_PX = 4; // half width of an error bar's caps
  const NARROW_PX = 520;
  const PHONE = window.matchMedia("(max-width: 700px)"); // app.css's phone layout
  const LOG_RATIO_LIMIT = 100; // relative latency axis: ×0.01 .. ×100 at most
  const INK = "#1d232a";
  // Past 12 configurations (where the colours start to repeat banded) the charts share one HTML legend above them
  // instead of each drawing its own: a 50-row legend per chart made each phone chart 2.5 times as tall, and laying
  // out and painting seven of them took a phone longer than everything else on the page.
  const OWN_LEGEND_MAX = 12;
  // A phone's 2.75 or 3 device pixels per CSS pixel make a 50-run chart (its legend a row per run on a phone) a
  // canvas of over 3 megapixels to fill and composite; at 2 it is as sharp to the eye with half the pixels.
  const PIXEL_RATIO = Math.min(window.devicePixelRatio || 1, 2);

  // Colours, fills and number formats are made once per page, not once per bar: a 50-run page draws 300 datasets,
  // and each getComputedStyle, pattern canvas or toLocaleString (a new Intl.NumberFormat) costs a phone milliseconds.
  // initCharts() empties the style caches, as a swap may bring other colours.
  const styleCache = new Map();

  function cached(key, make) {
    if (!styleCache.has(key)) styleCache.set(key, make());
    return styleCache.get(key);
  }

  function cssVar(name, fallback) {
    return cached("var " + name, function () {
      const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
      return value || fallback;
    });
  }

  // The configuration colours live in app.css, shared with the swatches of the page; the view says which
  // (colour: --run-N, pattern: 0 solid, 1 banded, 2 dotted).
  function runColor(colour) {
    return cssVar("--run-" + colour, "#4e79a7");
  }

  function withAlpha(color, alpha) {
    const m = /^#([0-9a-f]{6})$/i.exec(color);
    if (!m || alpha === 1) return color;
    const n = parseInt(m[1], 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  // pattern 0: solid colour; 1: white horizontal bands over it; 2: white dots over it.
  function runFill(look, alpha) {
    if (look.pattern === 0) return withAlpha(runColor(look.colour), alpha);
    return cached("fill " + look.colour + " " + look.pattern + " " + alpha, function () { return patternFill(look, alpha); });
  }

  function patternFill(look, alpha) {
    const color = withAlpha(runColor(look.colour), alpha);
    const kind = look.pattern;
    if (kind === 0) return color;
    const size = 8;
    const tile = document.createElement("canvas");
    tile.width = tile.height = size;
    const ctx = tile.getContext("2d");
    ctx.fillStyle = color;
    ctx.fillRect(0, 0, size, size);
    ctx.fillStyle = ctx.strokeStyle = "rgba(255,255,255,0.85)";
    if (kind === 1) {
      // horizontal bands: the diagonal hatch is the +++++ mark's, never a configuration's
      ctx.fillRect(0, 3, size, 2);
    } else {
      ctx.beginPath();
      ctx.arc(size / 2, size / 2, 1.6, 0, 2 * Math.PI);
      ctx.fill();
    }
    return ctx.createPattern(tile, "repeat");
  }

  function hatch(color) {
    return cached("hatch " + color, function () { return hatchPattern(color); });
  }

  function hatchPattern(color) {
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

  // en-US with at most `digits` fraction digits (null: toLocaleString's default of 3), one formatter per kind.
  // A 50-configuration page prints a number per bar (2,700): Intl's format costs a throttled phone 100 ms of that,
  // so the usual case (no exponent) is done by hand, rounding the shortest decimal half away from zero as Intl does.
  const numberFormats = new Map();

  function localeNumber(x, digits) {
    const places = digits === null ? 3 : digits;
    const text = String(Math.abs(x));
    if (text.indexOf("e") < 0 && isFinite(x)) {
      const scaled = String(Math.round(Number(text + "e" + places)));
      if (scaled.indexOf("e") < 0) {
        const padded = scaled.padStart(places + 1, "0");
        const whole = padded.slice(0, padded.length - places).replace(/\B(?=(\d{3})+$)/g, ",");
        const fraction = padded.slice(padded.length - places).replace(/0+$/, "");
        const sign = x < 0 || Object.is(x, -0) ? "-" : "";
        return sign + whole + (fraction ? "." + fraction : "");
      }
    }
    let format = numberFormats.get(digits);
    if (!format) {
      format = new Intl.NumberFormat("en-US", digits === null ? {} : { maximumFractionDigits: digits });
      numberFormats.set(digits, format);
    }
    return format.format(x);
  }

  function fmtNumber(x) {
    const a = Math.abs(x);
    const digits = a >= 1000 ? 0 : a >= 10 ? 1 : 2;
    return localeNumber(x, digits);
  }

  function signed(x, digits) {
    return (x > 0 ? "+" : x < 0 ? "−" : "") + localeNumber(Math.abs(x), digits);
  }

  function fmtRatio(r) {
    return "×" + localeNumber(r, r >= 10 ? 0 : r >= 1 ? 2 : 3);
  }

  // steps: [[factor, unit], ...] from app/compare/engine.py; the largest factor not above the value.
  function withUnit(value, steps, unit) {
    if (!steps) return fmtNumber(value) + " " + unit;
    let chosen = steps[0];
    for (const step of steps) if (Math.abs(value) >= step[0]) chosen = step;
    return fmtNumber(value / chosen[0]) + " " + chosen[1];
  }

  // kind: null (absolute), "percent" (rates), "ratio" (latency) or "points" (%CPU): see app/compare/engine.py.
  function formatValue(value, chart, view, kind) {
    if (kind === "percent") return signed(value, 1) + " %";
    if (kind === "ratio") return fmtRatio(value);
    if (kind === "points") return signed(value, 1) + " points of %CPU";
    const shown = withUnit(value, view.steps, chart.unit);
    const exact = localeNumber(value, null) + " " + chart.unit;
    return shown === exact ? shown : shown + " (" + exact + ")";
  }

  // What is printed on a bar: short.
  // A relative bar that is a +++++ bound (the difference is at least that large): "≥ " above the baseline,
  // "≤ " below it.
  function boundPrefix(dataset, index, value) {
    if (!dataset.bbBounds || !dataset.bbBounds[index]) return "";
    return value >= 0 ? "≥ " : "≤ ";
  }

  function shortValue(value, view, kind) {
    const a = Math.abs(value);
    if (kind === "percent") return signed(value, a < 10 ? 1 : 0) + "%";
    if (kind === "ratio") return fmtRatio(value);
    if (kind === "points") return signed(value, a < 10 ? 1 : 0);
    if (view.scale === "logarithmic") return withUnit(value, view.steps, view.display_unit);
    const shown = value / view.divisor;
    return localeNumber(Math.abs(shown), Math.abs(shown) >= 100 ? 0 : 1);
  }

  function tickLabel(value, view, kind) {
    if (kind === "percent") return signed(value, 1) + " %";
    if (kind === "points") return signed(value, 1);
    if (kind === "ratio") return fmtRatio(value);
    if (view.scale === "logarithmic") return value > 0 ? withUnit(value, view.steps, view.display_unit) : "";
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

  const RATIO_TICKS = [0.01, 0.1, 0.5, 1, 2, 10, 100]; // ×0.5 … ×2 … ×100

  // A log axis's ticks, each labelled: the powers of ten, and 2 and 5 times them on an axis of under two decades
  // (one labelled tick across a decade and a half says little).
  function logTicks(scale) {
    const low = scale.min, high = scale.max;
    if (!(low > 0) || !(high > low)) return;
    const steps = Math.log10(high / low) < 2 ? [1, 2, 5] : [1];
    const ticks = [];
    for (let p = Math.floor(Math.log10(low)); p <= Math.ceil(Math.log10(high)); p++) {
      steps.forEach(function (m) {
        const value = m * Math.pow(10, p);
        if (value >= low * 0.999 && value <= high * 1.001) ticks.push({ value: value, major: m === 1 });
      });
    }
    if (ticks.length) scale.ticks = ticks;
  }

  function ratioTicks(scale) {
    scale.ticks = RATIO_TICKS.filter(function (t) { return t >= scale.min * 0.999 && t <= scale.max * 1.001; })
      .map(function (t) { return { value: t, major: t === 1 }; });
  }

  function median(values) {
    const sorted = values.slice().sort(function (a, b) { return a - b; });
    const n = sorted.length;
    return n ? (n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2) : 0;
  }

  // The relative axes survive outliers: a value far beyond the others (4 times their median size)
  // is clipped at the axis's end and labelled there instead of flattening every other bar.
  // Returns [low, high] limits (null: none) for the kind's values.
  function relativeLimits(kind, values) {
    if (kind === "ratio") return [1 / LOG_RATIO_LIMIT, LOG_RATIO_LIMIT];
    const sizes = values.map(Math.abs);
    if (kind === "percent") {
      const cap = Math.max(100, 4 * median(sizes));
      return [-100, cap];
    }
    if (kind === "points") {
      const cap = Math.max(20, 4 * median(sizes));
      return [-cap, cap];
    }
    return [null, null];
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

  function eachBar(chart, fn) {
    chart.data.datasets.forEach(function (dataset, datasetIndex) {
      if (!chart.isDatasetVisible(datasetIndex)) return;
      const meta = chart.getDatasetMeta(datasetIndex);
      dataset.data.forEach(function (value, index) {
        const el = meta.data[index];
        if (el && isFinite(el.x) && isFinite(el.width)) fn(dataset, datasetIndex, value, index, el);
      });
    });
  }

  function textWithHalo(ctx, text, x, y) {
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255,255,255,0.9)";
    ctx.lineJoin = "round";
    ctx.strokeText(text, x, y);
    ctx.fillStyle = INK;
    ctx.fillText(text, x, y);
  }

  // +++++ has no value, so no bar from zero. A rate chart marks it at the top, off the scale (it was
  // faster than measurable); the %CPU chart, where up means worse, as an empty labelled slot, with the
  // view's words for it where they fit. The marks are recorded (chart.$bbMarks) so that a test can find them.
  const tooFastMarks = {
    id: "bbTooFast",
    afterDatasetsDraw(chart) {
      if (!chart.$bb) return;
      const area = chart.chartArea;
      const slot = chart.$bb.measure === "cpu";
      const zero = chart.scales.y.type === "logarithmic" ? area.bottom : Math.min(Math.max(chart.scales.y.getPixelForValue(chart.$bb.origin), area.top), area.bottom);
      const ctx = chart.ctx;
      const marks = [];
      const words = chart.$bb.words;
      eachBar(chart, function (dataset, datasetIndex, value, index, el) {
        // A cell of which only some runs were +++++ has its bar (the measured runs' mean) and, on a rate chart,
        // the mark: the rest of its runs were faster than measurable.
        const some = !slot && value !== null && dataset.bbTooFastAbove && dataset.bbTooFastAbove[index];
        if (!some && (dataset.bbStatus[index] !== TOO_FAST || value !== null)) return;
        const w = Math.max(el.width, 4);
        const x = el.x - w / 2;
        ctx.save();
        if (slot) {
          const top = area.top + 2;
          const height = Math.max(zero - top, MARK_PX);
          ctx.setLineDash([3, 3]);
          ctx.strokeStyle = dataset.bbColor;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 0.75, top, w - 1.5, height);
          ctx.setLineDash([]);
          if (w >= 9) {
            ctx.translate(el.x, top + height / 2);
            ctx.rotate(-Math.PI / 2);
            ctx.font = "bold 9px system-ui, sans-serif";
            ctx.textAlign = "center";
            ctx.textBaseline = "middle";
            textWithHalo(ctx, ctx.measureText(words.status).width + 8 <= height ? words.status : words.marks.wide, 0, 0);
          }
          marks.push({ kind: "slot", datasetIndex: datasetIndex, index: index, run: dataset.bbRun, test: chart.data.labels[index], x: x, y: top, width: w, height: height });
        } else {
          const tip = 6;
          const top = area.top + tip;
          ctx.fillStyle = dataset.bbHatch;
          ctx.fillRect(x, top, w, MARK_PX);
          ctx.strokeStyle = dataset.bbColor;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x + 0.75, top + 0.75, w - 1.5, MARK_PX - 1.5);
          ctx.fillStyle = dataset.bbColor;
          ctx.beginPath();
          ctx.moveTo(el.x - Math.min(w / 2, 5), top);
          ctx.lineTo(el.x, top - tip);
          ctx.lineTo(el.x + Math.min(w / 2, 5), top);
          ctx.fill();
          ctx.font = "bold 9px system-ui, sans-serif";
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          if (w >= 30) textWithHalo(ctx, words.marks.wide, el.x, top + MARK_PX / 2);
          else if (w >= 9) {
            ctx.translate(el.x, top + MARK_PX / 2);
            ctx.rotate(-Math.PI / 2);
            textWithHalo(ctx, words.marks.narrow, 0, 0);
          }
          marks.push({ kind: "top", datasetIndex: datasetIndex, index: index, run: dataset.bbRun, test: chart.data.labels[index], x: x, y: area.top, width: w, height: MARK_PX + tip });
        }
        ctx.restore();
      });
      chart.$bbMarks = marks;
    },
  };

  // Values printed on the bars where they fit: across the bar when it is wide enough, else along it
  // when it is long enough; recorded in chart.$bbValueLabels.
  const valueLabels = {
    id: "bbValueLabels",
    afterDatasetsDraw(chart) {
      if (!chart.$bb) return;
      const area = chart.chartArea;
      const ctx = chart.ctx;
      const labels = [];
      ctx.save();
      ctx.font = "10px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      eachBar(chart, function (dataset, datasetIndex, value, index, el) {
        // a bar under 11 px takes a label neither across nor along (a phone's 50-configuration chart: every bar)
        if (value === null || dataset.bbOffScale[index] || el.width < 11) return;
        const text = boundPrefix(dataset, index, value) + shortValue(value, chart.$bb.view, chart.$bb.kind);
        const width = ctx.measureText(text).width;
        const top = Math.max(Math.min(el.y, el.base), area.top);
        const bottom = Math.min(Math.max(el.y, el.base), area.bottom);
        const length = bottom - top;
        // next to the bar's base, away from the error bar at its end
        const up = el.y <= el.base;
        const base = Math.min(Math.max(el.base, area.top), area.bottom);
        let along = false;
        let middle;
        if (el.width >= width + 4 && length >= 14) {
          middle = up ? base - 8 : base + 8;
          textWithHalo(ctx, text, el.x, middle);
        } else if (el.width >= 11 && length >= width + 6) {
          middle = up ? base - width / 2 - 4 : base + width / 2 + 4;
          ctx.save();
          ctx.translate(el.x, middle);
          ctx.rotate(-Math.PI / 2);
          textWithHalo(ctx, text, 0, 0);
          ctx.restore();
          along = true;
        } else return;
        labels.push({ datasetIndex: datasetIndex, index: index, text: text, x: el.x, y: middle, along: along });
      });
      ctx.restore();
      chart.$bbValueLabels = labels;
    },
  };

  // Absolute mode: the baseline configuration's mean as a dashed line across each test's bars,
  // so that choosing a baseline visibly matters (chart.$bbReferenceLines).
  const referenceLines = {
    id: "bbReference",
    afterDatasetsDraw(chart) {
      if (!chart.$bb || chart.$bb.kind) return;
      const baseIndex = chart.data.datasets.findIndex(function (d) { return d.bbBaseline; });
      const lines = [];
      // a matrix's small multiple draws the baseline cell's mean (chart.$bb.reference) in every row
      const reference = chart.$bb.reference;
      const baseValues = reference !== undefined ? chart.data.labels.map(function () { return reference; })
        : baseIndex >= 0 && chart.isDatasetVisible(baseIndex) ? chart.data.datasets[baseIndex].data : null;
      if (baseValues) {
        const area = chart.chartArea;
        const yScale = chart.scales.y;
        const ctx = chart.ctx;
        baseValues.forEach(function (value, index) {
          if (value === null || value <= 0 && yScale.type === "logarithmic") return;
          const y = yScale.getPixelForValue(value);
          if (y < area.top || y > area.bottom) return;
          let left = Infinity, right = -Infinity;
          chart.data.datasets.forEach(function (d, i) {
            const el = chart.isDatasetVisible(i) && chart.getDatasetMeta(i).data[index];
            if (el && isFinite(el.x)) { left = Math.min(left, el.x - el.width / 2); right = Math.max(right, el.x + el.width / 2); }
          });
          if (!isFinite(left)) return;
          ctx.save();
          ctx.setLineDash([5, 3]);
          ctx.strokeStyle = INK;
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(left - 3, y);
          ctx.lineTo(right + 3, y);
          ctx.stroke();
          ctx.restore();
          lines.push({ index: index, value: value, y: y, left: left - 3, right: right + 3 });
        });
      }
      chart.$bbReferenceLines = lines;
    },
  };

  // A bar beyond the axis is clipped there with a labelled marker: its value and "off scale".
  const offScale = {
    id: "bbOffScale",
    // Which bars are off scale is known only once the axis is settled (its ticks may round its ends
    // outwards): flagged before any drawing, so that the value labels, the verdict marks and the tooltips agree.
    beforeDatasetsDraw(chart) {
      if (!chart.$bb) return;
      const yScale = chart.scales.y;
      chart.data.datasets.forEach(function (dataset) {
        dataset.bbOffScale = dataset.data.map(function (v) { return v !== null && (v > yScale.max || v < yScale.min); });
      });
    },
    afterDatasetsDraw(chart) {
      if (!chart.$bb) return;
      const area = chart.chartArea;
      const yScale = chart.scales.y;
      const ctx = chart.ctx;
      const marks = [];
      eachBar(chart, function (dataset, datasetIndex, value, index, el) {
        if (value === null || !dataset.bbOffScale[index]) return;
        const high = value > yScale.max;
        const edge = high ? area.top : area.bottom;
        const w = Math.max(el.width, 6);
        const text = shortValue(value, chart.$bb.view, chart.$bb.kind);
        ctx.save();
        // a break across the bar near the edge, then an arrow beyond it
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = 3;
        const yBreak = high ? edge + 12 : edge - 12;
        ctx.beginPath();
        ctx.moveTo(el.x - w / 2 - 1, yBreak + 3);
        ctx.lineTo(el.x + w / 2 + 1, yBreak - 3);
        ctx.stroke();
        ctx.fillStyle = INK;
        ctx.beginPath();
        const dir = high ? -1 : 1;
        ctx.moveTo(el.x - 5, edge - dir * 1);
        ctx.lineTo(el.x, edge + dir * 7);
        ctx.lineTo(el.x + 5, edge - dir * 1);
        ctx.fill();
        ctx.font = "bold 10px system-ui, sans-serif";
        ctx.textAlign = "left";
        ctx.textBaseline = "middle";
        // one label per clipped bar: its value, "off scale" and its verdict mark (errorBars leaves it out)
        const verdict = dataset.bbVerdicts[index];
        const mark = verdict && (chart.$bb.relative || verdict !== "unknown") ? " " + chart.$bb.marks[verdict] : "";
        const label = text + " off scale" + mark;
        const labelWidth = ctx.measureText(label).width;
        let x = el.x + w / 2 + 3;
        if (x + labelWidth > area.right) x = el.x - w / 2 - 3 - labelWidth;
        textWithHalo(ctx, label, Math.max(x, area.left), high ? edge + 8 : edge - 8);
        ctx.restore();
        marks.push({ datasetIndex: datasetIndex, index: index, value: value, text: label, high: high });
      });
      chart.$bbOffScale = marks;
    },
  };

  // Draws each bar's 95 % CI as a vertical line with caps, and its verdict mark above it; records
  // both (chart.$bbErrorBars, chart.$bbVerdictMarks) so that a test can read what was drawn.
  const errorBars = {
    id: "bbErrorBars",
    // options (plugins.bbErrorBars): relative, better and worse colours, the verdicts' marks; set before the first draw.
    afterDatasetsDraw(chart, args, options) {
      const yScale = chart.scales.y;
      const area = chart.chartArea;
      const relative = options.relative;
      const ctx = chart.ctx;
      const bars = [];
      const marks = [];
      const arrows = []; // [x, y, direction, half width] of each whisker clipped at the axis
      const clamp = function (y) { return Math.min(Math.max(y, area.top), area.bottom); };
      const origin = chart.$bb ? chart.$bb.origin : 0;
      // All error bars are one path stroked once and the marks share one font: thousands of bars on a page.
      ctx.save();
      ctx.strokeStyle = INK;
      ctx.lineWidth = 1.25;
      ctx.beginPath();
      chart.data.datasets.forEach(function (dataset, datasetIndex) {
        if (!chart.isDatasetVisible(datasetIndex) || !dataset.bbErrors) return;
        const meta = chart.getDatasetMeta(datasetIndex);
        dataset.data.forEach(function (value, index) {
          const el = meta.data[index];
          if (value === null || !el || !isFinite(el.x)) return;
          let top = clamp(yScale.getPixelForValue(value));
          let bottom = top;
          const error = dataset.bbErrors[index];
          if (error) {
            const yLow = clamp(yScale.getPixelForValue(error[0] > 0 || yScale.type !== "logarithmic" ? error[0] : yScale.min));
            const yHigh = clamp(yScale.getPixelForValue(error[1]));
            // A whisker past the axis ends at it in an arrow instead of a cap; its value is in the tooltip and the tables.
            const clippedHigh = error[1] > yScale.max;
            const clippedLow = error[0] < yScale.min && (error[0] > 0 || yScale.type !== "logarithmic");
            ctx.moveTo(el.x, yLow);
            ctx.lineTo(el.x, yHigh);
            const cap = Math.min(CAP_PX, Math.max(el.width / 2 - 1, 1));
            [[yLow, clippedLow, 1], [yHigh, clippedHigh, -1]].forEach(function ([y, clipped, dir]) {
              if (clipped) {
                arrows.push([el.x, y, dir, Math.max(cap, 3)]);
              } else {
                ctx.moveTo(el.x - cap, y);
                ctx.lineTo(el.x + cap, y);
              }
            });
            bars.push({ datasetIndex: datasetIndex, index: index, low: error[0], high: error[1], x: el.x, yLow: yLow, yHigh: yHigh,
                        clipped: clippedHigh || clippedLow });
            top = Math.min(top, yHigh, yLow);
            bottom = Math.max(bottom, yHigh, yLow);
          }
          const verdict = dataset.bbVerdicts[index];
          if (!verdict || (!relative && verdict === "unknown") || (dataset.bbOffScale && dataset.bbOffScale[index])) return;
          const text = options.marks[verdict];
          const below = relative && value < origin;
          const y = clamp(below ? bottom + 10 : top - 8);
          marks.push({ datasetIndex: datasetIndex, index: index, verdict: verdict, text: text, x: el.x, y: y });
        });
      });
      ctx.stroke();
      ctx.fillStyle = INK;
      ctx.beginPath();
      for (const [x, y, dir, half] of arrows) {
        ctx.moveTo(x - half, y - dir * 6);
        ctx.lineTo(x, y);
        ctx.lineTo(x + half, y - dir * 6);
        ctx.closePath();
      }
      ctx.fill();
      ctx.font = "bold 12px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      for (const mark of marks) {
        ctx.fillStyle = mark.verdict === "better" ? options.better : mark.verdict === "worse" ? options.worse : INK;
        ctx.fillText(mark.text, mark.x, mark.y);
      }
      ctx.restore();
      chart.$bbErrorBars = bars;
      chart.$bbVerdictMarks = marks;
    },
  };

  // The y axis spans the bars and the origin (0, or ×1 for a ratio), within the chart's limits (relativeLimits):
  // beyond them a bar is off scale. Never the error bars: with three runs a side one wide interval (46 to 515,387
  // files/s) would make every bar a sliver; a whisker past the axis is clipped there with an arrow (bbErrorBars).
  function fitAxis(scale) {
    const chart = scale.chart;
    const bb = chart.$bbAxis;
    const log = scale.type === "logarithmic";
    let low = bb.origin, high = bb.origin;
    chart.data.datasets.forEach(function (dataset, datasetIndex) {
      if (!chart.isDatasetVisible(datasetIndex)) return;
      dataset.data.forEach(function (value) {
        if (value === null || (log && value <= 0)) return;
        low = Math.min(low, value);
        high = Math.max(high, value);
      });
    });
    // Room above the highest bar for its verdict mark (a linear absolute axis; the others have theirs below).
    if (!log && !bb.kind && high > 0) high *= ABSOLUTE_HEADROOM;
    if (bb.limits[0] !== null) low = Math.max(low, bb.limits[0]);
    if (bb.limits[1] !== null) high = Math.min(high, bb.limits[1]);
    // Every +++++ run is above its floor: the axis reaches past it, and the mark drawn at the top of the chart
    // (MARK_PX and its tip, about a tenth of a chart's height) sits above the figure the page gives for it.
    chart.data.datasets.forEach(function (dataset, datasetIndex) {
      if (!chart.isDatasetVisible(datasetIndex) || !dataset.bbTooFastAbove) return;
      dataset.bbTooFastAbove.forEach(function (floor) { if (floor) high = Math.max(high, floor * TOO_FAST_HEADROOM); });
    });
    if (log && bb.kind === "ratio") {
      low = Math.max(Math.min(low / 1.15, 0.8), bb.limits[0]);
      high = Math.min(Math.max(high * 1.15, 1.25), bb.limits[1]);
    } else if (log) {
      if (!(low > 0)) low = scale.min;
    }
    if (!log && bb.kind && high === low) high = low + 1;
    scale.min = low;
    scale.max = high;
  }

  // A white ground under every chart, so that an exported PNG (toBase64Image) is not transparent.
  const whiteGround = {
    id: "bbWhiteGround",
    beforeDraw(chart) {
      const ctx = chart.ctx;
      ctx.save();
      ctx.globalCompositeOperation = "destination-over";
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, chart.width, chart.height);
      ctx.restore();
    },
  };

  // Chart.js (4.6.1, vendored) finds each bar's slot in its test's group by scanning every dataset for every bar:
  // for 50 configurations, 450 bars a chart each scan 50 datasets twice, the most time of any part of a chart on a
  // phone. The slots depend only on which datasets are visible and their axes, which change only through an update,
  // so each chart keeps the answers from the start of one update to the next (the slots cache, emptied by bbSlots).
  const slots = {
    id: "bbSlots",
    beforeUpdate(chart) {
      chart.$bbSlots = new Map();
    },
  };

  function rememberSlots(BarController) {
    const getStacks = BarController.prototype._getStacks;
    const getAxis = BarController.prototype._getAxis;
    BarController.prototype._getStacks = function (last, dataIndex) {
      const memo = this.chart.$bbSlots;
      // with dataIndex (skipNull) the answer is per bar: not kept
      if (!memo || dataIndex !== undefined) return getStacks.call(this, last, dataIndex);
      const key = "stacks " + this._type + " " + this._cachedMeta.iScale.id + " " + last;
      if (!memo.has(key)) memo.set(key, getStacks.call(this, last, dataIndex));
      return memo.get(key);
    };
    BarController.prototype._getAxis = function () {
      const memo = this.chart.$bbSlots;
      if (!memo) return getAxis.call(this);
      if (!memo.has("axis")) memo.set("axis", getAxis.call(this));
      return memo.get("axis");
    };
  }

  let registered = false;
  function registerOnce() {
    if (registered) return;
    Chart.Interaction.modes.bbCategory = categoryMode;
    Chart.Tooltip.positioners.bbPointer = atPointer;
    rememberSlots(Chart.BarController);
    Chart.register(slots, whiteGround, referenceLines, valueLabels, tooFastMarks, errorBars, offScale);
    registered = true;
  }

  // ==== The configurations' legend ====

  function sharedLegend(chartView) {
    return chartView.bars.length > OWN_LEGEND_MAX;
  }

  function legendName(bar) {
    return bar.label + (bar.baseline ? " (baseline)" : "");
  }

  // One legend for all the charts of a page with many configurations, above the first chart: a button per
  // configuration, in its colour and pattern (the baseline outlined), that hides or shows it in every chart as a
  // chart's own legend does. The marks (baseline, +++++) stay in each chart's legend, as they differ by chart.
  function buildSharedLegend(payload) {
    const charts = document.querySelector(".charts");
    const first = payload.view.charts[0];
    if (!charts || !first || !sharedLegend(first)) return;
    if (charts.previousElementSibling && charts.previousElementSibling.classList.contains("chart-legend")) return;
    const legend = document.createElement("details");
    legend.className = "chart-legend";
    legend.open = true;
    const summary = document.createElement("summary");
    summary.textContent = "Colours of the " + first.bars.length + " configurations in every chart (press one to hide or show it)";
    legend.appendChild(summary);
    first.bars.forEach(function (bar) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "pattern-" + bar.pattern + (bar.baseline ? " is-baseline" : "");
      button.style.setProperty("--swatch", runColor(bar.colour));
      button.dataset.configuration = String(bar.configuration);
      button.setAttribute("aria-pressed", "true");
      button.textContent = legendName(bar);
      legend.appendChild(button);
    });
    charts.parentNode.insertBefore(legend, charts);
  }

  // The configurations the shared legend hides: a chart drawn after a press starts as the others show it. One
  // query per chart, not one per configuration (50 walks of the page cost a throttled phone's first chart 10 ms).
  function hiddenInLegend() {
    const hidden = new Set();
    document.querySelectorAll('.chart-legend button[data-configuration][aria-pressed="false"]').forEach(function (button) {
      hidden.add(button.dataset.configuration);
    });
    return hidden;
  }

  function toggleConfiguration(button) {
    const shown = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", String(shown));
    for (const chart of built) {
      if (!chart.$bb || !chart.canvas.isConnected) continue;
      const index = chart.data.datasets.findIndex(function (d) { return String(d.bbConfiguration) === button.dataset.configuration; });
      if (index < 0) continue;
      chart.setDatasetVisibility(index, shown);
      chart.update();
    }
  }

  document.addEventListener("click", function (e) {
    const button = e.target.closest && e.target.closest(".chart-legend button[data-configuration]");
    if (button) toggleConfiguration(button);
  });

  // ==== One chart ====

  // Rows a bottom legend of `texts` needs at `width` px (Chart.js's own packing, roughly), so that
  // the chart grows rather than shrinking its bars when the legend is long (phones, many runs).
  function legendRows(texts, width, fontPx) {
    let rows = 1, used = 0;
    for (const text of texts) {
      const item = text.length * fontPx * 0.55 + 28;
      if (used && used + item > width) { rows += 1; used = 0; }
      used += item;
    }
    return rows;
  }

  // A legend text at most `chars` long, cut in the middle: its end says "(baseline)" or "(N=3)", its start the name.
  function shorten(text, chars) {
    if (text.length <= chars) return text;
    const head = Math.ceil((chars - 1) / 2);
    return text.slice(0, head) + "…" + text.slice(text.length - (chars - 1 - head));
  }

  // A canvas with data-tests="a,b" draws only those tests of its chart: in absolute mode the per-char tests
  // (about 1 MiB/s) get a chart and an axis of their own beside the block tests (GiB/s), where they would be
  // flat lines at zero. The chart and its view are cut to those tests; everything else is as for the whole.
  function subset(chart, chartView, names, label) {
    const keep = [];
    chart.tests.forEach(function (test, i) { if (names.indexOf(test) >= 0) keep.push(i); });
    const pick = function (values) { return keep.map(function (i) { return values[i]; }); };
    // the display unit of these tests' own values (app/units.py's steps, as display_unit() picks them)
    let largest = 0;
    chartView.bars.forEach(function (bar) {
      pick(bar.values).concat(...pick(bar.errors).filter(Boolean)).forEach(function (v) { if (v !== null) largest = Math.max(largest, Math.abs(v)); });
    });
    let unit = { display_unit: chartView.display_unit, divisor: chartView.divisor, axis_title: chartView.axis_title };
    if (chartView.steps && !chartView.relative_kind) {
      let step = chartView.steps[0];
      for (const s of chartView.steps) if (largest >= s[0]) step = s;
      unit = { display_unit: step[1], divisor: step[0], axis_title: label + ", " + step[1] };
    }
    return [
      Object.assign({}, chart, { tests: pick(chart.tests) }),
      Object.assign({}, chartView, unit, {
        test_titles: pick(chartView.test_titles),
        hints: pick(chartView.hints),
        bars: chartView.bars.map(function (bar) {
          return Object.assign({}, bar, { values: pick(bar.values), errors: pick(bar.errors), status: pick(bar.status),
                                          verdicts: pick(bar.verdicts), n: pick(bar.n),
                                          too_fast_above: bar.too_fast_above && pick(bar.too_fast_above),
                                          bounds: bar.bounds && pick(bar.bounds) });
        }),
      }),
    ];
  }

  function buildChart(canvas, payload) {
    const compare = payload.compare;
    const view = payload.view;
    const key = canvas.dataset.chart || canvas.dataset.partOf;
    const chartIndex = compare.charts.findIndex(function (c) { return c.key === key; });
    if (chartIndex < 0) return null;
    let chart = compare.charts[chartIndex];
    let chartView = view.charts[chartIndex];
    const part = Boolean(canvas.dataset.partOf);
    if (canvas.dataset.tests) {
      [chart, chartView] = subset(chart, chartView, canvas.dataset.tests.split(","), part ? "per-char" : chartView.title);
    }
    const relative = compare.mode === "relative";
    const kind = relative ? chartView.relative_kind : null;
    const log = chartView.scale === "logarithmic";
    const origin = kind === "ratio" ? 1 : 0;
    const better = cssVar("--better", "#2f9e5b");
    const worse = cssVar("--worse", "#d64545");
    const baseName = view.baseline_name;
    const shared = sharedLegend(chartView);
    const hidden = shared ? hiddenInLegend() : new Set();

    // One dataset per bar set of the view (charts.chart_bars): values, error bars, statuses, verdicts and
    // N as the view worked them out.
    const datasets = chartView.bars.map(function (bar) {
      const color = runColor(bar.colour);
      // Each configuration keeps its colour in every mode; a relative bar whose difference is
      // within noise (or unknown) is paler, never another colour.
      const solid = runFill(bar, 1);
      const pale = runFill(bar, 0.4);
      const fill = relative
        ? bar.verdicts.map(function (v) { return v === "better" || v === "worse" ? solid : pale; })
        : solid;
      return {
        label: bar.label,
        data: bar.values.slice(),
        hidden: hidden.has(String(bar.configuration)),
        base: kind === "ratio" ? 1 : undefined,
        backgroundColor: fill,
        borderColor: bar.baseline ? INK : color,
        borderWidth: bar.baseline ? 2 : relative ? 1 : 0,
        bbConfiguration: bar.configuration,
        bbRun: bar.configuration,
        bbBaseline: bar.baseline,
        bbStatus: bar.status,
        bbErrors: bar.errors,
        bbVerdicts: bar.verdicts,
        bbN: bar.n,
        bbTooFastAbove: bar.too_fast_above,
        bbBounds: bar.bounds,
        bbColor: color,
        bbColour: bar.position,
        bbFill: solid,
        bbHatch: hatch(color),
        bbOffScale: bar.values.map(function () { return false; }),
      };
    });
    const values = [];
    datasets.forEach(function (d) { d.data.forEach(function (v) { if (v !== null) values.push(v); }); });
    const limits = relativeLimits(kind, values);
    // The bars the answer names (app/compare/answer.py) stay on the scale: a clipped bar would hide the result it states.
    (payload.answer || []).forEach(function (named) {
      datasets.forEach(function (d) {
        if (named.named.indexOf(d.bbConfiguration) < 0) return;
        chart.tests.forEach(function (test, i) {
          const v = d.data[i];
          if (v === null || named.tests.indexOf(test) < 0) return;
          if (limits[1] !== null && v > limits[1]) limits[1] = v;
          if (limits[0] !== null && v < limits[0]) limits[0] = v;
        });
      });
    });
    datasets.forEach(function (d) {
      d.bbOffScale = d.data.map(function (v) {
        return v !== null && ((limits[1] !== null && v > limits[1]) || (limits[0] !== null && v < limits[0]));
      });
    });
    const hasTooFast = datasets.some(function (d) { return d.bbStatus.indexOf(TOO_FAST) >= 0; });
    const hasValues = values.length > 0;
    const tooFastText = view.status_text[TOO_FAST] + (chartView.measure === "cpu" ? " (empty slot)" : " (marked at the top)");
    const baseText = function (narrow) {
      if (!relative) return narrow ? "dashed: baseline mean" : "dashed line: mean of the baseline";
      return "baseline " + (narrow ? shorten(baseName, 20) : baseName) + (kind === "ratio" ? " = ×1" : " = 0");
    };

    const legendText = function (dataset, narrow) {
      const text = legendName({ label: dataset.label, baseline: dataset.bbBaseline });
      return narrow ? shorten(text, 30) : text;
    };
    const legendLabels = function (c) {
      const narrow = c.width < NARROW_PX;
      const items = shared ? [] : c.data.datasets.map(function (dataset, i) {
        return { text: legendText(dataset, narrow), fillStyle: dataset.bbFill, strokeStyle: dataset.bbBaseline ? INK : dataset.bbColor,
                 lineWidth: dataset.bbBaseline ? 2 : 0, hidden: !c.isDatasetVisible(i), datasetIndex: i };
      });
      items.push({ text: baseText(narrow), fillStyle: "rgba(0,0,0,0)", strokeStyle: INK, lineWidth: 2,
                   lineDash: relative ? [] : [5, 3], hidden: false, bbMark: true });
      if (hasTooFast) {
        items.push({ text: tooFastText, fillStyle: hatch("#555"), strokeStyle: "#555", lineWidth: 1, hidden: false, bbMark: true });
      }
      return items;
    };

    // Grow the box by the legend's rows (measured once per canvas, from the CSS height).
    const box = canvas.parentElement;
    if (!box.dataset.baseHeight) box.dataset.baseHeight = String(box.clientHeight || 290);
    const width = box.clientWidth || 600;
    const fontPx = width < NARROW_PX ? 10 : 11;
    const texts = (shared ? [] : datasets.map(function (d) { return legendText(d, width < NARROW_PX); })).concat([baseText(width < NARROW_PX)], hasTooFast ? [tooFastText] : []);
    if (!part) box.style.height = Number(box.dataset.baseHeight) + (legendRows(texts, width, fontPx) - 1) * (fontPx + 9) + "px";

    const config = {
      type: "bar",
      data: { labels: chart.tests.slice(), datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        devicePixelRatio: PIXEL_RATIO,
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
            // A phone's chart is 250 px high (app.css): the axis title keeps its unit ("files/s"), not its start.
            title: { display: true, text: PHONE.matches ? chartView.axis_title.split(", ").pop() : chartView.axis_title },
            // Without a single value the axis has nothing to measure: no numbers on it.
            ticks: { display: hasValues, callback: function (value) { return tickLabel(value, chartView, kind); } },
            afterDataLimits: fitAxis,
            afterBuildTicks: kind === "ratio" ? ratioTicks : log ? logTicks : kind ? undefined : displayUnitTicks(chartView.divisor),
            grid: {
              color: function (c) { return relative && c.tick && c.tick.value === origin ? INK : "rgba(0,0,0,0.08)"; },
              lineWidth: function (c) { return relative && c.tick && c.tick.value === origin ? 2 : 1; },
            },
          },
        },
        plugins: {
          bbErrorBars: { relative: relative, better: better, worse: worse, marks: view.verdict_mark },
          legend: {
            display: !part, // the whole chart's legend beside it names the same bars
            position: "bottom",
            labels: { generateLabels: legendLabels, boxWidth: 12, font: { size: fontPx } },
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
                const bound = boundPrefix(item.dataset, i, item.raw);
                let text = item.dataset.label + ": " + bound + formatValue(item.raw, chart, chartView, kind);
                if (bound) text += " (" + view.status_text[TOO_FAST] + " on a side: a bound)";
                if (item.dataset.bbOffScale[i]) text += " (off scale)";
                const extra = ["N=" + item.dataset.bbN[i]];
                const floor = item.dataset.bbTooFastAbove && item.dataset.bbTooFastAbove[i];
                if (floor) extra.push("the other runs " + view.status_text[TOO_FAST] + " (above " + formatValue(floor, chart, chartView, kind) + ")");
                if (error) {
                  const beyond = error[1] > item.chart.scales.y.max || (error[0] < item.chart.scales.y.min && error[0] > 0);
                  extra.push("95 % CI " + formatValue(error[0], chart, chartView, kind) + " to " + formatValue(error[1], chart, chartView, kind) +
                             (beyond ? " (whisker beyond the axis)" : ""));
                }
                if (verdict) extra.push(view.verdict_mark[verdict] + " " + view.verdict_text[verdict]);
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
    const bb = { relative: relative, key: key, kind: kind, shared: shared, measure: chartView.measure, origin: origin, view: chartView,
                 marks: view.verdict_mark, words: { status: view.status_text[TOO_FAST], marks: view.too_fast_marks } };
    // fitAxis runs inside the constructor's first update: it reads these from the instance.
    const instance = new Chart(canvas, Object.assign(config, {
      plugins: [{ id: "bbState", beforeInit: function (c) { c.$bb = bb; c.$bbAxis = { origin: origin, limits: limits, kind: kind }; } }],
    }));
    return instance;
  }

  // Lines of `text` no wider than `width` px in ctx's font; a word wider than that (an address) is broken where it
  // has to be.
  function wrap(ctx, text, width) {
    const lines = [];
    let line = "";
    for (const word of text.split(" ")) {
      const next = line ? line + " " + word : word;
      if (line && ctx.measureText(next).width > width) { lines.push(line); line = word; } else line = next;
      while (ctx.measureText(line).width > width && line.length > 1) {
        let cut = line.length - 1;
        while (cut > 1 && ctx.measureText(line.slice(0, cut)).width > width) cut -= 1;
        lines.push(line.slice(0, cut));
        line = line.slice(cut);
      }
    }
    if (line) lines.push(line);
    return lines;
  }

  // The chart's visible configurations as legend items packed in rows `width` px wide, in ctx's font.
  function legendLayout(ctx, instance, width, scale) {
    const items = [];
    let row = 0, x = 0;
    instance.data.datasets.forEach(function (d, i) {
      if (!instance.isDatasetVisible(i)) return;
      const text = legendName({ label: d.label, baseline: d.bbBaseline });
      const size = 15 * scale + ctx.measureText(text).width;
      if (x && x + size > width) { row += 1; x = 0; }
      items.push({ text: text, fill: d.bbFill, baseline: d.bbBaseline, row: row, x: x });
      x += size + 12 * scale;
    });
    return { items: items, rows: items.length ? row + 1 : 0 };
  }

  // A chart as a PNG to paste into a slide: every panel of it as drawn (the block chart and its per-char axis, side
  // by side or stacked as the page shows them), redrawn at EXPORT_SCALE pixels per CSS pixel whatever the screen's,
  // under its title (wrapped, never cut), the baseline, the mode, the date and the caveats the answer gives for its
  // tests (page cache, CPU, +++++), and the page's address. No SVG: Chart.js draws on a canvas only, and an SVG
  // holding that bitmap would not be a vector drawing. Buttons: <button data-export-chart="KEY" data-format="png">;
  // each export leaves its size and panels on the button (data-exported-*) for the tests.
  const EXPORT_SCALE = 2;

  // The chart redrawn at `scale` device pixels per CSS pixel, copied, and drawn again as it was.
  function snapshot(instance, scale) {
    const before = instance.options.devicePixelRatio;
    instance.options.devicePixelRatio = scale;
    instance.resize();
    const copy = document.createElement("canvas");
    copy.width = instance.canvas.width;
    copy.height = instance.canvas.height;
    copy.getContext("2d").drawImage(instance.canvas, 0, 0);
    instance.options.devicePixelRatio = before;
    instance.resize();
    return copy;
  }

  function exportChart(button) {
    const key = button.dataset.exportChart;
    const canvases = [document.querySelector('canvas[data-chart="' + key + '"]')]
      .concat(Array.from(document.querySelectorAll('canvas[data-part-of="' + key + '"]'))).filter(Boolean);
    const instances = canvases.map(drawNow);
    const dataElement = document.getElementById("compare-data");
    if (!instances.length || !instances[0] || !dataElement) return;
    const instance = instances[0];
    const payload = JSON.parse(dataElement.textContent);
    const compare = payload.compare;
    const scale = EXPORT_SCALE;
    // each panel where the page shows it, relative to the box around them all
    const boxes = canvases.map(function (canvas) { return canvas.getBoundingClientRect(); });
    const left = Math.min.apply(null, boxes.map(function (b) { return b.left; }));
    const top = Math.min.apply(null, boxes.map(function (b) { return b.top; }));
    const right = Math.max.apply(null, boxes.map(function (b) { return b.right; }));
    const bottom = Math.max.apply(null, boxes.map(function (b) { return b.bottom; }));
    const panels = instances.map(function (chart, i) {
      return chart ? { image: snapshot(chart, scale), x: (boxes[i].left - left) * scale, y: (boxes[i].top - top) * scale } : null;
    }).filter(Boolean);
    const figure = canvases[0].closest("figure");
    const heading = figure && figure.querySelector("h2");
    const title = heading ? heading.textContent.trim().replace(/\s+/g, " ") : key;
    const facts = "Baseline: " + payload.view.baseline_name + " · " + (compare.mode === "relative" ? "relative to the baseline" : "absolute values") +
      " · " + compare.configurations.length + " configurations · " + new Date().toISOString().slice(0, 10);
    const caveats = [];
    (payload.answer || []).forEach(function (row) {
      if (row.chart === key && row.caveat) caveats.push("⚠ " + row.title + ": " + row.caveat);
    });
    const pad = 12 * scale;
    const width = Math.ceil((right - left) * scale);
    const out = document.createElement("canvas");
    const ctx = out.getContext("2d");
    const fonts = { title: "bold " + 16 * scale + "px system-ui, sans-serif", text: 12 * scale + "px system-ui, sans-serif" };
    ctx.font = fonts.title;
    const titleLines = wrap(ctx, title, width - 2 * pad);
    ctx.font = fonts.text;
    const textLines = wrap(ctx, facts, width - 2 * pad);
    const caveatLines = [];
    caveats.forEach(function (c) { caveatLines.push.apply(caveatLines, wrap(ctx, c, width - 2 * pad)); });
    const footer = wrap(ctx, location.href, width - 2 * pad);
    const line = 17 * scale;
    const titleLine = 22 * scale;
    const head = pad + titleLine * titleLines.length + line * (textLines.length + caveatLines.length);
    const drawn = Math.ceil((bottom - top) * scale);
    // A page with one shared legend has none on the canvas: the image gets the chart's own, so that it still says
    // which colour is which configuration.
    const legend = instance.$bb && instance.$bb.shared ? legendLayout(ctx, instance, width - 2 * pad, scale) : { items: [], rows: 0 };
    out.width = width;
    out.height = Math.ceil(head + drawn + line * (legend.rows + footer.length) + pad);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.textBaseline = "top";
    ctx.fillStyle = INK;
    ctx.font = fonts.title;
    let y = pad;
    titleLines.forEach(function (text) { ctx.fillText(text, pad, y); y += titleLine; });
    ctx.font = fonts.text;
    textLines.forEach(function (text) { ctx.fillText(text, pad, y); y += line; });
    ctx.fillStyle = "#7a4100";
    caveatLines.forEach(function (text) { ctx.fillText(text, pad, y); y += line; });
    panels.forEach(function (panel) { ctx.drawImage(panel.image, panel.x, head + panel.y); });
    y = head + drawn;
    legend.items.forEach(function (item) {
      const box = 11 * scale;
      const top = y + item.row * line + (line - box) / 2;
      ctx.fillStyle = item.fill;
      ctx.fillRect(pad + item.x, top, box, box);
      if (item.baseline) {
        ctx.strokeStyle = INK;
        ctx.lineWidth = 2 * scale;
        ctx.strokeRect(pad + item.x, top, box, box);
      }
      ctx.fillStyle = INK;
      ctx.fillText(item.text, pad + item.x + box + 4 * scale, y + item.row * line + 2 * scale);
    });
    y += legend.rows * line;
    ctx.fillStyle = "#5b6670";
    footer.forEach(function (text) { ctx.fillText(text, pad, y); y += line; });
    button.dataset.exportedWidth = String(out.width);
    button.dataset.exportedHeight = String(out.height);
    button.dataset.exportedPanels = String(panels.length);
    button.dataset.exportedTitleLines = String(titleLines.length);
    const link = document.createElement("a");
    link.href = out.toDataURL("image/png");
    link.download = "bonnieboard-" + key + ".png";
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  document.addEventListener("click", function (e) {
    const button = e.target.closest && e.target.closest("button[data-export-chart]");
    if (button) exportChart(button);
  });

  // ==== Small multiples of the matrix page (templates/matrix.html) ====

  // One chart per row value: a bar per column value (one colour per column, the same in every row),
  // the cell's mean with its CI and verdict, +++++ marked at the top, the baseline cell's mean as a
  // dashed line, and one y axis for all rows so that the charts compare at a glance.
  function buildMultiple(canvas, payload) {
    const m = payload.matrix;
    const row = m.rows[Number(canvas.dataset.matrixRow)];
    if (!row) return null;
    let top = 0, reference;
    payload.bars.forEach(function (bars) {
      bars.forEach(function (bar) {
        // the rate every +++++ run of a cell is above: the axis reaches past it, as the compare page's does
        if (bar.too_fast_above) top = Math.max(top, bar.too_fast_above * TOO_FAST_HEADROOM / ABSOLUTE_HEADROOM);
        if (bar.value === null) return;
        // the bars set the axis, never their intervals: a whisker past it is clipped with an arrow (bbErrorBars)
        top = Math.max(top, bar.value);
        if (bar.baseline) reference = bar.value;
      });
    });
    const view = { scale: "linear", divisor: payload.divisor, steps: null, display_unit: payload.unit };
    // one bar per column, as app/compare/matrix.py's display() worked it out
    const datasets = payload.bars[Number(canvas.dataset.matrixRow)].map(function (bar) {
      const color = runColor(bar.colour);
      return {
        label: bar.label,
        data: [bar.value],
        backgroundColor: runFill(bar, bar.verdict === "better" || bar.verdict === "worse" || bar.baseline ? 1 : 0.55),
        borderColor: bar.baseline ? INK : color,
        borderWidth: bar.baseline ? 2 : 0,
        bbConfiguration: bar.configuration,
        bbRun: bar.configuration,
        bbBaseline: false,
        bbStatus: [bar.status],
        bbErrors: [bar.error],
        bbVerdicts: [bar.verdict],
        bbN: [bar.n],
        bbTooFastAbove: [bar.too_fast_above],
        bbColor: color,
        bbFill: runFill(bar, 1),
        bbHatch: hatch(color),
        bbOffScale: [false],
      };
    });
    const bb = { relative: false, key: "matrix", kind: null, measure: "value", origin: 0, view: view, reference: reference, marks: payload.verdict_mark,
                 words: { status: payload.status_text[TOO_FAST], marks: payload.too_fast_marks } };
    return new Chart(canvas, {
      type: "bar",
      data: { labels: [m.rows_key + "=" + row.value], datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        devicePixelRatio: PIXEL_RATIO,
        animation: false,
        scales: {
          x: { grid: { display: false } },
          y: { beginAtZero: true, max: top ? top * ABSOLUTE_HEADROOM : undefined, title: { display: true, text: payload.test_title + ", " + payload.unit },
               ticks: { callback: function (value) { return fmtNumber(value / payload.divisor); } },
               afterBuildTicks: displayUnitTicks(payload.divisor) },
        },
        plugins: {
          bbErrorBars: { relative: false, better: cssVar("--better", "#2f9e5b"), worse: cssVar("--worse", "#d64545"), marks: payload.verdict_mark },
          legend: { display: true, position: "bottom", labels: { boxWidth: 12, font: { size: 10 },
            generateLabels: function (c) {
              return c.data.datasets.map(function (d, i) {
                return { text: d.label, fillStyle: d.bbFill, strokeStyle: d.borderColor, lineWidth: d.borderWidth, hidden: !c.isDatasetVisible(i), datasetIndex: i };
              }).concat(reference !== undefined ? [{ text: "dashed: baseline cell", fillStyle: "rgba(0,0,0,0)", strokeStyle: INK, lineWidth: 2, lineDash: [5, 3], hidden: false }] : []);
            } } },
          tooltip: { callbacks: { label: function (item) {
            const bar = payload.bars[Number(canvas.dataset.matrixRow)][item.datasetIndex];
            if (bar.configuration === null) return item.dataset.label + ": no runs";
            if (item.raw === null) return item.dataset.label + ": " + (bar.status === TOO_FAST ? payload.status_text[TOO_FAST] : bar.status);
            const ci = bar.error ? ", 95 % CI " + fmtNumber(bar.error[0] / payload.divisor) + " to " + fmtNumber(bar.error[1] / payload.divisor) +
              (bar.error[1] > item.chart.scales.y.max ? " (whisker beyond the axis)" : "") : "";
            return item.dataset.label + ": " + fmtNumber(item.raw / payload.divisor) + " " + payload.unit + " (N=" + bar.n + ci + (bar.verdict ? ", " + payload.verdict_mark[bar.verdict] + " " + bar.verdict.replace("_", " ") : "") + ")";
          } } },
        },
      },
      plugins: [{ id: "bbState", beforeInit: function (c) { c.$bb = bb; } }],
    });
  }

  // ==== Life cycle ====

  // A chart is drawn when it comes within half a screen of the viewport, and the others one per idle moment, in page
  // order: a page comparing 50 configurations builds some 300 datasets, and a phone shows its first screen and
  // answers a tap or a scroll before they are all built. Each waiting canvas maps to the function drawing it.
  const built = new Set();
  const waiting = new Map();
  const near = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver(function (entries) {
    drawInTurn(entries.filter(function (entry) { return entry.isIntersecting; }).map(function (entry) { return entry.target; }));
  }, { rootMargin: "50% 0px" });

  // `canvases`' charts, one per task so that the browser paints each as it comes: those on the screen first, the
  // most shown first (the chart a reader looks at before the edge of its neighbour), then the others in page order.
  function drawInTurn(canvases) {
    const left = canvases.filter(function (canvas) { return waiting.has(canvas); });
    if (!left.length) return;
    const shown = left.map(function (canvas) {
      const box = canvas.getBoundingClientRect();
      return Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0);
    });
    const first = shown.reduce(function (best, height, i) { return height > shown[best] ? i : best; }, 0);
    drawNow(left[first]);
    left.splice(first, 1);
    if (left.length) setTimeout(function () { drawInTurn(left); }, 0);
  }

  const whenIdle = window.requestIdleCallback || function (fn) { return setTimeout(fn, 1); };
  let idleQueued = false;

  // The canvas's chart, drawn now if it was waiting (a PNG export, a chart scrolled to).
  function drawNow(canvas) {
    const draw = waiting.get(canvas);
    if (draw) {
      waiting.delete(canvas);
      if (near) near.unobserve(canvas);
      if (canvas.isConnected && !Chart.getChart(canvas)) {
        const chart = draw();
        if (chart) built.add(chart);
      }
    }
    return Chart.getChart(canvas);
  }

  function drawWhenIdle() {
    if (idleQueued || !waiting.size) return;
    idleQueued = true;
    whenIdle(function () {
      idleQueued = false;
      const next = waiting.keys().next();
      if (!next.done) drawNow(next.value);
      drawWhenIdle();
    });
  }

  function initCharts() {
    styleCache.clear();
    for (const chart of built) {
      if (!chart.canvas || !chart.canvas.isConnected) {
        chart.destroy();
        built.delete(chart);
      }
    }
    for (const canvas of waiting.keys()) {
      if (canvas.isConnected) continue;
      waiting.delete(canvas);
      if (near) near.unobserve(canvas);
    }
    if (typeof Chart === "undefined") return;
    const sources = [["compare-data", "canvas[data-chart], canvas[data-part-of]", buildChart], ["matrix-data", "canvas[data-matrix-row]", buildMultiple]];
    for (const [id, selector, build] of sources) {
      const dataElement = document.getElementById(id);
      if (!dataElement) continue;
      registerOnce();
      const payload = JSON.parse(dataElement.textContent);
      if (id === "compare-data") buildSharedLegend(payload);
      document.querySelectorAll(selector).forEach(function (canvas) {
        if (Chart.getChart(canvas) || waiting.has(canvas)) return;
        waiting.set(canvas, function () { return build(canvas, payload); });
        if (near) near.observe(canvas);
        else drawNow(canvas);
      });
    }
    drawWhenIdle();
  }

  document.addEventListener("htmx:after:swap", initCharts);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initCharts);
  else initCharts();
})();
