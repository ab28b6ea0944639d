// The history page's figures and filters, drawn from the page's own data (no network).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("history-data").textContent);
  const runs = new Map(data.runs.map((r) => [r.id, r]));
  // A line's colour; a run the runner did not call equivalent is drawn in its verdict's colour.
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                   "#7f7f7f", "#393b79", "#637939", "#8c6d31"];
  const VERDICT_COLOUR = {failed: "#c62828", incomplete: "#5e35b1", environment: "#ef6c00"};
  const lineNames = [...new Set(data.runs.map((r) => r.line))];
  const lineColour = (line) => PALETTE[lineNames.indexOf(line) % PALETTE.length];
  const SERIES_SYMBOL = {same: "circle-open", slower: "triangle-up", faster: "triangle-down",
                         ambiguous: "diamond", "": "circle"};
  const PART_LABEL = {process_start: "process start", cuInit: "cuInit", primary_ctx: "primary context",
                      gpu_lock_wait: "GPU lock wait", cases: "cases", exit: "exit"};
  const CONFIG = {responsive: true, displaylogo: false};

  function selected() {
    const out = {};
    for (const sel of document.querySelectorAll("#filters select")) {
      if (sel.value !== "") out[sel.name] = sel.value;
    }
    return out;
  }

  function visible(filter) {
    return (r) => Object.entries(filter).every(([k, v]) => String(r[k]) === v);
  }

  function hover(r) {
    return `${r.started}<br>rev ${r.revision}<br>${r.line}<br>driver ${r.driver_release}, toolkit ${r.toolkit}` +
      `<br>host ${r.host}${r.jobs ? `, -j ${r.jobs}` : ""}<br>verdict ${r.verdict || "none"}`;
  }

  // Vertical marks: change points of this figure's metric (dashed) and environment changes (dotted).
  function marks(shown, points) {
    const shapes = [];
    const annotations = [];
    for (const e of data.environment_changes) {
      if (!shown.has(e.run)) continue;
      shapes.push({type: "line", xref: "x", yref: "paper", x0: e.started, x1: e.started, y0: 0, y1: 1,
                   line: {dash: "dot", color: "#78909c", width: 1}});
      annotations.push({x: e.started, y: 1, xref: "x", yref: "paper", text: e.what, showarrow: false,
                        textangle: -90, xanchor: "right", yanchor: "top", font: {size: 10, color: "#546e7a"}});
    }
    for (const c of points) {
      if (!shown.has(c.run)) continue;
      const step = c.step === null ? "" : `${c.step >= 0 ? "+" : ""}${(100 * c.step).toFixed(1)} %`;
      shapes.push({type: "line", xref: "x", yref: "paper", x0: c.started, x1: c.started, y0: 0, y1: 1,
                   line: {dash: "dash", color: c.direction === "worse" ? "#c62828" : "#2e7d32", width: 1.5}});
      annotations.push({x: c.started, y: c.after, xref: "x", yref: "y", text: `change ${step}`, showarrow: true,
                        arrowhead: 2, ax: 30, ay: -30, font: {size: 11}, bgcolor: "#fff"});
    }
    return {shapes, annotations};
  }

  function layout(title, extra) {
    return Object.assign({title: {text: title, font: {size: 14}}, hovermode: "closest", height: 420,
                          margin: {l: 60, r: 20, t: 40, b: 40}, xaxis: {type: "date"},
                          legend: {orientation: "h", y: -0.18}}, extra || {});
  }

  function byLine(list) {
    const lines = new Map();
    for (const r of list) {
      if (!lines.has(r.line)) lines.set(r.line, []);
      lines.get(r.line).push(r);
    }
    return lines;
  }

  function runTrace(name, list, y, colour) {
    return {type: "scatter", mode: "lines+markers", name, x: list.map((r) => r.started), y: list.map(y),
            customdata: list.map((r) => r.href), text: list.map(hover), hovertemplate: "%{y}<br>%{text}<extra></extra>",
            connectgaps: false, line: {color: colour},
            marker: {size: list.map((r) => (VERDICT_COLOUR[r.verdict] ? 15 : 9)),
                     color: list.map((r) => VERDICT_COLOUR[r.verdict] || colour),
                     symbol: list.map((r) => (r.verdict === "failed" ? "x" : "circle")),
                     line: {width: 1, color: "#fff"}}};
  }

  function drawWall(list, shown) {
    const traces = [];
    for (const [line, rs] of byLine(list.filter((r) => r.wall_s !== null))) {
      traces.push(runTrace(line, rs, (r) => r.wall_s, lineColour(line)));
    }
    const m = marks(shown, data.change_points.filter((c) => c.metric === "functional-phase wall"));
    Plotly.react("fig-wall", traces, layout("functional-phase wall (s)", m), CONFIG);
  }

  function drawBreakdown(list) {
    const rs = list.filter((r) => r.breakdown_s);
    const x = rs.map((r) => `${r.started.slice(5, 16).replace("T", " ")} ${r.revision.slice(0, 7)}`);
    const traces = Object.keys(PART_LABEL).map((part) => ({
      type: "bar", name: PART_LABEL[part], x, y: rs.map((r) => r.breakdown_s[part]),
      customdata: rs.map((r) => r.href), hovertext: rs.map((r) => r.line), textposition: "none",
      hovertemplate: `${PART_LABEL[part]} %{y:.1f} s<br>%{x}<br>%{hovertext}<extra></extra>`}));
    Plotly.react("fig-breakdown", traces, layout("seconds summed over the run's cell processes",
      {barmode: "stack", xaxis: {type: "category", automargin: true, tickangle: -45},
       legend: {orientation: "h", y: 1.0, yanchor: "bottom"}, margin: {l: 60, r: 20, t: 80, b: 40}}), CONFIG);
  }

  function drawCounts(list) {
    const traces = [];
    for (const [line, rs] of byLine(list)) {
      traces.push(runTrace(`${line}: pass`, rs, (r) => r.pass, lineColour(line)));
      const t = runTrace(`${line}: not passing`, rs, (r) => r.fail, lineColour(line));
      t.yaxis = "y2";
      t.line = {dash: "dot", color: lineColour(line)};
      traces.push(t);
    }
    Plotly.react("fig-counts", traces, layout("results per run (dotted: not passing, right axis)",
      {yaxis2: {overlaying: "y", side: "right", rangemode: "tozero", tickformat: "d", automargin: true},
       margin: {l: 60, r: 60, t: 40, b: 40}}), CONFIG);
  }

  function latencyTraces(t, shown, several) {
    const pts = t.points.filter((p) => shown.has(p.run));
    if (!pts.length) return [];
    const x = pts.map((p) => runs.get(p.run).started);
    const band = {type: "scatter", mode: "lines", x: x.concat(x.slice().reverse()),
                  y: pts.map((p) => p.high).concat(pts.map((p) => p.low).reverse()), fill: "toself",
                  opacity: 0.08, line: {width: 0}, hoverinfo: "skip", showlegend: false,
                  legendgroup: t.line + t.series};
    const name = several ? `${runs.get(pts[0].run).matrix}: ${t.short}` : t.short;
    const median = {type: "scatter", mode: "lines+markers", name, legendgroup: t.line + t.series, x,
                    y: pts.map((p) => p.median), customdata: pts.map((p) => runs.get(p.run).href),
                    text: pts.map((p) => `${t.label}<br>${t.line}<br>verdict ${p.verdict || "none"}<br>` +
                      hover(runs.get(p.run))),
                    hovertemplate: `%{y:.4g} ${t.unit}<br>%{text}<extra></extra>`,
                    marker: {size: 9, symbol: pts.map((p) => SERIES_SYMBOL[p.verdict] || "circle")}};
    return [band, median];
  }

  function drawLatency(shown) {
    const holder = document.getElementById("latency-figures");
    const probes = [...new Set(data.latency.map((t) => t.probe))].sort();
    for (const probe of probes) {
      const id = `fig-probe-${probe.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      let div = document.getElementById(id);
      if (!div) {
        div = document.createElement("div");
        div.id = id;
        div.className = "plot figure probe-figure";
        holder.appendChild(div);
        div.on = null;
      }
      const ts = data.latency.filter((t) => t.probe === probe);
      const several = new Set(ts.filter((t) => t.points.some((p) => shown.has(p.run))).map((t) => t.line)).size > 1;
      const traces = ts.flatMap((t) => latencyTraces(t, shown, several));
      div.hidden = traces.length === 0;
      const unit = ts.length ? ts[0].unit : "";
      const m = marks(shown, data.change_points.filter((c) => c.probe === probe));
      Plotly.react(div, traces, layout(`${probe} (${unit})`, m), CONFIG);
      linkPoints(div);
    }
  }

  function linkPoints(div) {
    if (div.dataset.linked) return;
    div.dataset.linked = "1";
    div.on("plotly_click", (ev) => {
      const href = ev.points && ev.points[0] && ev.points[0].customdata;
      if (href) window.location.href = href;
    });
  }

  function draw() {
    const keep = visible(selected());
    const list = data.runs.filter(keep);
    const shown = new Set(list.map((r) => r.id));
    drawWall(list, shown);
    drawBreakdown(list);
    drawCounts(list);
    drawLatency(shown);
    for (const id of ["fig-wall", "fig-breakdown", "fig-counts"]) linkPoints(document.getElementById(id));
    for (const row of document.querySelectorAll("#runs-table tr.run-row")) {
      row.hidden = !shown.has(row.dataset.run);
    }
    document.getElementById("shown").textContent = `${list.length} of ${data.runs.length} runs shown`;
  }

  for (const sel of document.querySelectorAll("#filters select")) sel.addEventListener("change", draw);
  draw();
})();
