// Time-series charts with uPlot: goroutines, heap and GC on one time
// axis, in UTC. The live heap and the GC count of a trace are sampled only
// inside its windows: they are drawn window by window, with gaps between
// (the API's series.windows), never joined across; between windows the
// heap comes from the heap profiles (heap_inuse), drawn as its own line.
import uPlot from 'uplot';
import { fmtBytes, fmtNum, fmtTime } from '../util.js';

// COUNT_STEPS are the tick steps of axes that count whole things
// (goroutines, GC cycles): never 1.25 of a cycle.
const COUNT_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 2.5e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8];

// BYTE_STEPS are the tick steps of the heap axis: binary sizes (1, 2, 4
// … 512 of B, KiB, MiB, GiB), so its ticks read "4.0 MiB", "8.0 MiB" as
// every byte figure is written, never "4.8 MiB, 9.5 MiB".
const BYTE_STEPS = [0, 1, 2, 3].flatMap((k) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((m) => m * 1024 ** k));

// align merges series of {ts, value} points onto one sorted x axis
// (seconds), with nulls where a series has no point.
export function align(seriesList) {
  const xs = new Set();
  const maps = seriesList.map((pts) => {
    const m = new Map();
    for (const p of pts || []) {
      const x = new Date(p.ts).getTime() / 1000;
      xs.add(x);
      m.set(x, p.value);
    }
    return m;
  });
  const x = [...xs].sort((a, b) => a - b);
  return [x, ...maps.map((m) => x.map((t) => (m.has(t) ? m.get(t) : null)))];
}

// windowGaps returns uPlot's gaps option for a series sampled only inside
// windows: the canvas pixel ranges between one window's end and the next
// one's start, and before the first and after the last. Nulls inside a
// window (other series' times) are joined over.
export function windowGaps(windows) {
  const spans = (windows || []).map((w) => [new Date(w.start).getTime() / 1000, new Date(w.end).getTime() / 1000]);
  return (u) => {
    if (!spans.length) return [];
    const px = (t) => Math.round(u.valToPos(t, 'x', true));
    const lo = px(u.scales.x.min), hi = px(u.scales.x.max);
    const gaps = [];
    let from = lo;
    for (const [a, b] of spans) {
      const to = px(a);
      if (to > from) gaps.push([from, to]);
      from = Math.max(from, px(b));
    }
    if (hi > from) gaps.push([from, hi]);
    return gaps;
  };
}

// HISTORY_FILL shades the node agent's history, before the capture.
export const HISTORY_FILL = 'rgba(255, 167, 38, 0.18)';

// historyBand returns the span (seconds) the chart shades as history: from
// the first history snapshot to the capture's start (the API's
// capture.history), or null when the capture has none.
export function historyBand(history) {
  if (!history || !(history.snapshots || []).length) return null;
  const from = new Date(history.start).getTime() / 1000;
  const to = Math.max(new Date(history.capture_start).getTime() / 1000, new Date(history.end).getTime() / 1000);
  return { from, to, snapshots: history.snapshots.length };
}

// drawHistory is a drawClear hook shading band under everything else,
// with its name at the top.
function drawHistory(band) {
  return (u) => {
    const { ctx, bbox } = u;
    const a = Math.max(bbox.left, u.valToPos(band.from, 'x', true));
    const b = Math.min(bbox.left + bbox.width, u.valToPos(band.to, 'x', true));
    if (b <= a) return;
    ctx.save();
    ctx.fillStyle = HISTORY_FILL;
    ctx.fillRect(a, bbox.top, b - a, bbox.height);
    ctx.fillStyle = '#8d5b00';
    ctx.font = `${Math.round(11 * devicePixelRatio)}px sans-serif`;
    ctx.textBaseline = 'top';
    ctx.fillText('history (before the trigger)', a + 4 * devicePixelRatio, bbox.top + 3 * devicePixelRatio, Math.max(0, b - a - 8 * devicePixelRatio));
    ctx.restore();
  };
}

// seriesTimes counts the distinct times the series chart holds: with
// fewer than two there is no time series to draw (a single snapshot).
export function seriesTimes(series) {
  return align([series.goroutines, series.heap_live, series.heap_inuse, series.gc])[0].length;
}

// seriesChart draws the report's series into el and returns the uPlot.
// opts.onSelect(fromSec, toSec) is called when a range is dragged;
// opts.history (the capture's history span) is shaded apart.
export function seriesChart(el, series, opts = {}) {
  const fromTrace = series.heap_live_from === 'trace';
  const data = align([series.goroutines, fromTrace ? series.heap_live : [], series.heap_inuse, series.gc]);
  const band = historyBand(opts.history);
  const u = new uPlot({
    width: Math.max(300, el.clientWidth || 900),
    height: opts.height || 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
    cursor: { drag: { x: true, y: false, setScale: !opts.onSelect } },
    scales: {
      x: { time: true },
      // Goroutines and heap start at zero: growth is read against nothing,
      // not against the smallest value seen.
      g: { auto: true, range: (u, min, max) => [0, Math.max(1, max) * 1.05] },
      heap: { auto: true, range: (u, min, max) => [0, Math.max(1, max) * 1.05] },
      gc: { auto: true, range: (u, min, max) => [0, Math.max(1, Math.ceil(max))] },
    },
    series: seriesOptions(series, fromTrace),
    axes: [
      { values: (u, splits, i, space, incr) => utcTicks(splits, incr), space: TIME_TICK_SPACE, incrs: TIME_STEPS, label: axisDays(data[0]), labelSize: 14 },
      { scale: 'g', label: 'goroutines', incrs: COUNT_STEPS, values: (u, vals) => vals.map(fmtNum), size: 60 },
      { scale: 'heap', side: 1, label: 'heap', incrs: BYTE_STEPS, values: (u, vals) => vals.map(fmtBytes), grid: { show: false }, size: 80 },
      { scale: 'gc', side: 1, label: 'GC', incrs: COUNT_STEPS, values: (u, vals) => vals.map(fmtNum), grid: { show: false }, size: 50 },
    ],
    hooks: chartHooks(opts, band),
  }, data, el);
  el.dataset.windows = String((series.windows || []).length);
  // The history band, in seconds, for the browser test.
  el.historyBand = band;
  el.dataset.history = String(band ? band.snapshots : 0);
  // The browser test maps times to canvas pixels through it to check what
  // is drawn where (a line inside a window, nothing in a gap).
  el.uplot = u;
  const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: opts.height || 240 }));
  ro.observe(el);
  u.disconnect = () => ro.disconnect();
  return u;
}

// seriesOptions are the chart's lines. The trace windows' live heap, and
// GC cycles counted in them, have no points between windows: drawn window
// by window. GC cycles the eBPF probes counted span the whole capture.
function seriesOptions(series, fromTrace) {
  const windowed = { spanGaps: false, gaps: windowGaps(series.windows) };
  const gcTrace = series.gc_from === 'trace';
  const gc = { label: gcTrace ? 'GC cycles (trace windows)' : 'GC cycles', scale: 'gc', stroke: '#8e8e8e', width: 1, dash: [4, 4], value: (u, v) => fmtNum(v) };
  return [
    // Seconds to the millisecond, truncated as the API's times are (a
    // float's last bits must not round .290 down to .289).
    { label: 'time (UTC)', value: (u, v) => (v === null ? '–' : fmtTime(new Date(Math.floor(v * 1000 + 1e-3)))) },
    { label: 'goroutines', scale: 'g', stroke: '#1565c0', width: 2, spanGaps: true, value: (u, v) => fmtNum(v) },
    Object.assign({ label: 'live heap (trace windows)', scale: 'heap', stroke: '#c62828', width: 1.5, value: (u, v) => (v === null ? '–' : fmtBytes(v)), show: fromTrace }, windowed),
    { label: 'heap in use (heap profiles)', scale: 'heap', stroke: '#7b1fa2', width: 2, dash: [6, 3], spanGaps: true, points: { show: true, size: 5 }, value: (u, v) => (v === null ? '–' : fmtBytes(v)) },
    Object.assign(gc, gcTrace ? windowed : { spanGaps: true }),
  ];
}

// chartHooks are the uPlot hooks: range selection, history shading.
function chartHooks(opts, band) {
  const hooks = {};
  if (opts.onSelect) {
    hooks.setSelect = [(u) => {
      if (u.select.width < 2) return;
      opts.onSelect(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'));
    }];
  }
  if (band) hooks.drawClear = [drawHistory(band)];
  return hooks;
}

// TIME_TICK_SPACE is the least room (CSS px) between two time ticks: a
// label to the millisecond ("12:54:05.250") fits with room to spare.
export const TIME_TICK_SPACE = 95;

// TIME_STEPS are the time axis's tick steps (seconds): uPlot's, with 2 s
// and 2 min, so a capture of seconds gets more than two ticks.
const TIME_STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

// utcTicks labels time ticks (seconds) as UTC times of day, to the
// millisecond when they are less than a second apart (incr, seconds), so
// no two ticks read the same; the day is the axis's label (axisDays), so
// no tick is longer than the next and runs into it.
export function utcTicks(splits, incr) {
  return splits.map((sec) => {
    const s = new Date(sec * 1000).toISOString();
    return incr < 1 ? s.slice(11, 23) : s.slice(11, 19);
  });
}

// axisDays names the time axis: UTC and the day, or days, it spans.
export function axisDays(xs) {
  if (!xs.length) return 'UTC';
  const day = (sec) => new Date(sec * 1000).toISOString().slice(0, 10);
  const a = day(xs[0]), b = day(xs[xs.length - 1]);
  return a === b ? `UTC, ${a}` : `UTC, ${a} to ${b}`;
}
