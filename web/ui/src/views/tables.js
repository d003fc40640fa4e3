// pprof's tables beside the flame graph: top (flat and cum per function,
// sorted by the API), peek (one function's callers and callees with the
// weight of each call edge) and the source lines of one function with
// their flat and cum. Every figure is the API's (analysis/flame).
import { api, h, fill, fmtValue, fmtTime } from '../util.js';

const pct = (v) => (v === undefined || v === null ? '–' : `${v.toFixed(2)}%`);

// topTable fetches GET /top for the query and returns the table; header
// clicks call onSort(key), row clicks onFunction(name); onMeta gets the
// answer first (what it sums).
export async function topTable(id, query, sort, onSort, onFunction, onMeta) {
  const q = new URLSearchParams(query);
  q.set('sort', sort);
  let t;
  try {
    t = await api(`/api/captures/${id}/top?${q}`);
  } catch (err) {
    return h('p', { class: 'bad' }, err.message);
  }
  onMeta(t);
  const th = (key, label, cls) => h('th', { class: `${cls || ''} ${key && key === t.sort ? 'sorted' : ''}`, 'data-sort': key || null, onclick: key ? () => onSort(key) : null }, label, key === t.sort ? ' ▾' : '');
  return h('table', { class: 'grid top-table', id: 'top-table', 'data-sort': t.sort, 'data-total': String(t.total) },
    h('thead', {}, h('tr', {}, th('flat', 'flat', 'num'), th('', 'flat%', 'num'), th('cum', 'cum', 'num'), th('', 'cum%', 'num'), th('name', 'function'))),
    h('tbody', {}, t.rows.map((r) => h('tr', { class: `clickable${r.own ? ' own' : ''}`, 'data-function': r.function, 'data-flat': String(r.flat), 'data-cum': String(r.cum), onclick: () => onFunction(r.function) },
      h('td', { class: 'num' }, fmtValue(r.flat, t.unit)), h('td', { class: 'num sub' }, pct(r.flat_pct)),
      h('td', { class: 'num' }, fmtValue(r.cum, t.unit)), h('td', { class: 'num sub' }, pct(r.cum_pct)),
      h('td', { class: 'mono' }, r.function, r.own ? h('span', { class: 'tag' }, 'capture') : null)))));
}

// peekPanel shows GET /peek for one function: callers above, callees below.
export function peekPanel(id, query, fn, onFunction) {
  const el = h('section', { class: 'panel peek', id: 'peek-panel', 'data-function': fn }, h('h3', {}, 'Peek: ', h('span', { class: 'mono' }, fn)), 'Loading…');
  const q = new URLSearchParams(query);
  q.set('function', fn);
  api(`/api/captures/${id}/peek?${q}`).then((pk) => {
    const edgeRows = (edges, cls) => edges.map((e) => h('tr', { class: `clickable ${cls}`, 'data-function': e.function, 'data-value': String(e.value), onclick: () => onFunction(e.function) },
      h('td', { class: 'num' }, fmtValue(e.value, pk.unit)), h('td', { class: 'num sub' }, pct(e.pct)), h('td', { class: 'mono' }, cls === 'caller' ? '↑ ' : '↓ ', e.function)));
    fill(el, h('h3', {}, 'Peek: ', h('span', { class: 'mono' }, fn)),
      h('p', { class: 'sub' }, `flat ${fmtValue(pk.flat, pk.unit)} (${pct(pk.flat_pct)}) · cum ${fmtValue(pk.cum, pk.unit)} (${pct(pk.cum_pct)}) · edge shares are of the cum, as in pprof -peek`),
      h('table', { class: 'grid peek-table' },
        h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'value'), h('th', { class: 'num' }, 'of cum'), h('th', {}, 'callers (↑) and callees (↓)'))),
        h('tbody', {},
          pk.callers.length ? edgeRows(pk.callers, 'caller') : h('tr', {}, h('td', { colspan: 3, class: 'sub' }, 'no callers: the stacks start here')),
          h('tr', { class: 'self-row' }, h('td', { class: 'num' }, fmtValue(pk.cum, pk.unit)), h('td', { class: 'num sub' }, '100%'), h('td', { class: 'mono' }, h('b', {}, fn))),
          pk.callees.length ? edgeRows(pk.callees, 'callee') : h('tr', {}, h('td', { colspan: 3, class: 'sub' }, 'no callees: every stack through it ends here')))));
  }).catch((err) => { fill(el, h('p', { class: 'bad' }, `peek of ${fn}: ${err.message}`)); });
  return el;
}

// sourcePanel shows GET /source for one function: its lines with values,
// and their text when the bundle kept the source.
export function sourcePanel(id, query, fn) {
  const el = h('section', { class: 'panel source-view', id: 'source-panel', 'data-function': fn }, h('h3', {}, 'Source: ', h('span', { class: 'mono' }, fn)), 'Loading…');
  const q = new URLSearchParams(query);
  q.set('function', fn);
  api(`/api/captures/${id}/source?${q}`).then((lt) => {
    const text = new Map((lt.text || []).map((l) => [l.line, l.text]));
    const lines = lt.text && lt.text.length ? lt.text.map((l) => l.line) : lt.rows.map((r) => r.line);
    const byLine = new Map(lt.rows.map((r) => [r.line, r]));
    fill(el, h('h3', {}, 'Source: ', h('span', { class: 'mono' }, fn)),
      h('p', { class: 'sub' }, `${lt.file || 'file unknown'} · flat ${fmtValue(lt.flat, lt.unit)} (${pct(lt.flat_pct)}) · cum ${fmtValue(lt.cum, lt.unit)} (${pct(lt.cum_pct)}) · ${lt.sample_type} at ${fmtTime(lt.snapshot)}`),
      lt.source_status && lt.source_status !== 'ok' ? h('p', { class: 'source-missing', id: 'source-status', 'data-status': lt.source_status }, lt.source_detail || `source ${lt.source_status}`) : null,
      h('table', { class: 'grid source-table', id: 'source-table' },
        h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'flat'), h('th', { class: 'num' }, 'cum'), h('th', { class: 'num' }, 'line'), h('th', {}, ''))),
        h('tbody', {}, lines.map((n) => {
          const r = byLine.get(n);
          return h('tr', { class: r ? 'hot' : '', 'data-line': String(n), 'data-flat': r ? String(r.flat) : '0', 'data-cum': r ? String(r.cum) : '0' },
            h('td', { class: 'num' }, r && r.flat ? fmtValue(r.flat, lt.unit) : '.'),
            h('td', { class: 'num' }, r && r.cum ? fmtValue(r.cum, lt.unit) : '.'),
            h('td', { class: 'num sub' }, String(n)),
            h('td', { class: 'mono code' }, text.has(n) ? text.get(n) : ''));
        }))));
  }).catch((err) => { fill(el, h('p', { class: 'bad' }, `source of ${fn}: ${err.message}`)); });
  return el;
}
