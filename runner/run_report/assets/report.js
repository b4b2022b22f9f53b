// attnsweep report: renders the data attnsweep embedded (#report-data) with
// Chart.js (embedded above this script). No network access of any kind.
// Over 600 lines because the page takes one script, embedded whole (no module loader offline).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const cases = data.cases;
  const onGpu = !data.run.cpu;
  const charts = [];  // {kind, chart}: what a test or a reader can inspect
  // A run with passes other than forward (backward, forward_backward) is shown
  // one pass at a time: a selector in the bar filters every chart and table,
  // and the tables name the pass. A forward-only run has no selector and shows
  // every case, as reports always did.
  const passes = data.passes && data.passes.length ? data.passes : ["forward"];
  const severalPasses = passes.some((p) => p !== "forward");
  let pass = passes[0];
  let view = severalPasses ? cases.filter((c) => c.pass === pass) : cases;  // the cases shown
  // What one sample times, in words: "forward", "backward", "forward+backward".
  const per = () => (pass === "forward_backward" ? "forward+backward" : pass);
  window.attnsweepReport = { data: data, charts: charts, passes: passes, selectPass: selectPass,
                             selectedPass: () => pass, shapeLists: () => [...shapeLists],
                             splitGroups: () => [...splitGroups], plans: () => plans };

  // ---- helpers ---------------------------------------------------------------
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  };
  const fixed = (value, digits) => (value === null || value === undefined ? "" : Number(value).toFixed(digits));
  const sci = (value) => (value === null || value === undefined ? "" : Number(value).toExponential(1));
  const times = (value) => (value === null || value === undefined ? "" : Number(value).toFixed(value < 10 ? 2 : 1) + "x");
  // Three significant digits, for joules (a small forward takes millijoules, a training step at 8k
  // whole joules) and TFLOP per joule alike.
  const joules = (value) => (value === null || value === undefined ? "" : Number(value).toPrecision(3));
  const pct = (value) => (value === null || value === undefined ? "" : (100 * value).toFixed(value < 0.1 ? 1 : 0) + "%");
  // The one place a case's mask is named: every chart, table, series and family goes through it.
  // attnsweep's own label ("causal", "causal_bottom_right window[4096,0]", ...); reports of
  // databases written before masks had alignments and windows carry the flag only.
  const mask = (c) => c.mask_label || (c.causal ? "causal" : "full");
  // As Case::label: a pass other than forward is named at the end.
  const label = (c) => `${c.variant} ${c.shape} ${c.dtype} ${mask(c)}` + (c.pass && c.pass !== "forward" ? " " + c.pass : "");
  const failed = (c) => c.status !== "ok" && c.status !== "unsupported";

  // One color per variant, the same in every chart.
  const palette = ["#2f6fd6", "#d1495b", "#1f8a4c", "#edae49", "#7b4fb8", "#00798c", "#e07b39", "#5c6b7a",
                   "#a33e8a", "#8fb339", "#3d3b8e", "#b5651d"];
  const variants = [...new Set(cases.map((c) => c.variant))];
  const colorOf = (variant) => palette[variants.indexOf(variant) % palette.length];

  // Log-axis ticks at 1, 2 and 5 times a power of ten only.
  const logTicks = {
    callback(value) {
      const exponent = Math.floor(Math.log10(value) + 1e-9);
      const mantissa = value / Math.pow(10, exponent);
      if (![1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6)) return "";
      if (value >= 1e6) return value / 1e6 + "M";
      if (value >= 1e4) return value / 1e3 + "k";
      return value < 1e-2 ? Number(value).toExponential(0) : String(Number(value.toPrecision(3)));
    },
    autoSkip: false,
  };
  const axis = (title, log) => ({ type: log ? "logarithmic" : "linear", title: { display: true, text: title },
                                  ticks: log ? logTicks : {},
                                  // Grid lines at labelled ticks only: a log axis has nine per decade otherwise.
                                  grid: { color: (context) => (context.tick && context.tick.label !== "" ? "#e6e9ef" : "transparent") } });
  // A log axis over the data only (Chart.js starts one at a power of ten), with
  // a tick at each value when there are few (sequence lengths: 512, 1024, ...).
  function fitted(base, values, tickAtValues) {
    const low = Math.min(...values), high = Math.max(...values);
    base.min = low / 1.25;
    base.max = high * 1.25;
    const distinct = [...new Set(values)].sort((a, b) => a - b);
    if (tickAtValues && distinct.length <= 12) {
      base.afterBuildTicks = (scale) => { scale.ticks = distinct.map((v) => ({ value: v })); };
      base.ticks = { autoSkip: false, callback: (value) => String(value) };
    }
    return base;
  }
  const xs = (datasets) => datasets.flatMap((d) => d.data.map((p) => p.x));
  const ys = (datasets) => datasets.flatMap((d) => d.data.map((p) => p.y));

  function addChart(container, kind, title, config, wide) {
    const box = el("div", { class: wide ? "chart wide" : "chart" });
    const canvas = el("canvas", { "data-chart": kind, "aria-label": [].concat(title).join(", "), role: "img" });
    box.append(canvas);
    container.append(box);
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
    // A title of two lines (a sweep family's, on a small chart) a little smaller.
    config.options.plugins = Object.assign({ title: { display: true, text: title, font: { size: Array.isArray(title) ? 13 : 14, weight: "600" } },
                                             legend: { position: "bottom", labels: { boxWidth: 14 } } },
                                           config.options.plugins);
    const chart = new Chart(canvas.getContext("2d"), config);
    charts.push({ kind: kind, chart: chart });
    return chart;
  }

  // Cases grouped into one chart per dtype and head_dim; within a chart one
  // line per variant (and per mask, and per batch x heads, where those vary).
  const groupOf = (c) => `${c.dtype}, head_dim ${c.head_dim}${c.head_dim_v && c.head_dim_v !== c.head_dim ? "/" + c.head_dim_v : ""}`;
  function groups(selected) {
    const byGroup = new Map();
    for (const c of selected) {
      const key = groupOf(c);
      if (!byGroup.has(key)) byGroup.set(key, []);
      byGroup.get(key).push(c);
    }
    // bf16 before fp16 before fp32, and head_dim 64 before 128.
    return [...byGroup.entries()].sort((a, b) => (a[1][0].dtype < b[1][0].dtype ? -1 : a[1][0].dtype > b[1][0].dtype ? 1 : a[1][0].head_dim - b[1][0].head_dim));
  }
  // batch x heads (/kv_heads where fewer), and the query length where it is not the key length.
  // A variable-length batch or a paged cache is a shape of its own, never a point of a length sweep.
  const storage = (c) => (c.varlen ? " " + c.varlen : "") + (c.page_size ? " paged" + c.page_size : "");
  const layout = (c) => `${c.batch}x${c.heads}${c.kv_heads !== c.heads ? "/" + c.kv_heads : ""}${c.seq_len_q !== c.seq_len_kv ? " q=" + c.seq_len_q : ""}${storage(c)}`;
  function series(group, value) {
    const masks = new Set(group.map(mask)).size > 1;
    const layouts = new Set(group.map(layout)).size > 1;
    const bySeries = new Map();
    for (const c of group) {
      const y = value(c);
      if (y === null || y === undefined || !(y > 0)) continue;
      const name = c.variant + (masks ? " " + mask(c) : "") + (layouts ? " " + layout(c) : "");
      if (!bySeries.has(name)) bySeries.set(name, { c: c, points: [] });
      bySeries.get(name).points.push({ x: c.seq_len_kv, y: y, index: c.index });
    }
    // sdpa_auto is whichever backend PyTorch chose, so it lies on that backend's
    // line: drawn as open rings on a dotted line to stay visible on top of it.
    const chosen = (c) => c.variant === "sdpa_auto";
    return [...bySeries.entries()].map(([name, s]) => ({
      label: name, data: s.points.sort((a, b) => a.x - b.x), showLine: true,
      borderColor: colorOf(s.c.variant), backgroundColor: chosen(s.c) ? "transparent" : colorOf(s.c.variant),
      borderDash: chosen(s.c) ? [2, 3] : masks && mask(s.c) === "full" ? [6, 4] : [], pointRadius: chosen(s.c) ? 6 : 3,
      borderWidth: 2,
    }));
  }
  // ---- length sweeps, lists of shapes, and both ----------------------------------
  // A chart's cases (one dtype and head_dim) are drawn against the key length
  // when they form a length sweep, and as a list of shapes otherwise: a group of
  // bars per shape, a bar per variant. The rule (docs/report.md, "Length sweeps
  // and lists of shapes"): the cases fall into families, the lines a sweep chart
  // draws for each variant: one mask, one batch x heads/kv_heads and one query
  // length (the key length, or a query length of its own). A family of 3 or more
  // distinct key lengths is a sweep family; the cases of the other families are
  // single shapes. A group (dtype and head_dim) is
  //  - a length sweep, one chart as always, when it is one family, or when every
  //    family is a sweep family and there are at most 4 of them;
  //  - a list of shapes, bars only, when no family is a sweep family (and there are several);
  //  - split otherwise (sweep families beside single shapes, or more than 4 sweep
  //    families): a chart of lines per sweep family, titled with the family and
  //    with the variants for legend, and bars for the single shapes.
  // Bar charts hold at most 16 shapes (10 where a chart holds several masks: each
  // category then has the mask under it): a list that holds more is split by mask,
  // then by heads, then into runs of 16, each chart's title saying which part it is.
  // Decided once per dtype and head_dim from every case of the view (the shown
  // pass) whatever its status, so that the time, speed-up and energy charts of a
  // group are drawn alike.
  const sweepLengths = 3, sweepFamilies = 4, shapesPerChart = 16, shapesPerChartWithMasks = 10;
  const family = (c) => mask(c) + " " + layout(c);
  // A family as its chart's title names it: batch x heads/kv_heads, the query length ("q=k" for square shapes).
  const familyName = (c) => `${c.batch}x${c.heads}${c.kv_heads !== c.heads ? "/" + c.kv_heads : ""} ${c.seq_len_q !== c.seq_len_kv ? "q=" + c.seq_len_q : "q=k"}${storage(c)}`;
  const headsOf = (c) => `${c.heads}${c.kv_heads !== c.heads ? "/" + c.kv_heads : ""} heads`;
  // group -> { mode: "sweep" | "list" | "split", sweeps: [family, ...] in drawing order,
  //            parts: [{ suffix, has(case) }], the bar charts of the single shapes }
  let plans = new Map();
  const modeOf = (name) => (plans.get(name) || { mode: "sweep" }).mode;
  let shapeLists = new Set();  // the groups (groupOf) drawn as lists of shapes (bars only)
  let splitGroups = new Set();  // the groups drawn as a chart per sweep family (and bars for the rest)
  // A shape as a bar chart's category, whatever the chart shows (the mask always part of it).
  const shapeKey = (c) => `${c.batch}x${c.heads}/${c.kv_heads} q=${c.seq_len_q} k=${c.seq_len_kv}${storage(c)} ${mask(c)}`;
  // Splits cases into parts of `fits` size: by mask, then by heads, then into runs of categories.
  function barParts(selected) {
    const categories = (list) => [...new Set(list.map(shapeKey))];
    const fits = (list) => categories(list).length <= (new Set(list.map(mask)).size > 1 ? shapesPerChartWithMasks : shapesPerChart);
    const by = (part, key, words) => {
      const values = [...new Set(part.cases.map(key))];
      if (values.length === 1) return [part];  // nothing to split: the title says nothing new
      return values.map((value) => ({ suffix: part.suffix + ", " + words(value), cases: part.cases.filter((c) => key(c) === value) }));
    };
    let parts = [{ suffix: "", cases: selected }];
    for (const [key, words] of [[mask, (m) => m], [headsOf, (h) => h]]) {
      parts = parts.flatMap((part) => (fits(part.cases) ? [part] : by(part, key, words)));
    }
    parts = parts.flatMap((part) => {
      const all = categories(part.cases);
      if (all.length <= shapesPerChart) return [part];
      const runs = [];
      for (let i = 0; i < all.length; i += shapesPerChart) {
        const run = new Set(all.slice(i, i + shapesPerChart));
        runs.push({ suffix: `${part.suffix}, shapes ${i + 1}-${i + run.size} of ${all.length}`,
                    cases: part.cases.filter((c) => run.has(shapeKey(c))) });
      }
      return runs;
    });
    return parts.map((part) => {
      const keys = new Set(part.cases.map(shapeKey));
      return { suffix: part.suffix, has: (c) => keys.has(shapeKey(c)) };
    });
  }
  function classify(selected) {
    const byGroup = new Map();  // group -> family -> its cases
    for (const c of selected) {
      const key = groupOf(c), name = family(c);
      if (!byGroup.has(key)) byGroup.set(key, new Map());
      const group = byGroup.get(key);
      if (!group.has(name)) group.set(name, []);
      group.get(name).push(c);
    }
    const result = new Map();
    for (const [key, group] of byGroup) {
      const isSweep = (list) => new Set(list.map((c) => c.seq_len_kv)).size >= sweepLengths;
      const sweeps = [...group.entries()].filter(([, list]) => isSweep(list));
      // One family of one key length is a single shape: bars, as the single shapes of other
      // groups are (a line of one point shows nothing against the keys).
      const singleShape = group.size === 1 && new Set([...group.values()][0].map((c) => c.seq_len_kv)).size === 1;
      if (!singleShape && (group.size === 1 || (sweeps.length === group.size && group.size <= sweepFamilies))) {
        result.set(key, { mode: "sweep", sweeps: [], parts: [] });
        continue;
      }
      // Sweep families in order of mask (as the plan first has them), then batch, heads, kv_heads and query length.
      const masks = [...new Set(selected.filter((c) => groupOf(c) === key).map(mask))];
      const order = (list) => [masks.indexOf(mask(list[0])), list[0].batch, list[0].heads, list[0].kv_heads, list[0].seq_len_q];
      sweeps.sort((x, y) => {
        const a = order(x[1]), b = order(y[1]);
        for (let i = 0; i < a.length; ++i) if (a[i] !== b[i]) return a[i] - b[i];
        return 0;
      });
      const singles = [...group.entries()].filter(([, list]) => !isSweep(list)).flatMap(([, list]) => list);
      result.set(key, { mode: sweeps.length ? "split" : "list", sweeps: sweeps.map(([name]) => name),
                        parts: singles.length ? barParts(singles) : [], shapes: new Set(singles.map(shapeKey)).size });
    }
    return result;
  }
  // The bar charts of a group, as [title, cases]: for a list all its cases, for a
  // split group its single shapes; one chart per part (see barParts). `title(what)`
  // is the chart's title: "<group>: <what>", or for a part two lines, "<group>, <part>"
  // and what it shows (one line would not fit half a row).
  function barCharts(name, group) {
    const plan = plans.get(name);
    if (!plan || plan.mode === "sweep") return [];
    const head = name + (plan.mode === "split" ? ", single shapes" : "");
    return plan.parts.map((part) => [(what) => (part.suffix ? [head + part.suffix, what] : `${head}: ${what}`), group.filter(part.has)])
      .filter(([, cases]) => cases.length);
  }
  // The line charts of a split group's sweep families, small, three to a row, under a
  // heading: `draw(box, title, cases)` draws one family's. A family's title has two
  // lines: the group and the family's batch x heads and query length; its mask.
  function familyCharts(container, name, group, heading, draw) {
    const plan = plans.get(name);
    if (!plan || plan.mode !== "split") return;
    let box = null;
    for (const f of plan.sweeps) {
      const cases = group.filter((c) => family(c) === f);
      if (!cases.length) continue;
      if (!box) {
        box = el("div", { class: "charts families" });
        container.append(el("div", { class: "family-set" }, el("h3", {}, heading), box));
      }
      draw(box, [`${name}, ${familyName(cases[0])}`, mask(cases[0])], cases);
    }
  }
  // A shape as a category: batch x heads[/kv_heads] q=<queries> k=<keys>, and the
  // mask where the chart holds several; one line each part under the bars (a
  // mask's window on a line of its own).
  const shapeParts = (c, masks) => [`${c.batch}x${c.heads}${c.kv_heads !== c.heads ? "/" + c.kv_heads : ""}`, c.varlen || `q=${c.seq_len_q} k=${c.seq_len_kv}`]
    .concat(c.page_size ? [`paged${c.page_size}`] : []).concat(masks ? mask(c).split(" ") : []);
  // A shape-list chart's data: a category per shape (in plan order), a dataset of bars per variant.
  function bars(group, value) {
    const masks = new Set(group.map(mask)).size > 1;
    const kept = group.filter((c) => { const y = value(c); return y !== null && y !== undefined && y > 0; });
    const category = (c) => shapeParts(c, masks).join(" ");
    const labels = [...new Set(kept.map(category))];
    const lines = labels.map((text) => shapeParts(kept.find((c) => category(c) === text), masks));
    const datasets = variants.filter((v) => kept.some((c) => c.variant === v)).map((v) => {
      const at = new Map(kept.filter((c) => c.variant === v).map((c) => [category(c), c]));
      const chosen = v === "sdpa_auto";  // whichever backend PyTorch chose: a lighter bar beside that backend's
      return { label: v, data: labels.map((l) => (at.has(l) ? value(at.get(l)) : null)),
               cases: labels.map((l) => (at.has(l) ? at.get(l).index : null)),
               backgroundColor: chosen ? colorOf(v) + "66" : colorOf(v), borderColor: colorOf(v), borderWidth: chosen ? 1.5 : 0 };
    });
    return { labels: labels, lines: lines, datasets: datasets, masks: masks };
  }
  // A dashed line across a bar chart at 1x: as fast as the reference.
  const parityLine = {
    id: "parity",
    afterDatasetsDraw(chart) {
      const area = chart.chartArea, y = chart.scales.y.getPixelForValue(1);
      if (!(y >= area.top && y <= area.bottom)) return;
      const ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = "#888";
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(area.left, y);
      ctx.lineTo(area.right, y);
      ctx.stroke();
      ctx.restore();
    },
  };
  // A bar chart's category under its bars: its parts one a line where the widest fits the
  // category's width, else on one line, which Chart.js then turns (up to upright) until
  // neighbours no longer overlap: long labels (a variable-length batch, a window) ran
  // into each other. Called with the scale as `this`, its width the chart's at the time.
  const shapeTick = (built) => function (value, i) {
    const lines = built.lines[i];
    const font = Chart.helpers.toFont(this.options.ticks.font);
    this.ctx.save();
    this.ctx.font = font.string;
    const widest = Math.max(...built.lines.flat().map((line) => this.ctx.measureText(line).width));
    this.ctx.restore();
    return widest + 6 <= this.width / built.labels.length ? lines : lines.join(" ");
  };
  // A bar chart of a shape list: log y axis where its values span more than 20x,
  // the tooltip's words from `describe(case, value)`; `parity` adds the 1x line. It
  // takes the whole row past 24 bars or 8 shapes (4 when the categories carry the mask).
  function addShapeChart(container, kind, title, built, yTitle, describe, parity) {
    if (!built.labels.length) return null;  // no case of the group has this value
    const values = built.datasets.flatMap((d) => d.data).filter((v) => v !== null).concat(parity ? [1] : []);
    const low = Math.min(...values), high = Math.max(...values);
    const log = high / low > 20;
    const y = Object.assign(axis(yTitle, log), log ? { min: low / 1.5, max: high * 1.5 } : { beginAtZero: true });
    return addChart(container, kind, title, {
      type: "bar", data: { labels: built.labels, datasets: built.datasets },
      options: { scales: { x: { ticks: { autoSkip: false, minRotation: 0, maxRotation: 90, callback: shapeTick(built) }, grid: { display: false } },
                           y: y },
                 plugins: { tooltip: { callbacks: { label(context) {
                   const c = cases[context.dataset.cases[context.dataIndex]];
                   return describe(c, context.raw);
                 } } } } },
      plugins: parity ? [parityLine] : [],
    }, built.labels.length * built.datasets.length > 24 || built.labels.length > (built.masks ? 4 : 8));
  }
  // Tokens per second: the queries of the batch (batch x seq_len_q) over the median time.
  const tokens = (c) => (c.tokens !== undefined ? c.tokens : c.batch * c.seq_len_q);  // a variable-length batch's sum
  const tokensPerSecond = (c) => tokens(c) / (c.time_us * 1e-6);
  const perToken = (c) => `${Number(c.time_us / tokens(c)).toPrecision(3)} µs per token`;
  const count3 = (v) => (v >= 1e9 ? (v / 1e9).toPrecision(3) + "G" : v >= 1e6 ? (v / 1e6).toPrecision(3) + "M" : v >= 1e3 ? (v / 1e3).toPrecision(3) + "k" : Number(v).toPrecision(3));
  const caseTooltip = (unit, digits) => ({
    callbacks: {
      label(context) {
        const c = cases[context.raw.index];
        return `${label(c)}: ${Number(context.raw.y).toFixed(digits)}${unit}`;
      },
    },
  });

  // ---- header and environment -------------------------------------------------
  function renderHeader() {
    const run = data.run;
    document.title = `attnsweep: ${run.name} (run ${run.run_id})`;
    const ok = cases.filter((c) => c.status === "ok").length;
    const unsupported = cases.filter((c) => c.status === "unsupported").length;
    const bad = cases.filter(failed).length;
    document.getElementById("header").append(
      el("h1", {}, `${run.name}: run ${run.run_id}`),
      el("div", { class: "subtitle" },
         `${run.device_name || run.device} · ${run.status} · started ${run.started_at}` +
         (run.finished_at ? `, finished ${run.finished_at}` : "") + ` · ${data.meta.db}`),
      el("div", { class: "counts" },
         el("span", {}, `${cases.length} of ${run.planned_cases} cases`),
         el("span", { class: "count-ok" }, `${ok} ok`),
         el("span", { class: "count-unsupported" }, `${unsupported} unsupported`),
         el("span", { class: "count-failed" }, `${bad} failed`)));
  }

  // The pass selector, in the bar that stays on screen; only for runs of several passes.
  function renderPassSelector() {
    if (!severalPasses) return;
    const buttons = passes.map((p) => el("button", { type: "button", "data-pass": p, onclick: () => selectPass(p),
                                                     title: `show the ${p} cases only` }, p));
    const selector = el("span", { class: "pass-selector", id: "pass-selector", role: "group", "aria-label": "pass" },
                        el("span", { class: "pass-label" }, "pass:"), buttons);
    document.querySelector("nav").append(selector);
    markSelected();
  }
  function markSelected() {
    for (const button of document.querySelectorAll("#pass-selector button")) {
      const on = button.getAttribute("data-pass") === pass;
      button.className = on ? "selected" : "";
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  function renderEnvironment() {
    const section = document.getElementById("environment");
    const half = Math.ceil(data.environment.length / 2);
    const columns = el("div", { class: "env-columns" });
    for (const part of [data.environment.slice(0, half), data.environment.slice(half)]) {
      columns.append(el("table", { class: "env" }, el("tbody", {}, part.map(([key, value]) => el("tr", {}, el("td", {}, key), el("td", {}, value))))));
    }
    section.append(columns);
  }

  // ---- the study's table ------------------------------------------------------
  const allColumns = [
    { name: "variant", value: (c) => c.variant },
    { name: "shape", value: (c) => c.shape, sort: (c) => c.batch * 1e12 + c.heads * 1e9 + c.seq_len_kv * 1e3 + c.head_dim },
    { name: "dtype", value: (c) => c.dtype },
    { name: "mask", value: mask },
  ];
  if (severalPasses) allColumns.push({ name: "pass", value: (c) => c.pass });
  allColumns.push(
    { name: "kernels", num: true, value: (c) => count(c, c.kernels) },
    { name: "memcpy", num: true, value: (c) => count(c, c.memcpy) },
    { name: "memset", num: true, value: (c) => count(c, c.memset) },
    { name: onGpu ? "GPU time (µs)" : "CPU time (µs)", num: true, value: (c) => fixed(c.time_us, 1), sort: (c) => c.time_us },
    { name: "CPU dispatch (µs)", num: true, value: (c) => fixed(c.dispatch_us, 1), sort: (c) => c.dispatch_us },
    { name: "TFLOP/s", num: true, value: (c) => fixed(c.tflops, c.tflops < 10 ? 2 : 1), sort: (c) => c.tflops },
    { name: "of ceiling", num: true, value: (c) => pct(c.tflops_share), sort: (c) => c.tflops_share },
    // The energy window (docs/measurement.md, "Energy"): each case's joules and TFLOP per joule; the power in the tooltip.
    { name: "energy (J)", num: true, value: (c) => joules(c.energy_j), sort: (c) => c.energy_j,
      title: (c) => (c.energy_power_w ? `average power ${c.energy_power_w.toFixed(0)} W` : "") },
    { name: "TFLOP/J", num: true, value: (c) => joules(c.tflop_per_joule), sort: (c) => c.tflop_per_joule },
    { name: "rel. error", num: true, value: (c) => sci(c.rel_error), sort: (c) => c.rel_error },
    // Backward passes: the worst of dq, dk and dv against float64 autograd (each in the tooltip).
    { name: "grad error", num: true, value: (c) => sci(c.grad_rel_error), sort: (c) => c.grad_rel_error,
      title: (c) => (c.grad_rel_errors || []).some((e) => e !== null)
        ? "dq " + sci(c.grad_rel_errors[0]) + ", dk " + sci(c.grad_rel_errors[1]) + ", dv " + sci(c.grad_rel_errors[2]) : "" },
    { name: "numerics", value: (c) => c.numerics || "", cls: (c) => "numerics-" + (c.numerics || "") },
    // ok, or suspect with its reasons' codes; the reasons in full in the tooltip (docs/measurement.md, "Validity").
    { name: "validity", value: (c) => c.validity ? (c.validity === "suspect" ? "suspect: " + validityCodes(c) : c.validity) : "",
      cls: (c) => "validity-" + (c.validity || ""), title: (c) => c.validity_reasons || "" },
    { name: "backward backend", value: (c) => c.backend_backward || "" },
    { name: "vs naive", num: true, value: (c) => times(c.vs_naive), sort: (c) => c.vs_naive });
  if (data.compare) {
    allColumns.push({ name: "vs previous", num: true, value: (c) => times(c.vs_previous), sort: (c) => c.vs_previous });
    allColumns.push({ name: "verdict", value: (c) => c.verdict || "", cls: (c) => "verdict-" + (c.verdict || "") });
  }
  allColumns.push({ name: "trace", value: traceCell, sort: (c) => (c.trace ? 1 : 0) });
  // Columns none of the shown cases has a value for (kernel counts and ceilings
  // on a CPU run, gradient errors of a forward) are left out.
  const empty = (v) => v === "" || v === null || (Array.isArray(v) && !v.length);
  const columnsOf = (shown) => allColumns.filter((column) => !shown.every((c) => empty(column.value(c))));
  function validityCodes(c) {
    return (c.validity_reasons || "").split("; ").map((reason) => reason.split(":")[0]).join(", ");
  }
  function count(c, n) {
    if (n === null || n === undefined) return "";
    return c.consistent === false ? `${n}?` : String(n);
  }
  // The trace's path as a relative URL, each name encoded whole: a '#' or '?'
  // in it stays part of the name, and a ':' cannot make it a scheme ("javascript:").
  function traceHref(c) { return c.trace.split("/").map(encodeURIComponent).join("/"); }
  function traceCell(c) {
    if (!c.trace) return "";
    if (!c.trace_exists) return el("span", { class: "empty", title: c.trace }, "missing");
    const links = [el("a", { class: "trace", href: traceHref(c), onclick: (e) => e.stopPropagation(),
                             title: "the Chrome trace file (JSON)" }, "file")];
    if (data.meta.trace_url_base) {
      const url = data.meta.trace_url_base + "/" + traceHref(c);
      links.push(el("a", { class: "trace", target: "_blank", rel: "noopener", onclick: (e) => e.stopPropagation(),
                           href: "https://ui.perfetto.dev/#!/?url=" + encodeURIComponent(url) }, "Perfetto"));
    } else {
      links.push(el("button", { class: "perfetto", onclick: (e) => { e.stopPropagation(); openInPerfetto(c); },
                                title: location.protocol.startsWith("http") ? "open this trace in ui.perfetto.dev"
                                  : "serve this folder over http (python3 -m http.server) to open traces in Perfetto " +
                                    "from here, or drop the file onto ui.perfetto.dev" }, "Perfetto"));
    }
    return links;
  }
  // Perfetto's documented way to open a trace it cannot fetch: postMessage the
  // bytes once its page answers PING with PONG. Needs the report served over http(s).
  async function openInPerfetto(c) {
    if (!location.protocol.startsWith("http")) {
      alert("A page opened from a file cannot read other files. Serve this folder (python3 -m http.server) and open " +
            "the report from there, or open https://ui.perfetto.dev and drop " + c.trace + " onto it.");
      return;
    }
    const buffer = await (await fetch(traceHref(c))).arrayBuffer();
    const perfetto = window.open("https://ui.perfetto.dev/#!/");
    const ping = setInterval(() => perfetto.postMessage("PING", "https://ui.perfetto.dev"), 100);
    window.addEventListener("message", function pong(event) {
      if (event.data !== "PONG") return;
      clearInterval(ping);
      window.removeEventListener("message", pong);
      perfetto.postMessage({ perfetto: { buffer: buffer, title: label(c), fileName: c.trace.split("/").pop() } },
                           "https://ui.perfetto.dev");
    });
  }

  function kernelDetail(c) {
    if (!c.kernel_rows.length) return el("div", { class: "empty" }, c.status === "ok" ? "no kernel rows stored (a CPU run records none)" : c.error || c.status);
    // The hardware counters' columns only where the run read them (measure.counters, issue 39).
    const counted = c.kernel_rows.some((k) => ["dram_read_bytes", "dram_write_bytes", "l2_hit_rate", "sm_throughput", "tensor_pipe"]
      .some((key) => k[key] !== null && k[key] !== undefined));
    const head = ["kind", "name", "per " + per(), "total (µs)", "mean (µs)", "grid", "block", "registers", "shared mem (B)", "blocks/SM", "warps/SM", "occupancy"]
      .concat(counted ? ["DRAM read (MB)", "DRAM written (MB)", "L2 hits", "SM busy", "tensor pipe"] : []);
    const mb = (bytes) => (bytes === null || bytes === undefined ? "" : (bytes / 1e6).toFixed(2));
    const table = el("table", {},
      el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { class: i >= 2 && i !== 5 && i !== 6 ? "num" : "" }, h)))),
      el("tbody", {}, c.kernel_rows.map((k) => el("tr", {},
        el("td", {}, k.kind), el("td", { class: "name" }, k.name), el("td", { class: "num" }, fixed(k.launches, 0)),
        el("td", { class: "num" }, fixed(k.total_us, 1)), el("td", { class: "num" }, fixed(k.mean_us, 1)),
        el("td", {}, k.grid || ""), el("td", {}, k.block || ""), el("td", { class: "num" }, k.registers ?? ""),
        el("td", { class: "num" }, k.shared_memory ?? ""), el("td", { class: "num" }, fixed(k.blocks_per_sm, 1)),
        el("td", { class: "num" }, fixed(k.warps_per_sm, 1)),
        el("td", { class: "num" }, k.occupancy === null || k.occupancy === undefined ? "" : fixed(k.occupancy, 0) + "%"),
        ...(counted ? [el("td", { class: "num" }, mb(k.dram_read_bytes)), el("td", { class: "num" }, mb(k.dram_write_bytes)),
                       el("td", { class: "num" }, pct(k.l2_hit_rate)), el("td", { class: "num" }, pct(k.sm_throughput)),
                       el("td", { class: "num" }, pct(k.tensor_pipe))] : [])))));
    if (!c.counters_why_not) return table;
    return el("div", {}, table, el("p", { class: "note" }, "Hardware counters not read: " + c.counters_why_not));
  }

  let filterWords = "";  // the table's filter, kept when another pass is selected
  function renderTable() {
    const section = document.getElementById("results");
    for (const old of section.querySelectorAll(".filter, #results-table")) old.remove();
    const columns = columnsOf(view);
    const input = el("input", { type: "search", placeholder: "filter: e.g. flash, bf16, causal, 4096" });
    input.value = filterWords;
    const shown = el("span", { class: "shown" });
    section.append(el("div", { class: "filter" }, input, shown));
    const table = el("table", { id: "results-table" });
    const headRow = el("tr", {});
    table.append(el("thead", {}, headRow));
    const body = el("tbody", {});
    table.append(body);
    section.append(table);
    let order = view.map((c) => c.index);
    let sortedBy = null, ascending = true;
    const open = new Set();
    columns.forEach((column, i) => {
      headRow.append(el("th", { class: column.num ? "num" : "", onclick: () => {
        ascending = sortedBy === i ? !ascending : true;
        sortedBy = i;
        const key = column.sort || column.value;
        order.sort((a, b) => {
          const x = key(cases[a]), y = key(cases[b]);
          const missing = (v) => v === null || v === undefined || v === "";
          if (missing(x) || missing(y)) return missing(x) - missing(y);
          return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
        });
        [...headRow.children].forEach((th, j) => th.className = (columns[j].num ? "num " : "") +
          (j === sortedBy ? (ascending ? "sorted-up" : "sorted-down") : ""));
        draw();
      } }, column.name));
    });
    function draw() {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      body.replaceChildren();
      let count = 0;
      for (const index of order) {
        const c = cases[index];
        const text = `${label(c)} ${c.status} ${c.backend || ""}`.toLowerCase();
        if (!words.every((w) => text.includes(w))) continue;
        ++count;
        const row = el("tr", { class: "case-row status-" + (failed(c) ? "failed" : c.status), title: "click for the kernels of this case",
                               onclick: () => { open.has(index) ? open.delete(index) : open.add(index); draw(); } },
          columns.map((column) => {
            const cell = el("td", { class: (column.num ? "num " : "") + (column.cls ? column.cls(c) : "") }, column.value(c));
            if (column.title && column.title(c)) cell.title = column.title(c);
            return cell;
          }));
        body.append(row);
        if (open.has(index)) body.append(el("tr", { class: "kernel-detail" }, el("td", { colspan: columns.length }, kernelDetail(c))));
      }
      shown.textContent = `${count} of ${view.length} ${severalPasses ? pass + " " : ""}cases; click a row for its kernels, a header to sort`;
    }
    input.addEventListener("input", () => { filterWords = input.value; draw(); });
    draw();
  }

  // ---- charts -----------------------------------------------------------------
  let timed = [];  // the shown cases that were timed

  function renderTimeCharts() {
    const container = document.getElementById("time-charts");
    if (!timed.length) return container.append(el("p", { class: "empty" }, "no case was timed"));
    const clock = onGpu ? "GPU" : "CPU";
    const line = (box, kind, title, cases) => {
      const datasets = series(cases, (c) => c.time_us);
      addChart(box, kind, title, {
        type: "scatter", data: { datasets: datasets },
        options: { scales: { x: fitted(axis("sequence length (keys)", true), xs(datasets), true),
                             y: fitted(axis(`µs per ${per()} (median)`, true), ys(datasets), false) },
                   plugins: { tooltip: caseTooltip(" µs", 1) } },
      });
    };
    const tokenBars = (title, cases) =>
      addShapeChart(container, "tokens-shapes", title(`tokens per second, per shape`), bars(cases, tokensPerSecond),
                    "tokens/s (query tokens / time)",
                    (c, y) => `${c.variant}: ${count3(y)} tokens/s (${perToken(c)}; ${tokens(c)} tokens in ${Number(c.time_us).toFixed(1)} µs)`);
    const flopBars = (title, cases) =>
      addShapeChart(container, "tflops-shapes", title(`achieved TFLOP/s, per shape`), bars(cases, (c) => c.tflops), "TFLOP/s",
                    (c, y) => `${c.variant}: ${Number(y).toPrecision(3)} TFLOP/s` + (c.tflops_share ? ` (${pct(c.tflops_share)} of the ceiling)` : ""));
    for (const [name, group] of groups(timed)) {
      if (modeOf(name) === "sweep") line(container, "time", `${name}: ${clock} time per ${per()}`, group);
      familyCharts(container, name, group, `${name}: ${clock} time per ${per()} against the number of keys, a chart per length sweep`,
                   (box, title, cases) => line(box, "time-family", title, cases));
      for (const [title, cases] of barCharts(name, group)) {
        addShapeChart(container, "time-shapes", title(`${clock} time per ${per()}, per shape`), bars(cases, (c) => c.time_us),
                      `µs per ${per()} (median)`, (c, y) => `${c.variant}: ${Number(y).toFixed(1)} µs (${perToken(c)})`);
      }
      // A split group's single shapes: their throughput next, under the group's length sweeps.
      if (modeOf(name) === "split") {
        for (const [title, cases] of barCharts(name, group)) tokenBars(title, cases);
        for (const [title, cases] of barCharts(name, group)) flopBars(title, cases);
      }
    }
    // Lists of shapes: the throughput of each shape too, in tokens (what serving reads) and in FLOPs.
    const lists = groups(timed).filter(([name]) => modeOf(name) === "list").flatMap(([name, group]) => barCharts(name, group));
    for (const [title, cases] of lists) tokenBars(title, cases);
    for (const [title, cases] of lists) flopBars(title, cases);
  }

  function renderRoofline() {
    const container = document.getElementById("roofline-charts");
    const rated = timed.filter((c) => c.tflops > 0 && c.ai > 0);
    if (!rated.length) return container.append(el("p", { class: "empty" }, "no case has a FLOP rate"));
    const peak = data.ceilings.tflops, bandwidth = data.ceilings.gbps;
    const byDtype = new Map();
    for (const c of rated) { if (!byDtype.has(c.dtype)) byDtype.set(c.dtype, []); byDtype.get(c.dtype).push(c); }
    for (const [dtype, group] of [...byDtype.entries()].sort()) {
      const datasets = variants.filter((v) => group.some((c) => c.variant === v)).map((v) => ({
        label: v, data: group.filter((c) => c.variant === v).map((c) => ({ x: c.ai, y: c.tflops, index: c.index })),
        borderColor: colorOf(v), backgroundColor: colorOf(v) + "cc", pointRadius: 4,
      }));
      // Where the counters read the DRAM traffic (issue 39): the same case placed by the bytes it
      // moved, a hollow triangle left of its dot when it moved more than the minimum.
      for (const v of variants.filter((v) => group.some((c) => c.variant === v && c.ai_measured > 0))) {
        datasets.push({ label: `${v} (measured bytes)`, measured: true,
                        data: group.filter((c) => c.variant === v && c.ai_measured > 0).map((c) => ({ x: c.ai_measured, y: c.tflops, index: c.index })),
                        borderColor: colorOf(v), backgroundColor: "transparent", pointStyle: "triangle", pointRadius: 5 });
      }
      if (peak && bandwidth) {
        const xs = group.map((c) => c.ai).concat(group.filter((c) => c.ai_measured > 0).map((c) => c.ai_measured));
        const low = Math.min(...xs) / 2, high = Math.max(...xs) * 2, knee = (peak * 1e12) / (bandwidth * 1e9);
        const roof = [low, Math.min(Math.max(knee, low), high), high].map((x) => ({ x: x, y: Math.min(peak, (bandwidth * 1e9 * x) / 1e12) }));
        datasets.push({ label: `roof: ${peak.toFixed(0)} TFLOP/s bf16 matmul, ${bandwidth.toFixed(0)} GB/s copy`, data: roof,
                        showLine: true, pointRadius: 0, borderColor: "#444", borderDash: [4, 4], borderWidth: 1.5, roof: true });
      } else if (!document.querySelector(".no-roof")) {
        container.before(el("p", { class: "note no-roof" }, "No ceilings were measured for this run (they are measured on " +
                                  "CUDA devices only), so no roof is drawn."));
      }
      addChart(container, "roofline", `${dtype}: achieved TFLOP/s against arithmetic intensity`, {
        type: "scatter", data: { datasets: datasets },
        options: { scales: { x: fitted(axis("FLOP per byte (minimum traffic)", true), xs(datasets), false),
                             y: fitted(axis("TFLOP/s", true), ys(datasets), false) },
                   plugins: { tooltip: { filter: (item) => !item.dataset.roof, callbacks: { label(context) {
                     const c = cases[context.raw.index];
                     if (context.dataset.measured) {
                       return `${label(c)}: ${((c.dram_read_bytes + c.dram_write_bytes) / 1e6).toFixed(1)} MB through DRAM ` +
                              `(${(c.ai / c.ai_measured).toFixed(2)}x the minimum)`;
                     }
                     return `${label(c)}: ${c.tflops.toFixed(1)} TFLOP/s` + (c.tflops_share ? ` (${pct(c.tflops_share)} of the ceiling)` : "");
                   } } } } },
      });
    }
    // The best share of the ceiling each variant reached, per dtype.
    if (rated.some((c) => c.tflops_share > 0)) {
      const dtypes = [...byDtype.keys()].sort();
      const shades = ["#2f6fd6", "#d1495b", "#1f8a4c"];
      addChart(container, "ceiling-share", "best share of the measured bf16 matmul ceiling, per variant", {
        type: "bar",
        data: { labels: variants, datasets: dtypes.map((dtype, i) => ({
          label: dtype, backgroundColor: shades[i % shades.length],
          data: variants.map((v) => Math.max(0, ...rated.filter((c) => c.variant === v && c.dtype === dtype).map((c) => 100 * (c.tflops_share || 0)))),
        })) },
        options: { scales: { y: { title: { display: true, text: "% of the ceiling" }, beginAtZero: true } },
                   plugins: { tooltip: { callbacks: { label: (context) => `${context.dataset.label}: ${context.raw.toFixed(1)}%` } } } },
      });
    }
  }

  // Joules of each case against sequence length (one chart per dtype and head_dim, as
  // the time charts), and the median TFLOP per joule of each variant per dtype.
  // The section is there only when a case of the run has energy.
  function renderEnergy() {
    const container = document.getElementById("energy-charts");
    if (!container) return;
    const measured = timed.filter((c) => c.energy_j > 0);
    if (!measured.length) {
      return container.append(el("p", { class: "empty" }, severalPasses && pass === "backward"
        ? "backward cases have no energy: each needs an untimed forward the counter cannot tell apart"
        : `no ${severalPasses ? pass + " " : ""}case has its energy`));
    }
    const energyTooltip = { callbacks: { label(context) {
      const c = cases[context.raw.index];
      return `${label(c)}: ${joules(c.energy_j)} J` + (c.energy_power_w ? `, ${c.energy_power_w.toFixed(0)} W` : "") +
             (c.tflop_per_joule ? `, ${joules(c.tflop_per_joule)} TFLOP/J` : "");
    } } };
    const line = (box, kind, title, group) => {
      const datasets = series(group, (c) => c.energy_j);
      addChart(box, kind, title, {
        type: "scatter", data: { datasets: datasets },
        options: { scales: { x: fitted(axis("sequence length (keys)", true), xs(datasets), true),
                             y: fitted(axis(`joules per ${per()}`, true), ys(datasets), false) },
                   plugins: { tooltip: energyTooltip } },
      });
    };
    for (const [name, group] of groups(measured)) {
      if (modeOf(name) === "sweep") line(container, "energy", `${name}: energy per ${per()}`, group);
      familyCharts(container, name, group, `${name}: energy per ${per()} against the number of keys, a chart per length sweep`,
                   (box, title, cases) => line(box, "energy-family", title, cases));
      for (const [title, cases] of barCharts(name, group)) {
        addShapeChart(container, "energy-shapes", title(`energy per ${per()}, per shape`), bars(cases, (c) => c.energy_j),
                      `joules per ${per()}`, (c, y) => `${c.variant}: ${joules(y)} J` + (c.energy_power_w ? `, ${c.energy_power_w.toFixed(0)} W` : "") +
                                                      (c.tflop_per_joule ? `, ${joules(c.tflop_per_joule)} TFLOP/J` : ""));
      }
    }
    const rated = measured.filter((c) => c.tflop_per_joule > 0);
    if (!rated.length) return;
    const dtypes = [...new Set(rated.map((c) => c.dtype))].sort();
    const shown = variants.filter((v) => rated.some((c) => c.variant === v));
    const shades = ["#2f6fd6", "#d1495b", "#1f8a4c"];
    const median = (values) => { const s = [...values].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
    addChart(container, "tflop-per-joule", `TFLOP per joule (median over the variant's cases)`, {
      type: "bar",
      data: { labels: shown, datasets: dtypes.map((dtype, i) => ({
        label: dtype, backgroundColor: shades[i % shades.length],
        data: shown.map((v) => {
          const values = rated.filter((c) => c.variant === v && c.dtype === dtype).map((c) => c.tflop_per_joule);
          return values.length ? median(values) : null;
        }),
      })) },
      options: { scales: { y: { title: { display: true, text: "TFLOP per joule" }, beginAtZero: true } },
                 plugins: { tooltip: { callbacks: { label: (context) => `${context.dataset.label}: ${joules(context.raw)} TFLOP/J` } } } },
    });
  }

  function renderKernelCounts() {
    const container = document.getElementById("kernel-charts");
    const counted = view.filter((c) => c.status === "ok" && c.kernels !== null && c.kernels !== undefined);
    if (!counted.length) return container.append(el("p", { class: "empty" }, onGpu ? "no case was profiled" : "kernel counts exist on CUDA runs only"));
    const shown = variants.filter((v) => counted.some((c) => c.variant === v));
    const median = (values) => { const s = [...values].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
    const stats = (v, field) => counted.filter((c) => c.variant === v).map((c) => c[field]);
    addChart(container, "kernels", `launches per ${per()} (median over the variant's cases)`, {
      type: "bar",
      data: { labels: shown, datasets: [["kernels", "#2f6fd6"], ["memcpy", "#edae49"], ["memset", "#d1495b"]].map(([field, color]) => ({
        label: field, backgroundColor: color, data: shown.map((v) => median(stats(v, field))), field: field })) },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "launches per " + per() } } },
                 plugins: { tooltip: { callbacks: { label(context) {
                   const values = stats(shown[context.dataIndex], context.dataset.field);
                   return `${context.dataset.label}: ${context.raw} (cases range ${Math.min(...values)} to ${Math.max(...values)})`;
                 } } } } },
    });
  }

  // A dashed line at 1x across the chart: where a variant is as fast as its reference.
  const parity = (x, text) => ({ label: text, data: [{ x: Math.min(...x) / 1.25, y: 1 }, { x: Math.max(...x) * 1.25, y: 1 }],
                                 showLine: true, pointRadius: 0, borderColor: "#888", borderDash: [3, 3], borderWidth: 1,
                                 reference: true });

  // A sweep family's speed-up chart keeps its legend to the variants: the dashed 1x line is named on its axis.
  const familyLegend = (kind) => (!kind.endsWith("-family") ? {} : {
    legend: { position: "bottom", labels: { boxWidth: 14, filter: (item, chart) => !chart.datasets[item.datasetIndex].reference } } });
  function renderSpeedups() {
    const container = document.getElementById("speedup-charts");
    const faster = timed.filter((c) => c.vs_naive > 0 && c.variant !== "naive");
    if (!faster.length) container.append(el("p", { class: "empty" }, `no case has a naive case of the same shape, dtype${severalPasses ? ", mask and pass" : " and mask"} to compare with`));
    const naiveLine = (box, kind, title, group) => {
      const datasets = series(group, (c) => c.vs_naive);
      const x = xs(datasets), y = ys(datasets).concat([1]);
      datasets.push(parity(x, "1x: as fast as naive"));
      addChart(box, kind, title, {
        type: "scatter", data: { datasets: datasets },
        options: { scales: { x: fitted(axis("sequence length (keys)", true), x, true),
                             y: fitted(axis("naive time / variant time" + (kind.endsWith("-family") ? " (dashed: 1x)" : ""), true), y, false) },
                   plugins: Object.assign({ tooltip: Object.assign(caseTooltip("x", 2), { filter: (item) => !item.dataset.reference }) },
                                          familyLegend(kind)) },
      });
    };
    for (const [name, group] of groups(faster)) {
      if (modeOf(name) === "sweep") naiveLine(container, "speedup-naive", `${name}: speed-up over naive`, group);
      familyCharts(container, name, group, `${name}: speed-up over naive against the number of keys, a chart per length sweep`,
                   (box, title, cases) => naiveLine(box, "speedup-naive-family", title, cases));
      for (const [title, cases] of barCharts(name, group)) {
        addShapeChart(container, "speedup-naive-shapes", title(`speed-up over naive, per shape`), bars(cases, (c) => c.vs_naive),
                      "naive time / variant time (dashed: 1x)", (c, y) => `${c.variant}: ${Number(y).toFixed(2)}x`, true);
      }
    }
    if (!data.compare) return;
    const previous = timed.filter((c) => c.vs_previous > 0);
    const heading = el("h3", { id: "previous-heading" }, `Over the previous run (run ${data.compare.baseline.run_id} of ${data.compare.baseline.path})`);
    container.after(heading);
    const again = el("div", { class: "charts", id: "previous-charts" });
    heading.after(again);
    if (!previous.length) again.append(el("p", { class: "empty" }, "no case was timed in both runs"));
    const previousLine = (box, kind, title, group) => {
      const datasets = series(group, (c) => c.vs_previous);
      const x = xs(datasets), y = ys(datasets).concat([1]);
      datasets.push(parity(x, "1x: as fast as before"));
      addChart(box, kind, title, {
        type: "scatter", data: { datasets: datasets },
        options: { scales: { x: fitted(axis("sequence length (keys)", true), x, true),
                             y: fitted(axis("> 1: faster than before" + (kind.endsWith("-family") ? " (dashed: 1x)" : ""), true), y, false) },
                   plugins: { tooltip: { filter: (item) => !item.dataset.reference, callbacks: { label(context) {
                     const c = cases[context.raw.index];
                     return `${label(c)}: ${context.raw.y.toFixed(3)}x, ${c.verdict}`;
                   } } }, ...familyLegend(kind) } },
      });
    };
    for (const [name, group] of groups(previous)) {
      if (modeOf(name) === "sweep") previousLine(again, "speedup-previous", `${name}: previous time / this time`, group);
      familyCharts(again, name, group, `${name}: previous time / this time against the number of keys, a chart per length sweep`,
                   (box, title, cases) => previousLine(box, "speedup-previous-family", title, cases));
      for (const [title, cases] of barCharts(name, group)) {
        addShapeChart(again, "speedup-previous-shapes", title(`previous time / this time, per shape`), bars(cases, (c) => c.vs_previous),
                      "> 1: faster than before (dashed: 1x)", (c, y) => `${c.variant}: ${Number(y).toFixed(3)}x, ${c.verdict}`, true);
      }
    }
  }

  function renderComparison() {
    const section = document.getElementById("comparison");
    if (!data.compare) return section && section.remove();  // gone after the first drawing
    while (section.children.length > 1) section.lastChild.remove();  // all but the heading
    const c = data.compare;
    section.append(el("p", {}, `Against run ${c.baseline.run_id} (${c.baseline.name}, ${c.baseline.started_at}) of ${c.baseline.path}: ` +
      `${c.regressions} regressions, ${c.improvements} improvements, ${c.same} cases the same; verdicts: ` +
      Object.entries(c.verdicts).map(([k, v]) => `${v} ${k}`).join(", ") + ". docs/compare.md explains the rules."));
    for (const warning of c.warnings) section.append(el("p", { class: "note verdict-SLOWER" }, warning));
    if (c.environment.length) {
      section.append(el("h3", {}, "Environment differences"));
      section.append(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "fact"), el("th", {}, "previous"), el("th", {}, "this run"))),
        el("tbody", {}, c.environment.map((d) => el("tr", {}, el("td", {}, d.fact), el("td", {}, d.baseline), el("td", {}, d.candidate))))));
    }
    // Regressions and improvements in full; notes (AMBIGUOUS times, marked verdicts) folded away.
    const findingsTable = (wanted) => el("table", {},
      el("thead", {}, el("tr", {}, ["case", "check", "severity", "previous", "this run", "detail"].map((h) => el("th", {}, h)))),
      el("tbody", {}, view.flatMap((x) => (x.findings || []).filter((f) => wanted(f.severity)).map((f) => el("tr", {},
        el("td", {}, label(x)), el("td", {}, f.check),
        el("td", { class: f.severity === "regression" ? "verdict-SLOWER" : f.severity === "improvement" ? "verdict-FASTER" : "" }, f.severity),
        el("td", {}, f.baseline), el("td", {}, f.candidate), el("td", {}, f.detail))))));
    const counted = (severity) => severity !== "info";
    if (view.some((x) => (x.findings || []).some((f) => counted(f.severity)))) {
      section.append(el("h3", {}, "Regressions and improvements"), findingsTable(counted));
    }
    const notes = view.reduce((n, x) => n + (x.findings || []).filter((f) => !counted(f.severity)).length, 0);
    if (notes) {
      section.append(el("details", {}, el("summary", {}, `${notes} notes (not counted: ambiguous times, verdicts marked by a power-cap difference, energy changes)`),
                        findingsTable((severity) => !counted(severity))));
    }
    for (const [title, list] of [["Only in the previous run", c.only_in_baseline], ["Only in this run", c.only_in_candidate]]) {
      if (list.length) section.append(el("p", { class: "note" }, `${title}: ${list.join("; ")}`));
    }
  }

  function renderFailures() {
    const section = document.getElementById("failures");
    while (section.children.length > 1) section.lastChild.remove();  // all but the heading
    const listed = view.filter((c) => c.status !== "ok");
    const notStored = data.run.planned_cases - cases.length;
    if (notStored > 0) {
      section.append(el("p", { class: "note" }, `${notStored} of the ${data.run.planned_cases} planned cases are not in ` +
                        `the database (the run is ${data.run.status}).`));
    }
    if (!listed.length) {
      const none = notStored > 0 ? "no stored case failed" : severalPasses ? `every ${pass} case ran` : "every case ran";
      return section.append(el("p", { class: "empty" }, none));
    }
    const head = ["variant", "shape", "dtype", "mask"].concat(severalPasses ? ["pass"] : [], ["status", "reason"]);
    section.append(el("table", {},
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, listed.map((c) => el("tr", { class: failed(c) ? "status-failed" : "" }, el("td", {}, c.variant), el("td", {}, c.shape),
        el("td", {}, c.dtype), el("td", {}, mask(c)), severalPasses ? el("td", {}, c.pass) : null, el("td", {}, c.status),
        el("td", {}, c.error || ""))))));
  }

  function renderFooter() {
    document.getElementById("footer").append(
      `Written by attnsweep ${data.meta.version} on ${data.meta.generated_at} from ${data.meta.db} (run ${data.run.run_id}). ` +
      `Charts: Chart.js ${Chart.version}, embedded. Query the database for more: attnsweep query ${data.meta.db} "SELECT * FROM results WHERE run_id = ${data.run.run_id}".`);
  }

  // The time section's heading and notes as the page has them (a length sweep's),
  // for lists of shapes (all the view's groups, or some) and for split groups.
  const timeSection = document.getElementById("charts-time");
  const timeHeading = timeSection.querySelector("h2"), sweepHeading = timeHeading.textContent;
  const sweepNote = timeSection.querySelector("p.note"), shapeNote = el("p", { class: "note", id: "shape-note" });
  const familyNote = el("p", { class: "note", id: "family-note" });
  sweepNote.after(shapeNote);
  shapeNote.after(familyNote);
  function nameTimeSection() {
    const names = groups(view).map(([name]) => name);
    const lists = names.filter((name) => shapeLists.has(name));
    const splits = names.filter((name) => splitGroups.has(name));
    const withBars = lists.length + splits.filter((name) => plans.get(name).parts.length).length;
    timeHeading.textContent = !withBars ? sweepHeading
      : lists.length === names.length ? "Time and throughput per shape" : sweepHeading + ", and per shape";
    sweepNote.hidden = names.length > 0 && names.every((name) => modeOf(name) !== "sweep");
    shapeNote.hidden = !lists.length;
    shapeNote.textContent = !lists.length ? "" :
      (lists.length === names.length ? "The cases are" : lists.join("; ") + ": the cases are") +
      " a list of shapes, not a sweep of sequence lengths (docs/report.md, \"Length sweeps and lists of shapes\"): " +
      "per dtype and head_dim, a group of bars per shape (batch x heads/kv_heads, q = queries, k = keys), a bar per " +
      "variant, for the median time, tokens per second (query tokens, batch x queries or a variable-length batch's sum, over the median time; µs per token in the tooltip) " +
      "and achieved TFLOP/s; log scales where the values span more than 20x.";
    familyNote.hidden = !splits.length;
    familyNote.textContent = !splits.length ? "" :
      splits.map((name) => `${name}: ${plans.get(name).sweeps.length} length sweeps` +
                           (plans.get(name).shapes ? ` and ${plans.get(name).shapes} single shapes` : "")).join("; ") +
      " (docs/report.md, \"Length sweeps and lists of shapes\"). A length sweep is a family of cases (one mask, one " +
      "batch x heads/kv_heads, one query length) with 3 or more key lengths; each is drawn as a chart of its own, " +
      "titled with its batch x heads, query length (q) and mask, a line per variant against the number of keys, log " +
      "scales (sdpa_auto as open rings over the backend it chose). The single shapes, those of fewer key lengths, are " +
      "drawn as bars, as a list of shapes is: the median time, tokens per second and achieved TFLOP/s.";
  }

  // Everything that shows cases, for the selected pass: drawn again from scratch on a change.
  function renderView() {
    for (const { chart } of charts) chart.destroy();
    charts.length = 0;
    for (const id of ["time-charts", "speedup-charts", "roofline-charts", "energy-charts", "kernel-charts"]) {
      const container = document.getElementById(id);
      if (container) container.replaceChildren();  // energy-charts: only in a run with energy
    }
    for (const old of document.querySelectorAll("#previous-heading, #previous-charts, .no-roof")) old.remove();
    timed = view.filter((c) => c.status === "ok" && c.time_us > 0);
    plans = classify(view);
    const modes = (mode) => new Set([...plans.entries()].filter(([, plan]) => plan.mode === mode).map(([name]) => name));
    shapeLists = modes("list");
    splitGroups = modes("split");
    nameTimeSection();
    renderTable();
    renderTimeCharts();
    renderRoofline();
    renderEnergy();
    renderKernelCounts();
    renderSpeedups();
    renderComparison();
    renderFailures();
  }
  function selectPass(chosen) {
    if (!passes.includes(chosen)) return false;
    pass = chosen;
    view = severalPasses ? cases.filter((c) => c.pass === pass) : cases;
    markSelected();
    renderView();
    return true;
  }

  renderHeader();
  renderPassSelector();
  renderEnvironment();
  renderView();
  renderFooter();
  document.body.setAttribute("data-rendered", "yes");
})();
