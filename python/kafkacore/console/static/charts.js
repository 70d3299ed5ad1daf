// The Charts view: uPlot charts fed by server-sent events (/charts/stream), each event
// the whole window's series as JSON. window.chartUpdates counts the events applied.
(function () {
  "use strict";
  const root = document.getElementById("charts");
  if (!root || typeof uPlot === "undefined") { return; }
  const width = () => Math.max(420, Math.min(680, root.clientWidth / 2 - 20));
  const palette = ["#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df"];
  const charts = {};
  window.chartUpdates = 0;

  function make(id, names, units) {
    const el = document.getElementById(id);
    if (!el) { return null; }
    const series = [{}].concat(names.map((n, i) => ({
      label: n, stroke: palette[i % palette.length], width: 1.5, spanGaps: false,
    })));
    const opts = {
      width: width(), height: 220, series: series,
      axes: [{}, { label: units, size: 70 }],
      scales: { x: { time: true } },
    };
    const data = [[]].concat(names.map(() => []));
    return new uPlot(opts, data, el);
  }

  charts.bytes = make("chart-bytes", ["bytes in", "bytes out", "replication in", "replication out"], "B/s");
  charts.records = make("chart-records", ["records in", "requests"], "per s");
  charts.latency = make("chart-latency", ["p50", "p99", "p99.9"], "ms");
  charts.topic = make("chart-topic", ["bytes in", "bytes out", "records in"], "per s");

  function apply(d) {
    const b = d.broker;
    charts.bytes.setData([b.time, b.bytes_in, b.bytes_out, b.replication_bytes_in, b.replication_bytes_out]);
    charts.records.setData([b.time, b.records_in, b.requests]);
    const l = d.latency;
    charts.latency.setData([l.time, l.p50, l.p99, l["p99.9"]]);
    if (charts.topic && d.topic) {
      const t = d.topic;
      charts.topic.setData([t.time, t.bytes_in, t.bytes_out, t.records_in]);
    }
    window.chartUpdates += 1;
    const status = document.getElementById("chart-status");
    if (status) {
      const n = b.time.length;
      status.textContent = "live · " + window.chartUpdates + " updates · last point " +
        (n ? new Date(b.time[n - 1] * 1000).toISOString().substring(11, 19) + " UTC" : "-");
    }
  }

  const source = new EventSource(root.dataset.stream);
  source.addEventListener("charts", (event) => apply(JSON.parse(event.data)));
  window.addEventListener("beforeunload", () => source.close());
})();
