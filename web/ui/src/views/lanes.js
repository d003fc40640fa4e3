// State lanes: go tool trace's goroutine view for a suspect — one lane per
// goroutine (its oldest members, then the goroutines that created them)
// with its state over the trace windows: running, runnable, waiting (with
// the reason) and syscall. Windows are drawn side by side with a gap
// between them (states between windows are unknown); hovering a segment
// shows where the goroutine blocked.
import { api, h, clear, fmtDur, fmtTime, fmtTimeShort, plural, enc, loading } from '../util.js';

// STATE_COLOURS are the lanes' colours, one per state (shared with the
// legend and the browser test).
export const STATE_COLOURS = {
  running: '#2e7d32',
  runnable: '#9ccc65',
  waiting: '#e57373',
  syscall: '#7e57c2',
};

const SVG = 'http://www.w3.org/2000/svg';
const LABEL_W = 330, LANE_H = 16, LANE_GAP = 4, GAP_W = 10, AXIS_H = 18;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const c of children) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// lanesPanel returns the panel and fills it from the API.
export function lanesPanel(ctx, suspect) {
  const body = h('div', { id: 'lanes-body' }, loading('Decoding the trace windows…'));
  const panel = h('section', { class: 'panel', id: 'lanes-panel', 'data-suspect': suspect.id },
    h('h2', {}, `Goroutine states of ${suspect.id} (from the execution traces)`), body);
  api(`/api/captures/${ctx.id}/lanes?suspect=${enc(suspect.id)}`)
    .then((lv) => draw(body, lv))
    .catch((err) => clear(body).append(h('p', { class: 'bad', id: 'lanes-error' }, err.message)));
  return panel;
}

// shownText says which goroutines the lanes are: the oldest members of
// the suspect (of how many it counts), then the goroutines that created
// them.
function shownText(lv) {
  const of = lv.members > lv.sampled_members ? `the oldest ${lv.sampled_members} of its ${plural(lv.members, 'goroutine')}` : `its ${plural(lv.members, 'goroutine')}`;
  const creators = lv.creators ? `, then ${plural(lv.creators, 'goroutine')} that created them (grey labels)` : '';
  return `Lanes of ${of}${creators}.`;
}

// missingText says which of the goroutines asked for no trace window saw,
// members and creators apart.
function missingText(ids, what) {
  return `${plural(ids.length, what.one, what.many)} no trace window saw: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''}`;
}

function draw(body, lv) {
  clear(body);
  body.dataset.lanes = String(lv.lanes.length);
  if (lv.note) body.append(h('p', { class: 'sub', id: 'lanes-note' }, lv.note));
  if (lv.members) body.append(h('p', { class: 'sub', id: 'lanes-shown' }, shownText(lv)));
  if (!lv.lanes.length) return;
  const windows = lv.windows.length ? lv.windows : [{ start: lv.from, end: lv.to }];
  const width = Math.max(600, (body.clientWidth || 900) - 8);
  const x = scale(windows, width - LABEL_W);
  const height = AXIS_H + lv.lanes.length * (LANE_H + LANE_GAP);
  const svg = s('svg', { id: 'lanes-svg', width, height, 'font-size': 11, 'font-family': 'system-ui, sans-serif' });
  for (const w of x.windows) {
    svg.append(s('rect', { x: LABEL_W + w.x0, y: AXIS_H - 2, width: Math.max(1, w.x1 - w.x0), height: height - AXIS_H + 2, fill: '#f6f7f9', class: 'lane-window' }));
    svg.append(s('text', { x: LABEL_W + w.x0 + 2, y: 11, fill: '#5f6b7a' }, fmtTimeShort(w.start)));
  }
  const hover = h('div', { id: 'lanes-hover', class: 'sub' }, 'Hover a segment to see the state, its reason and where the goroutine blocked.');
  lv.lanes.forEach((lane, i) => {
    const y = AXIS_H + i * (LANE_H + LANE_GAP);
    const g = s('g', { class: 'lane', 'data-goid': String(lane.goid), 'data-role': lane.role });
    g.append(s('text', { x: 0, y: y + LANE_H - 4, class: `lane-label ${lane.role}` }, short(lane.label)));
    lane.segments.forEach((seg, k) => {
      const a = x.at(seg.start), b = x.at(seg.end);
      if (a === null || b === null) return;
      const r = s('rect', {
        x: LABEL_W + a, y, width: Math.max(1, b - a), height: LANE_H,
        fill: STATE_COLOURS[seg.state], class: 'seg', 'data-index': String(k), 'data-state': seg.state, 'data-reason': seg.reason || '',
        'data-stack': seg.stack_id ? String(seg.stack_id) : '', 'data-since-before': seg.since_before_window ? '1' : '',
      }, s('title', {}, segText(lane, seg)));
      r.addEventListener('mouseenter', () => showSegment(hover, lv, lane, seg));
      g.append(r);
    });
    svg.append(g);
  });
  body.append(legend(), h('div', { class: 'lanes-scroll' }, svg), hover);
  if ((lv.missing_members || []).length) {
    body.append(h('p', { class: 'sub', id: 'lanes-missing' }, missingText(lv.missing_members, { one: `goroutine of ${lv.suspect}`, many: `goroutines of ${lv.suspect}` })));
  }
  if ((lv.missing_creators || []).length) {
    body.append(h('p', { class: 'sub', id: 'lanes-missing-creators' }, missingText(lv.missing_creators, { one: 'goroutine that created them', many: 'goroutines that created them' })));
  }
}

// scale maps a time inside a window to x, the windows laid side by side
// (each as wide as it is long, GAP_W between them).
function scale(windows, width) {
  const ws = windows.map((w) => ({ start: w.start, end: w.end, t0: Date.parse(w.start), t1: Date.parse(w.end) }));
  const total = ws.reduce((n, w) => n + Math.max(0, w.t1 - w.t0), 0) || 1;
  const px = (width - GAP_W * (ws.length - 1)) / total;
  let pos = 0;
  for (const w of ws) {
    w.x0 = pos;
    w.x1 = pos + (w.t1 - w.t0) * px;
    pos = w.x1 + GAP_W;
  }
  return {
    windows: ws,
    at(t) {
      const v = Date.parse(t);
      for (const w of ws) if (v >= w.t0 && v <= w.t1) return w.x0 + (v - w.t0) * px;
      return null;
    },
  };
}

function short(label) {
  return label.length > 52 ? label.slice(0, 51) + '…' : label;
}

function segText(lane, seg) {
  const reason = seg.reason ? ` on ${seg.reason}${seg.reason_from === 'dump' ? ' (as the goroutine dump says)' : ''}` : ' (the trace names no reason)';
  const what = seg.state === 'waiting' ? (seg.since_before_window ? 'blocked since before the window' : 'waiting') + reason : seg.state;
  const since = seg.since_before_window ? `until ${fmtTime(seg.end)}, from before the window began at` : 'from';
  return `goroutine ${lane.goid}: ${what}, ${fmtDur((Date.parse(seg.end) - Date.parse(seg.start)))} ${since} ${fmtTime(seg.start)}`;
}

function showSegment(el, lv, lane, seg) {
  const frames = seg.stack_id ? lv.stacks[String(seg.stack_id)] || [] : [];
  clear(el).append(
    h('div', { id: 'lanes-hover-what' }, h('b', {}, lane.label), ' — ', segText(lane, seg)),
    frames.length
      ? h('pre', { class: 'stack', id: 'lanes-hover-stack' }, frames.map((f) => `${f.function}\n    ${f.file}:${f.line}`).join('\n'))
      : h('div', { class: 'sub' }, 'the trace recorded no stack for this change'));
}

function legend() {
  return h('div', { class: 'legend', id: 'lanes-legend' }, Object.entries(STATE_COLOURS).map(([k, c]) => h('span', {}, h('i', { style: `background:${c}` }), k)));
}
