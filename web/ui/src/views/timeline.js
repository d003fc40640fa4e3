// Timeline: goroutine and span lifetimes over time on a canvas, in the
// groups the API makes (by start function or span name, each named and
// counted there), packed into lanes and drawn only where visible, so
// 100,000 bars stay smooth; a UTC time axis on top; goroutines coloured by
// verdict (a suspect's member, healthy, ended); the goroutine count and
// heap aligned beneath (uPlot); click-through to a goroutine's stack.
//
// No pinned library draws lifetimes packed into lanes on a canvas:
// flame-chart-js and d3-flame-graph lay bars out by call depth, and the
// DOM timelines (vis-timeline) are not smooth at 100,000 items; so the
// lanes are drawn here and the series use uPlot.
import { api, h, clear, fmtNum, fmtTime, fmtDur, enc, plural } from '../util.js';
import { seriesChart, seriesTimes } from './chart.js';

const LANE = 5; // px per lane
const GAP = 1;
const HEAD = 16; // px per group header
const AXIS = 22; // px of the time axis on top
const COLORS = { suspect: '#c62828', healthy: '#2e7d32', ended: '#90a4ae', task: '#6a1b9a', region: '#ef6c00' };
const LEGEND = { 'in a suspect': COLORS.suspect, 'healthy (alive at the end)': COLORS.healthy, 'ended': COLORS.ended, task: COLORS.task, region: COLORS.region };

export async function timelineView(main, ctx) {
  const detail = await ctx.detail();
  const sid = ctx.params.get('suspect');
  const data = await api(`/api/captures/${ctx.id}/timeline?limit=100000${sid ? `&suspect=${enc(sid)}` : ''}`);
  const lv = data.lifetimes;
  const t0 = new Date(lv.from).getTime();
  const t1 = Math.max(new Date(lv.to).getTime(), t0 + 1);
  const groups = pack(lv.bars, lv.groups || [], t1);
  // T is the view's state: the rows drawn, the time shown and scrolled.
  const T = Object.assign(layout(groups), { t0, t1, view: { a: t0, b: t1, scroll: 0 }, chart: null, frame: 0 });
  T.canvas = h('canvas', { id: 'timeline-canvas', class: 'timeline-canvas' });
  T.wrap = h('div', { class: 'timeline-wrap' }, T.canvas);
  const chartEl = h('div', { class: 'chart', id: 'timeline-chart' });
  const info = h('div', { class: 'frame-info', id: 'timeline-info' }, 'Drag to pan, Ctrl+wheel (or the buttons) to zoom, wheel to scroll; click a bar for its stack.');
  const stackEl = h('pre', { class: 'stack', id: 'timeline-stack', hidden: true });
  T.changed = () => {
    if (T.chart) T.chart.setScale('x', { min: T.view.a / 1000, max: T.view.b / 1000 });
    if (!T.frame) T.frame = requestAnimationFrame(() => draw(T));
  };
  main.append(h('section', { class: 'panel' }, toolbar(T, lv, data, groups), T.wrap, chartEl, info, stackEl));
  if (seriesTimes(data.series) >= 2) {
    T.chart = seriesChart(chartEl, data.series, { height: 180, history: detail.history, onSelect: (a, b) => { T.view.a = a * 1000; T.view.b = b * 1000; T.changed(); } });
  }
  const showBar = (b) => barInfo(ctx, detail, lv, b, info, stackEl);
  const stop = interact(T, (x, y) => { const b = barAt(T, x, y); if (b) showBar(b); });
  const ro = new ResizeObserver(() => T.changed());
  ro.observe(T.wrap);
  T.changed();
  return () => {
    ro.disconnect();
    stop();
    if (T.chart) { T.chart.disconnect(); T.chart.destroy(); }
  };
}

// layout lists the rows drawn (a header per group, then its lanes) and
// each row's top.
function layout(groups) {
  const rows = [];
  for (const g of groups) {
    rows.push({ head: g });
    for (const lane of g.lanes) rows.push({ lane, group: g });
  }
  const rowY = [];
  let y = AXIS;
  for (const r of rows) { rowY.push(y); y += r.head ? HEAD : LANE + GAP; }
  return { rows, rowY, totalH: y };
}

// zoom scales the time shown by f about at (ms; the middle by default).
function zoom(T, f, at) {
  const { view, t0, t1 } = T;
  const c = at ?? (view.a + view.b) / 2;
  const span = Math.max(1e-3, Math.min(t1 - t0, (view.b - view.a) * f));
  view.a = Math.max(t0, c - (c - view.a) * (span / (view.b - view.a)));
  view.b = Math.min(t1, view.a + span);
  view.a = Math.max(t0, view.b - span);
  T.changed();
}

// toolbar says what the view holds (lifetimes, groups, time span, alive
// goroutines and the suspect's), with the zoom buttons and the legend.
function toolbar(T, lv, data, groups) {
  const legend = h('span', { class: 'legend', id: 'timeline-legend' }, ...Object.entries(LEGEND)
    .map(([l, c]) => h('span', {}, h('i', { style: `background:${c}` }), l)));
  return h('div', { class: 'toolbar' },
    h('b', { id: 'timeline-count', 'data-bars': String(lv.bars.length) }, plural(lv.bars.length, 'lifetime')),
    lv.omitted ? h('span', { class: 'sub' }, ` (${fmtNum(lv.omitted)} of ${fmtNum(lv.total)} left out)`) : null,
    h('span', { class: 'sub' }, ` in ${plural(groups.length, 'group')} · ${fmtTime(lv.from)} … ${fmtTime(lv.to)}`),
    h('span', { class: 'sub', id: 'timeline-alive', 'data-alive': String(lv.alive) }, lv.alive_at ? ` · ${plural(lv.alive, 'goroutine')} alive at ${fmtTime(lv.alive_at)}` : ` · ${fmtNum(lv.alive)} alive at the end`),
    data.suspect ? h('span', { class: 'chip active', id: 'timeline-suspect', 'data-alive': String(data.suspect.alive) }, `${data.suspect.id}: ${fmtNum(data.suspect.alive)} alive at ${fmtTime(data.suspect.alive_at)}`) : null,
    h('button', { type: 'button', onclick: () => zoom(T, 0.5) }, 'zoom in'),
    h('button', { type: 'button', onclick: () => zoom(T, 2) }, 'zoom out'),
    h('button', { type: 'button', onclick: () => { T.view.a = T.t0; T.view.b = T.t1; T.changed(); } }, 'reset'),
    legend);
}

// plotBox is where time is drawn on the canvas: under the chart's plot
// when there is a chart, so both share one time axis.
function plotBox(T) {
  const w = T.wrap.clientWidth || 900;
  const dpr = window.devicePixelRatio || 1;
  if (T.chart) return { left: T.chart.bbox.left / dpr, width: T.chart.bbox.width / dpr, w };
  return { left: 60, width: w - 140, w };
}

// draw paints the rows in view: group headers and each lane's bars, in
// the colour of their verdict, only where visible; then the time axis.
function draw(T) {
  T.frame = 0;
  const { canvas, view, rows, rowY } = T;
  const { left, width, w } = plotBox(T);
  const dpr = window.devicePixelRatio || 1;
  const H = 420;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(H * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.width = w + 'px';
    canvas.style.height = H + 'px';
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, H);
  const k = width / (view.b - view.a);
  g.font = '11px system-ui, sans-serif';
  g.save();
  g.beginPath();
  g.rect(0, AXIS, w, H - AXIS);
  g.clip();
  for (let i = Math.max(0, lowerBound(rowY, view.scroll + AXIS) - 1); i < rows.length; i++) {
    const ry = rowY[i] - view.scroll;
    if (ry > H) break;
    const r = rows[i];
    if (r.head) {
      g.fillStyle = '#f3f5f8';
      g.fillRect(0, ry, w, HEAD);
      g.fillStyle = '#333';
      g.fillText(`${r.head.kind} · ${r.head.label} — ${r.head.summary || ''}`, 4, ry + 12);
      continue;
    }
    drawLane(g, r.lane, ry, left, width, k, view);
  }
  g.restore();
  timeAxis(g, left, width, w, view.a, view.b);
  g.strokeStyle = '#ccc';
  g.strokeRect(left + 0.5, 0.5, width, H - 1);
}

// drawLane paints one lane's bars in view, skipping those a pixel
// already covers.
function drawLane(g, lane, ry, left, width, k, view) {
  const { starts, ends, bars } = lane;
  let lastX = -1;
  for (let j = lowerBound(ends, view.a); j < starts.length && starts[j] <= view.b; j++) {
    const x0 = left + Math.max(0, (starts[j] - view.a) * k);
    const x1 = left + Math.min(width, (ends[j] - view.a) * k);
    if (x1 < lastX + 0.5 && x0 >= lastX - 1) continue; // sub-pixel: already covered
    const b = bars[j];
    g.fillStyle = COLORS[b.kind === 'goroutine' ? b.verdict : b.kind] || '#555';
    g.fillRect(x0, ry, Math.max(1, x1 - x0), LANE);
    lastX = Math.max(lastX, x1);
  }
}

// interact pans on drag, zooms on Ctrl+wheel, scrolls on wheel and calls
// click(x, y) on a click that did not drag; it returns what undoes it.
function interact(T, click) {
  const { canvas, view } = T;
  let dragging = null;
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.ctrlKey || e.metaKey || e.altKey) {
      const { left, width } = plotBox(T);
      zoom(T, e.deltaY > 0 ? 1.25 : 0.8, view.a + ((e.offsetX - left) / width) * (view.b - view.a));
    } else {
      view.scroll = Math.max(0, Math.min(T.totalH - 100, view.scroll + e.deltaY));
      T.changed();
    }
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => { dragging = { x: e.clientX, a: view.a, b: view.b, moved: false }; });
  const onMove = (e) => {
    if (!dragging) return;
    const dx = e.clientX - dragging.x;
    if (Math.abs(dx) > 2) dragging.moved = true;
    const span = dragging.b - dragging.a;
    view.a = Math.min(Math.max(T.t0, dragging.a + (-dx / plotBox(T).width) * span), T.t1 - span);
    view.b = view.a + span;
    T.changed();
  };
  const onUp = (e) => {
    if (dragging && !dragging.moved && e.target === canvas) click(e.offsetX, e.offsetY);
    dragging = null;
  };
  window.addEventListener('mouseup', onUp);
  window.addEventListener('mousemove', onMove);
  return () => {
    window.removeEventListener('mouseup', onUp);
    window.removeEventListener('mousemove', onMove);
  };
}

// barAt is the bar under canvas point (x, y), within 3 px.
function barAt(T, x, y0) {
  const { left, width } = plotBox(T);
  const { view, rows, rowY } = T;
  if (y0 < AXIS) return null;
  const r = rows[lowerBound(rowY, y0 + view.scroll + 0.001) - 1];
  if (!r || r.head) return null;
  const t = view.a + ((x - left) / width) * (view.b - view.a);
  const tol = (3 / width) * (view.b - view.a);
  const { starts, ends, bars } = r.lane;
  const j = lowerBound(ends, t - tol);
  return j >= starts.length || starts[j] > t + tol ? null : bars[j];
}

const VERDICT = { suspect: (b) => `in suspect ${b.suspect}`, healthy: () => 'healthy: alive at the end, in no suspect', ended: (b) => (b.end_unknown ? 'last seen: the eBPF probes were detached here, so it may have lived on' : 'ended') };

// barInfo shows a clicked bar: what it is, its verdict and times, and a
// goroutine's stack in the latest dump.
async function barInfo(ctx, detail, lv, b, info, stackEl) {
  const group = (lv.groups || [])[b.group];
  clear(info).append(h('span', { id: 'timeline-bar', 'data-id': b.id, 'data-goid': b.goid ? String(b.goid) : null, 'data-verdict': b.verdict || null },
    h('b', { class: 'mono' }, `${b.kind} ${group ? group.label : b.name}`), ' ',
    b.verdict ? h('span', { class: `tag verdict ${b.verdict}` }, VERDICT[b.verdict](b)) : null, ' ',
    b.goid ? h('span', {}, `goroutine ${b.goid} · `) : null,
    h('span', {}, `${fmtTime(b.start)} … ${b.end ? fmtTime(b.end) : 'still alive at end'} (${fmtDur((b.end ? new Date(b.end) : new Date(lv.to)) - new Date(b.start))})`),
    b.state ? h('span', { class: 'tag' }, b.state) : null, ' ',
    b.goid ? h('a', { href: `#/c/${ctx.id}/flame?source=goroutines&profile=goroutine&goid=${b.goid}` }, 'flame graph') : null));
  stackEl.hidden = true;
  if (!b.goid || !(detail.dump_snapshots || []).length) return;
  try {
    const t = await api(`/api/captures/${ctx.id}/flamegraph?source=goroutines&goid=${enc(b.goid)}`);
    const frames = [];
    for (let n = t.root; n && n.c && n.c.length; n = n.c[0]) frames.push(`${n.c[0].n}\n    ${n.c[0].f || ''}${n.c[0].ln ? ':' + n.c[0].ln : ''}`);
    stackEl.textContent = frames.length ? `goroutine ${b.goid} in the latest dump (outermost first):\n` + frames.join('\n') : `goroutine ${b.goid} is not in the latest dump.`;
  } catch (err) {
    stackEl.textContent = `goroutine ${b.goid}: ${err.message}`;
  }
  stackEl.hidden = false;
}

// pack lays the API's groups out in lanes of non-overlapping bars
// (greedy by start, with a min-heap of lane ends); groups keep the API's
// order, labels and counts.
function pack(bars, apiGroups, tEnd) {
  const groups = apiGroups.map((g) => Object.assign({}, g, { items: [] }));
  for (const b of bars) {
    const g = groups[b.group];
    if (!g) continue;
    const s = new Date(b.start).getTime();
    const e = b.end ? new Date(b.end).getTime() : tEnd;
    g.items.push({ s, e: Math.max(e, s), b });
  }
  for (const g of groups) {
    g.items.sort((x, y) => x.s - y.s);
    const heap = []; // [end, laneIndex]
    g.lanes = [];
    for (const it of g.items) {
      let lane;
      if (heap.length && heap[0][0] <= it.s) {
        const top = heapPop(heap);
        lane = g.lanes[top[1]];
        heapPush(heap, [it.e, top[1]]);
      } else {
        lane = { starts: [], ends: [], bars: [] };
        g.lanes.push(lane);
        heapPush(heap, [it.e, g.lanes.length - 1]);
      }
      lane.starts.push(it.s);
      lane.ends.push(it.e);
      lane.bars.push(it.b);
    }
    delete g.items;
  }
  return groups.filter((g) => g.lanes.length);
}

// timeAxis draws UTC ticks across the top of the canvas for [a, b] (ms).
function timeAxis(g, left, width, w, a, b) {
  g.fillStyle = '#fff';
  g.fillRect(0, 0, w, AXIS);
  g.strokeStyle = '#ccc';
  g.beginPath();
  g.moveTo(left, AXIS - 0.5);
  g.lineTo(left + width, AXIS - 0.5);
  g.stroke();
  const step = tickStep((b - a) / Math.max(2, Math.floor(width / 110)));
  g.fillStyle = '#333';
  g.font = '11px system-ui, sans-serif';
  for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
    const x = left + ((t - a) / (b - a)) * width;
    g.fillRect(Math.round(x), AXIS - 6, 1, 6);
    g.fillText(tickLabel(t, step), x + 3, 12);
  }
  g.fillStyle = '#666';
  g.fillText('UTC', 4, 12);
}

// tickStep rounds a span (ms) up to 1, 2 or 5 times a power of ten, or to
// whole seconds and minutes.
function tickStep(ms) {
  for (const s of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5]) {
    if (s >= ms) return s;
  }
  return 36e5 * Math.ceil(ms / 36e5);
}

function tickLabel(t, step) {
  const iso = new Date(t).toISOString();
  return step < 1000 ? iso.slice(11, 23) : iso.slice(11, 19);
}

function heapPush(a, v) {
  a.push(v);
  let i = a.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (a[p][0] <= a[i][0]) break;
    [a[p], a[i]] = [a[i], a[p]];
    i = p;
  }
}

function heapPop(a) {
  const top = a[0];
  const last = a.pop();
  if (a.length) {
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < a.length && a[l][0] < a[m][0]) m = l;
      if (r < a.length && a[r][0] < a[m][0]) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }
  return top;
}

// lowerBound returns the first index whose value is >= x.
function lowerBound(arr, x) {
  let lo = 0, hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}
