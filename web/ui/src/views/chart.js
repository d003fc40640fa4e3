// Time-series charts with uPlot: goroutines, live heap and GC on one time
// axis.
import uPlot from 'uplot';
import { fmtBytes, fmtNum } from '../util.js';

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

// seriesChart draws the report's series into el and returns the uPlot.
// opts.onSelect(fromSec, toSec) is called when a range is dragged.
export function seriesChart(el, series, opts = {}) {
  const data = align([series.goroutines, series.heap_live && series.heap_live.length ? series.heap_live : series.heap_inuse, series.gc]);
  const width = Math.max(300, el.clientWidth || 900);
  const u = new uPlot({
    width,
    height: opts.height || 240,
    cursor: { drag: { x: true, y: false, setScale: !opts.onSelect } },
    scales: { x: { time: true }, g: { auto: true }, heap: { auto: true }, gc: { auto: true } },
    series: [
      {},
      { label: 'goroutines', scale: 'g', stroke: '#1565c0', width: 2, spanGaps: true, value: (u, v) => fmtNum(v) },
      { label: 'live heap', scale: 'heap', stroke: '#c62828', width: 2, spanGaps: true, value: (u, v) => (v === null ? '–' : fmtBytes(v)) },
      { label: 'GC cycles', scale: 'gc', stroke: '#8e8e8e', width: 1, dash: [4, 4], spanGaps: true, value: (u, v) => fmtNum(v) },
    ],
    axes: [
      {},
      { scale: 'g', label: 'goroutines', values: (u, vals) => vals.map(fmtNum), size: 60 },
      { scale: 'heap', side: 1, label: 'live heap', values: (u, vals) => vals.map(fmtBytes), grid: { show: false }, size: 80 },
      { scale: 'gc', side: 1, label: 'GC', values: (u, vals) => vals.map(fmtNum), grid: { show: false }, size: 50 },
    ],
    hooks: opts.onSelect ? {
      setSelect: [(u) => {
        if (u.select.width < 2) return;
        opts.onSelect(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'));
      }],
    } : {},
  }, data, el);
  const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: opts.height || 240 }));
  ro.observe(el);
  u.disconnect = () => ro.disconnect();
  return u;
}
