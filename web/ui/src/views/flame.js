// Flame graphs with d3-flame-graph: any profile and sample type, one
// snapshot, a range or a diff of two (drawn as change: growth and shrink
// in two colours, widths by the new snapshot, the base or the change);
// the capture's own pprof and trace requests marked or left out; search,
// zoom, focus and ignore a frame, invert, sandwich; one suspect's
// goroutines or allocations; and pprof's tables beside it: top (flat,
// cum, sortable), peek (callers and callees) and the source lines of a
// function. Every figure shown is the API's.
import { select } from 'd3-selection';
import flamegraph, { tooltip as fgTooltip } from 'd3-flame-graph';
import { api, h, clear, fmtValue, fmtTime, fmtNum, enc, debounce, loading } from '../util.js';
import { topTable, peekPanel, sourcePanel } from './tables.js';

// PARAMS are the route parameters the API takes as they are; the others
// (mode, view, widths, peek, list, sort, q) only steer this page.
const PARAMS = ['profile', 'source', 'value', 'snapshot', 'from', 'to', 'base', 'focus', 'ignore', 'invert', 'sandwich', 'suspect', 'goid', 'own'];
const WIDTHS = [['new', 'the new snapshot'], ['base', 'the base'], ['change', 'the change']];

export async function flameView(main, ctx) {
  const detail = await ctx.detail();
  const p = ctx.params;
  const st = routeState(detail, p);
  const go = (changes) => {
    const next = new URLSearchParams(p);
    for (const [k, v] of Object.entries(changes)) {
      next.delete(k);
      if (Array.isArray(v)) v.forEach((x) => next.append(k, x));
      else if (v !== '' && v !== null && v !== undefined && v !== false) next.set(k, v);
    }
    location.hash = `#/c/${ctx.id}/flame?${next}`;
  };
  const ui = toolbar(detail, st, p, go);
  const info = h('div', { class: 'flame-info', id: 'flame-info' }, loading('Loading the flame graph…'));
  const frameInfo = h('div', { class: 'frame-info', id: 'frame-info' }, 'Click a frame to zoom into it and to focus, ignore, sandwich, peek at or list it.');
  const graphs = h('div', { class: 'flame-graphs' });
  const tables = h('div', { class: 'flame-tables', id: 'flame-tables' });
  const charts = [];
  main.append(h('section', { class: 'panel' },
    h('div', { class: 'toolbar' }, ui.controls,
      st.view === 'flame' ? [ui.search, ui.searchInfo, h('button', { type: 'button', id: 'flame-reset', onclick: () => charts.forEach((c) => c.resetZoom()) }, 'reset zoom')] : null,
      chips(p, go)),
    st.mode === 'diff' && !p.get('base') ? h('p', { class: 'hint', id: 'flame-diff-hint' },
      'Diff: choose a base snapshot above to compare with. Until one is chosen this is the graph of the snapshot alone, not a change.') : null,
    info, st.view === 'flame' ? frameInfo : null, graphs, tables));

  const q = apiQuery(p, st);
  const tableQuery = new URLSearchParams(q);
  tableQuery.delete('sandwich');
  tableQuery.delete('invert');
  const openFunction = (fn) => go({ peek: fn, list: fn });
  const showTables = () => {
    if (p.get('peek')) tables.append(peekPanel(ctx.id, tableQuery, p.get('peek'), openFunction));
    if (p.get('list')) tables.append(sourcePanel(ctx.id, tableQuery, p.get('list')));
  };
  if (st.view === 'top') {
    const table = await topTable(ctx.id, tableQuery, p.get('sort') || 'flat', (s) => go({ sort: s }), openFunction, (meta) => {
      ui.sync(meta);
      clear(info).append(head(null, meta, ownNote(meta)));
    });
    if (info.querySelector('.loading')) clear(info);
    graphs.append(table);
    showTables();
    return null;
  }
  const data = await drawGraphs(ctx, { p, q, st, info, graphs, frameInfo, go, ui, charts });
  if (!data) return null;
  showTables();
  const doSearch = () => charts.forEach((c) => (ui.search.value ? c.search(ui.search.value) : c.clear()));
  ui.search.addEventListener('input', debounce(doSearch, 150));
  if (ui.search.value) doSearch();
  return () => charts.forEach((c) => c.destroy());
}

// routeState reads what the route asks for: the profiles to choose from
// (each profile, and the goroutine dumps), the one chosen, the mode
// (one snapshot, a range, a diff), the view and the diff's widths.
function routeState(detail, p) {
  const profiles = Object.keys(detail.profiles || {}).sort();
  const options = profiles.map((name) => ({ key: name, profile: name, source: '', label: name, snaps: detail.profiles[name] }));
  if ((detail.dump_snapshots || []).length) {
    options.push({ key: 'goroutine|goroutines', profile: 'goroutine', source: 'goroutines', label: 'goroutine (dump)', snaps: detail.dump_snapshots });
  }
  const has = (k) => options.some((o) => o.key === k);
  const defKey = has('goroutine') ? 'goroutine' : has('goroutine|goroutines') ? 'goroutine|goroutines' : (options[0] && options[0].key) || 'goroutine';
  const optionOf = (key) => options.find((o) => o.key === key) || options[0] || { key: 'goroutine', profile: 'goroutine', source: '', snaps: [] };
  const key = p.get('source') === 'goroutines' ? 'goroutine|goroutines' : (p.get('profile') || defKey);
  const mode = p.get('mode') || (p.get('base') ? 'diff' : (p.get('from') || p.get('to')) ? 'range' : 'snapshot');
  return {
    options, optionOf, cur: optionOf(key), mode,
    view: p.get('view') === 'top' ? 'top' : 'flame',
    widths: WIDTHS.some(([w]) => w === p.get('widths')) ? p.get('widths') : 'new',
    ownMode: p.get('own') || (mode === 'diff' ? 'hide' : 'mark'),
  };
}

// apiQuery is the flamegraph API's query for the route.
function apiQuery(p, st) {
  const q = new URLSearchParams();
  for (const k of PARAMS) {
    for (const v of p.getAll(k)) q.append(k, v);
  }
  if (!p.get('own')) q.set('own', st.ownMode);
  // A suspect picks its own profile (goroutine or heap) unless one is chosen.
  if (!q.get('profile') && st.cur.profile && !p.get('suspect')) q.set('profile', st.cur.profile);
  if (st.cur.source && !q.get('source') && !p.get('suspect')) q.set('source', st.cur.source);
  return q;
}

// toolbar builds the selectors: view, profile, sample type, mode and its
// snapshots, the capture's own requests, invert, focus and ignore; sync
// makes them say what the API answered (a heap suspect's graph is a heap
// profile even when the route names none).
function toolbar(detail, st, p, go) {
  const keyOf = (profile, source) => (source === 'goroutines' ? 'goroutine|goroutines' : profile);
  const profileSel = h('select', { name: 'profile', id: 'flame-profile', onchange: (e) => {
    const o = st.options.find((x) => x.key === e.target.value);
    go({ profile: o.profile, source: o.source, snapshot: '', from: '', to: '', base: '', value: '', suspect: '', goid: [] });
  } }, st.options.map((o) => h('option', { value: o.key, selected: o.key === st.cur.key }, o.label)));
  const valueSel = h('select', { name: 'value', id: 'flame-value', onchange: (e) => go({ value: e.target.value }) });
  const fillValues = (profile, value) => {
    clear(valueSel).append(...((detail.sample_types || {})[profile] || []).map((v) => h('option', { value: v, selected: v === value }, v)));
    valueSel.hidden = valueSel.options.length < 2;
  };
  fillValues(st.cur.profile, p.get('value'));
  const modeSel = h('select', { name: 'mode', id: 'flame-mode', onchange: (e) => go({ mode: e.target.value, snapshot: '', from: '', to: '', base: '' }) },
    [['snapshot', 'one snapshot'], ['range', 'time range'], ['diff', 'diff of two snapshots']].map(([v, l]) => h('option', { value: v, selected: v === st.mode }, l)));
  const focus = h('input', { type: 'text', id: 'flame-focus', placeholder: 'focus regexp', value: p.getAll('focus').join('|') });
  const ignore = h('input', { type: 'text', id: 'flame-ignore', placeholder: 'ignore regexp', value: p.getAll('ignore').join('|') });
  const applyFilters = () => go({ focus: focus.value ? [focus.value] : [], ignore: ignore.value ? [ignore.value] : [] });
  focus.addEventListener('change', applyFilters);
  ignore.addEventListener('change', applyFilters);
  // The capture's own pprof and trace requests: left out of a diff unless
  // asked for (they are much of a heap's growth between two snapshots),
  // marked in grey otherwise.
  const own = h('input', { type: 'checkbox', id: 'flame-own', checked: st.ownMode === 'hide', onchange: (e) => go({ own: e.target.checked ? 'hide' : 'mark' }) });
  const invert = h('input', { type: 'checkbox', id: 'flame-invert', checked: p.get('invert') === '1', onchange: (e) => go({ invert: e.target.checked ? '1' : '' }) });
  const viewTabs = h('span', { class: 'seg', id: 'flame-views' },
    [['flame', 'flame graph'], ['top', 'top table']].map(([v, l]) => h('a', { href: '#', class: v === st.view ? 'active' : '', 'data-view': v, onclick: (e) => { e.preventDefault(); go({ view: v === 'flame' ? '' : v }); } }, l)));
  const controls = [viewTabs, h('label', {}, 'profile ', profileSel), valueSel, modeSel, ...timeControls(st, p, go),
    h('label', { title: 'net/http/pprof, runtime/pprof and runtime/trace stacks: the capture\'s own requests to the target' }, own, ' leave out the capture\'s own requests'),
    st.view === 'flame' ? h('label', {}, invert, ' invert') : null, focus, ignore];
  const sync = (tree) => {
    const key = keyOf(tree.profile, tree.source);
    if (st.options.some((o) => o.key === key) && key !== st.cur.key) {
      st.cur = st.optionOf(key);
      profileSel.value = key;
    }
    fillValues(tree.profile, tree.sample_type);
  };
  return {
    controls, sync,
    search: h('input', { type: 'search', id: 'flame-search', placeholder: 'search (regexp)', value: p.get('q') || '' }),
    searchInfo: h('span', { id: 'flame-search-info', class: 'sub' }),
  };
}

// timeControls are the snapshot selectors of the mode.
function timeControls(st, p, go) {
  const snapSelect = (name, value, withLatest) => h('select', { name, id: `flame-${name}`, onchange: (e) => go({ [name]: e.target.value }) },
    withLatest ? h('option', { value: '' }, 'latest') : h('option', { value: '' }, '—'),
    st.cur.snaps.map((ts) => h('option', { value: String(ts), selected: String(ts) === value }, fmtTime(ts))));
  if (st.mode === 'range') return [h('label', {}, 'from ', snapSelect('from', p.get('from'), false)), h('label', {}, 'to ', snapSelect('to', p.get('to'), false))];
  if (st.mode !== 'diff') return [h('label', {}, 'snapshot ', snapSelect('snapshot', p.get('snapshot'), true))];
  return [h('label', {}, 'base ', snapSelect('base', p.get('base'), false)), h('label', {}, 'vs ', snapSelect('snapshot', p.get('snapshot'), true)),
    h('label', {}, 'widths by ', h('select', { id: 'flame-widths', onchange: (e) => go({ widths: e.target.value }) },
      WIDTHS.map(([v, l]) => h('option', { value: v, selected: v === st.widths }, l))))];
}

// chips name the filters the route applies, each with a way to drop it.
function chips(p, go) {
  const chip = (text, clearIt) => h('span', { class: 'chip active' }, text, h('a', { href: '#', onclick: (e) => { e.preventDefault(); go(clearIt); } }, ' ×'));
  return [
    p.get('suspect') ? chip(`suspect ${p.get('suspect')}`, { suspect: '' }) : null,
    p.getAll('goid').length ? chip(`goroutine ${p.getAll('goid').join(', ')}`, { goid: [] }) : null,
    p.get('sandwich') ? chip(`sandwich ${p.get('sandwich')}`, { sandwich: '' }) : null,
  ];
}

// drawGraphs fetches the graph (a sandwich is two: callers and callees)
// and draws it; a suspect's graph says what it counts in the report's
// words. It returns the API's answer, or null after showing its error.
async function drawGraphs(ctx, o) {
  let data;
  try {
    data = await api(`/api/captures/${ctx.id}/flamegraph?${o.q}`);
  } catch (err) {
    clear(o.info).append(h('span', { class: 'bad' }, err.message));
    return null;
  }
  clear(o.info);
  // A suspect's graph counts exactly the suspect's figure at its time.
  if (o.p.get('suspect')) {
    const rep = await api(`/api/captures/${ctx.id}/report`);
    const s = rep.suspects.find((x) => x.id === o.p.get('suspect'));
    if (s && s.display) o.info.append(h('p', { id: 'flame-suspect', class: 'chip active' }, `${s.id}: ${s.display.count} at ${s.display.count_at}`));
  }
  const trees = data.callers ? [['callers of ' + data.function, data.callers], ['callees of ' + data.function, data.callees]] : [[null, data]];
  o.ui.sync(trees[0][1]);
  for (const [title, tree] of trees) {
    const el = h('div', { class: 'flame' });
    o.graphs.append(head(title, tree, ownNote(tree)), el);
    o.charts.push(drawFlame(el, tree, {
      inverted: tree.inverted,
      widths: o.st.widths,
      onClick: (d) => showFrame(o.frameInfo, d, tree, o.go, o.p),
      searchInfo: o.ui.searchInfo,
    }));
  }
  if (data.base) o.graphs.append(diffLegend(o.st.widths));
  return data;
}

// head describes one tree (or table): what it sums, its total and time.
function head(title, tree, note) {
  return h('div', { class: 'flame-head' },
    title ? h('b', {}, title + ': ') : null,
    h('span', { class: 'flame-what' }, `${tree.profile} · ${tree.sample_type} · `),
    h('b', { class: 'flame-total', 'data-total': String(tree.total) }, fmtValue(tree.total, tree.unit)),
    tree.base ? h('span', {}, ` change vs ${fmtTime(tree.base)} (base total ${fmtValue(tree.base_total, tree.unit)})`) : null,
    tree.snapshot ? h('span', { class: 'sub' }, ` · ${tree.count > 1 ? `${tree.count} snapshots ${fmtTime(tree.first)} … ${fmtTime(tree.snapshot)}` : fmtTime(tree.snapshot)}${tree.delta ? ' (accumulated in range)' : ''}${tree.source ? ` · source ${tree.source}` : ''}`) : null,
    note);
}

// ownNote says what the capture's own requests held when left out.
function ownNote(tree) {
  const o = tree.own_hidden;
  if (!o) return null;
  return h('div', { class: 'sub own-note', id: 'own-hidden', 'data-total': String(o.total) },
    `left out: ${fmtValue(o.total, tree.unit)}${tree.base ? ` of change (base ${fmtValue(o.base_total, tree.unit)})` : ''} in the capture's own pprof and trace requests to the target`);
}

function diffLegend(widths) {
  const by = Object.fromEntries(WIDTHS)[widths];
  return h('div', { class: 'legend flame-legend', id: 'flame-legend' },
    h('span', {}, h('i', { style: 'background:rgb(230,60,50)' }), 'grew'),
    h('span', {}, h('i', { style: 'background:rgb(60,110,230)' }), 'shrank'),
    h('span', {}, h('i', { style: 'background:rgb(220,220,220)' }), 'unchanged'),
    h('span', {}, h('i', { style: `background:${OWN}` }), 'the capture\'s own requests'),
    h('span', {}, `widths by ${by}`));
}

// widthOf is the layout value of a node in a diff: the new snapshot's
// total (v), the base's (b) or the size of the change (a), as the API
// computed them.
function widthOf(widths) {
  if (widths === 'base') return (d) => d.b || 0;
  if (widths === 'change') return (d) => d.a || 0;
  return (d) => d.v;
}

function drawFlame(el, tree, opts) {
  const width = Math.max(400, el.clientWidth || 1000);
  const diff = !!tree.base;
  const valueOf = diff ? widthOf(opts.widths) : (d) => d.v;
  // The library asks the value of tree data when it lays out and of its
  // hierarchy nodes (which hold the data) when it searches.
  const getValue = (d) => (typeof d.depth === 'number' && d.data ? valueOf(d.data) : valueOf(d)) || 0;
  let maxChange = 0;
  if (diff) {
    const walk = (n) => { if (n !== tree.root) maxChange = Math.max(maxChange, Math.abs(n.d || 0)); (n.c || []).forEach(walk); };
    walk(tree.root);
  }
  const tip = fgTooltip.defaultFlamegraphTooltip().text((d) => {
    const x = d.data;
    if (diff) return `${x.n}: now ${fmtValue(x.v, tree.unit)}, base ${fmtValue(x.b || 0, tree.unit)}, change ${fmtValue(x.d || 0, tree.unit)}${x.o ? ' · the capture\'s own request' : ''}`;
    const pct = tree.root.v ? ((100 * x.v) / tree.root.v).toFixed(2) : '0';
    return `${x.n}: ${fmtValue(x.v, tree.unit)} (${pct}%)${x.o ? ' · the capture\'s own request' : ''}`;
  });
  const chart = flamegraph()
    .width(width)
    .cellHeight(18)
    .transitionDuration(300)
    .minFrameSize(1)
    .inverted(!!opts.inverted)
    .sort(true)
    .getValue(getValue)
    .tooltip(tip)
    .onClick(opts.onClick)
    .setSearchHandler((results, sum, total) => {
      opts.searchInfo.textContent = results.length ? `search: ${fmtNum(results.length)} frames, ${fmtValue(sum, tree.unit)} of ${fmtValue(total, tree.unit)} (${((100 * sum) / (total || 1)).toFixed(1)}%)` : '';
    })
    .setColorMapper((d, original) => {
      if (d.highlight) return original;
      if (d.data.o) return OWN;
      if (!diff) return original;
      return changeColour(d.data.d || 0, maxChange);
    });
  select(el).datum(tree.root).call(chart);
  el.dataset.widths = diff ? opts.widths : 'total';
  return chart;
}

// OWN colours the capture's own requests in the target: a green no
// change colour (red, blue, the grey of unchanged) comes near.
const OWN = 'rgb(150,200,150)';

// changeColour: red for growth, blue for shrink, deeper the larger the
// change against the largest one drawn; grey when unchanged.
function changeColour(d, maxChange) {
  if (!d || !maxChange) return 'rgb(220,220,220)';
  const k = Math.min(1, Math.abs(d) / maxChange);
  const t = Math.round(225 - 175 * Math.sqrt(k));
  return d > 0 ? `rgb(240,${t},${t - 10})` : `rgb(${t - 10},${t + 10},240)`;
}

// showFrame describes the clicked frame and offers focus, ignore,
// sandwich, peek and list on it.
function showFrame(el, d, tree, go, p) {
  const x = d.data;
  const name = x.n;
  const re = '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
  const values = tree.base
    ? `now ${fmtValue(x.v, tree.unit)}, base ${fmtValue(x.b || 0, tree.unit)}, change ${fmtValue(x.d || 0, tree.unit)}, self change ${fmtValue(x.s || 0, tree.unit)} `
    : `total ${fmtValue(x.v, tree.unit)} (${tree.root.v ? ((100 * x.v) / tree.root.v).toFixed(2) : '0'}%), self ${fmtValue(x.s || 0, tree.unit)} `;
  clear(el).append(h('span', {},
    h('b', { class: 'mono' }, name), ' ',
    x.f ? h('span', { class: 'sub mono' }, `${x.f}${x.ln ? ':' + x.ln : ''} `) : null,
    h('span', {}, values),
    x.o ? h('span', { class: 'tag' }, 'the capture\'s own request') : null,
    name !== 'root' ? h('span', { class: 'frame-actions' },
      h('button', { type: 'button', 'data-action': 'focus', onclick: () => go({ focus: [...p.getAll('focus'), re] }) }, 'focus'),
      h('button', { type: 'button', 'data-action': 'ignore', onclick: () => go({ ignore: [...p.getAll('ignore'), re] }) }, 'ignore'),
      h('button', { type: 'button', 'data-action': 'sandwich', onclick: () => go({ sandwich: name, invert: '' }) }, 'sandwich'),
      h('button', { type: 'button', 'data-action': 'peek', onclick: () => go({ peek: name, list: name }) }, 'peek & source')) : null));
}

export { enc };
