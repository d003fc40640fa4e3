// Flame graphs with d3-flame-graph: any profile, one snapshot, a range or
// a diff of two; search, zoom, focus and ignore a frame, invert, sandwich;
// one suspect's goroutines.
import { select } from 'd3-selection';
import flamegraph, { colorMapper, tooltip as fgTooltip } from 'd3-flame-graph';
import { api, h, clear, fmtValue, fmtTime, fmtNum, enc, debounce } from '../util.js';

const PARAMS = ['profile', 'source', 'value', 'snapshot', 'from', 'to', 'base', 'focus', 'ignore', 'invert', 'sandwich', 'suspect', 'goid', 'mode'];

export async function flameView(main, ctx) {
  const detail = await ctx.detail();
  const p = ctx.params;
  const profiles = Object.keys(detail.profiles || {}).sort();
  const options = profiles.map((name) => ({ key: name, profile: name, source: '', label: name, snaps: detail.profiles[name] }));
  if ((detail.dump_snapshots || []).length) {
    options.push({ key: 'goroutine|goroutines', profile: 'goroutine', source: 'goroutines', label: 'goroutine (dump)', snaps: detail.dump_snapshots });
  }
  const defKey = options.some((o) => o.key === 'goroutine') ? 'goroutine' : options.some((o) => o.key === 'goroutine|goroutines') ? 'goroutine|goroutines' : (options[0] && options[0].key) || 'goroutine';
  const curKey = p.get('source') === 'goroutines' ? 'goroutine|goroutines' : (p.get('profile') || defKey);
  const cur = options.find((o) => o.key === curKey) || options[0] || { key: 'goroutine', profile: 'goroutine', source: '', snaps: [] };
  const mode = p.get('mode') || (p.get('base') ? 'diff' : (p.get('from') || p.get('to')) ? 'range' : 'snapshot');

  const go = (changes) => {
    const next = new URLSearchParams(p);
    for (const [k, v] of Object.entries(changes)) {
      next.delete(k);
      if (Array.isArray(v)) v.forEach((x) => next.append(k, x));
      else if (v !== '' && v !== null && v !== undefined && v !== false) next.set(k, v);
    }
    location.hash = `#/c/${ctx.id}/flame?${next}`;
  };
  const snapSelect = (name, value, withLatest) => h('select', { name, onchange: (e) => go({ [name]: e.target.value }) },
    withLatest ? h('option', { value: '' }, 'latest') : h('option', { value: '' }, '—'),
    cur.snaps.map((ts) => h('option', { value: String(ts), selected: String(ts) === value }, fmtTime(ts))));

  const profileSel = h('select', { name: 'profile', id: 'flame-profile', onchange: (e) => {
    const o = options.find((x) => x.key === e.target.value);
    go({ profile: o.profile, source: o.source, snapshot: '', from: '', to: '', base: '', value: '' });
  } }, options.map((o) => h('option', { value: o.key, selected: o.key === cur.key }, o.label)));
  const modeSel = h('select', { name: 'mode', id: 'flame-mode', onchange: (e) => go({ mode: e.target.value, snapshot: '', from: '', to: '', base: '' }) },
    [['snapshot', 'one snapshot'], ['range', 'time range'], ['diff', 'diff of two snapshots']].map(([v, l]) => h('option', { value: v, selected: v === mode }, l)));
  const timeCtl = mode === 'range'
    ? [h('label', {}, 'from ', snapSelect('from', p.get('from'), false)), h('label', {}, 'to ', snapSelect('to', p.get('to'), false))]
    : mode === 'diff'
      ? [h('label', {}, 'base ', snapSelect('base', p.get('base'), false)), h('label', {}, 'vs ', snapSelect('snapshot', p.get('snapshot'), true))]
      : [h('label', {}, 'snapshot ', snapSelect('snapshot', p.get('snapshot'), true))];
  const search = h('input', { type: 'search', id: 'flame-search', placeholder: 'search (regexp)', value: p.get('q') || '' });
  const focus = h('input', { type: 'text', id: 'flame-focus', placeholder: 'focus regexp', value: p.getAll('focus').join('|') });
  const ignore = h('input', { type: 'text', id: 'flame-ignore', placeholder: 'ignore regexp', value: p.getAll('ignore').join('|') });
  const invert = h('input', { type: 'checkbox', id: 'flame-invert', checked: p.get('invert') === '1', onchange: (e) => go({ invert: e.target.checked ? '1' : '' }) });
  const applyFilters = () => go({ focus: focus.value ? [focus.value] : [], ignore: ignore.value ? [ignore.value] : [] });
  focus.addEventListener('change', applyFilters);
  ignore.addEventListener('change', applyFilters);

  const info = h('div', { class: 'flame-info', id: 'flame-info' }, 'Loading…');
  const searchInfo = h('span', { id: 'flame-search-info', class: 'sub' });
  const frameInfo = h('div', { class: 'frame-info', id: 'frame-info' }, 'Click a frame to zoom into it and to focus, ignore or sandwich it.');
  const chips = [];
  if (p.get('suspect')) chips.push(h('span', { class: 'chip active' }, `suspect ${p.get('suspect')}`, h('a', { href: '#', onclick: (e) => { e.preventDefault(); go({ suspect: '' }); } }, ' ×')));
  if (p.getAll('goid').length) chips.push(h('span', { class: 'chip active' }, `goroutine ${p.getAll('goid').join(', ')}`, h('a', { href: '#', onclick: (e) => { e.preventDefault(); go({ goid: [] }); } }, ' ×')));
  if (p.get('sandwich')) chips.push(h('span', { class: 'chip active' }, `sandwich ${p.get('sandwich')}`, h('a', { href: '#', onclick: (e) => { e.preventDefault(); go({ sandwich: '' }); } }, ' ×')));
  const graphs = h('div', { class: 'flame-graphs' });
  main.append(h('section', { class: 'panel' },
    h('div', { class: 'toolbar' },
      h('label', {}, 'profile ', profileSel), modeSel, ...timeCtl,
      h('label', {}, invert, ' invert'),
      focus, ignore, search, searchInfo,
      h('button', { type: 'button', id: 'flame-reset', onclick: () => charts.forEach((c) => c.resetZoom()) }, 'reset zoom'),
      chips),
    info, frameInfo, graphs));

  const q = new URLSearchParams();
  for (const k of PARAMS) {
    if (k === 'mode') continue;
    for (const v of p.getAll(k)) q.append(k, v);
  }
  // A suspect picks its own profile (goroutine or heap) unless one is chosen.
  if (!q.get('profile') && cur.profile && !p.get('suspect')) q.set('profile', cur.profile);
  if (cur.source && !q.get('source') && !p.get('suspect')) q.set('source', cur.source);
  let data;
  try {
    data = await api(`/api/captures/${ctx.id}/flamegraph?${q}`);
  } catch (err) {
    clear(info).append(h('span', { class: 'bad' }, err.message));
    return null;
  }
  // A suspect's graph counts exactly the suspect's figure at its time:
  // say so with the report's own words.
  if (p.get('suspect')) {
    const rep = await api(`/api/captures/${ctx.id}/report`);
    const s = rep.suspects.find((x) => x.id === p.get('suspect'));
    if (s && s.display) info.append(h('p', { id: 'flame-suspect', class: 'chip active' }, `${s.id}: ${s.display.count} at ${s.display.count_at}`));
  }
  const charts = [];
  const trees = data.callers ? [['callers of ' + data.function, data.callers], ['callees of ' + data.function, data.callees]] : [[null, data]];
  for (const n of [...info.childNodes]) if (n.id !== 'flame-suspect') n.remove();
  for (const [title, tree] of trees) {
    const el = h('div', { class: 'flame' });
    const head = h('div', { class: 'flame-head' },
      title ? h('b', {}, title + ': ') : null,
      h('span', {}, `${tree.profile} · ${tree.sample_type} · `),
      h('b', { class: 'flame-total', 'data-total': String(tree.total) }, fmtValue(tree.total, tree.unit)),
      tree.base ? h('span', {}, ` change vs ${fmtTime(tree.base)} (base total ${fmtValue(tree.base_total, tree.unit)})`) : null,
      h('span', { class: 'sub' }, ` · ${tree.count > 1 ? `${tree.count} snapshots ${fmtTime(tree.first)} … ${fmtTime(tree.snapshot)}` : fmtTime(tree.snapshot)}${tree.delta ? ' (accumulated in range)' : ''} · source ${tree.source}`));
    graphs.append(head, el);
    charts.push(drawFlame(el, tree, {
      inverted: tree.inverted,
      onClick: (d) => showFrame(frameInfo, d, tree, go, p),
      searchInfo,
    }));
  }
  const doSearch = () => charts.forEach((c) => (search.value ? c.search(search.value) : c.clear()));
  search.addEventListener('input', debounce(doSearch, 150));
  if (search.value) doSearch();
  return () => charts.forEach((c) => c.destroy());
}

function drawFlame(el, tree, opts) {
  const width = Math.max(400, el.clientWidth || 1000);
  const tip = fgTooltip.defaultFlamegraphTooltip().text((d) => {
    const pct = tree.root.v ? ((100 * d.data.v) / tree.root.v).toFixed(2) : '0';
    const delta = 'd' in d.data ? ` (change ${fmtValue(d.data.d, tree.unit)})` : '';
    return `${d.data.n}: ${fmtValue(d.data.v, tree.unit)} (${pct}%)${delta}`;
  });
  const chart = flamegraph()
    .width(width)
    .cellHeight(18)
    .transitionDuration(300)
    .minFrameSize(1)
    .inverted(!!opts.inverted)
    .sort(true)
    .tooltip(tip)
    .onClick(opts.onClick)
    .setSearchHandler((results, sum, total) => {
      opts.searchInfo.textContent = results.length ? `search: ${fmtNum(results.length)} frames, ${fmtValue(sum, tree.unit)} of ${fmtValue(total, tree.unit)} (${((100 * sum) / (total || 1)).toFixed(1)}%)` : '';
    });
  if (tree.base) chart.setColorMapper(colorMapper.differentialColorMapper);
  select(el).datum(tree.root).call(chart);
  return chart;
}

// showFrame describes the clicked frame and offers focus, ignore and
// sandwich on it.
function showFrame(el, d, tree, go, p) {
  const name = d.data.n;
  const re = '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
  const pct = tree.root.v ? ((100 * d.data.v) / tree.root.v).toFixed(2) : '0';
  clear(el).append(h('span', {},
    h('b', { class: 'mono' }, name), ' ',
    d.data.f ? h('span', { class: 'sub mono' }, `${d.data.f}${d.data.ln ? ':' + d.data.ln : ''} `) : null,
    h('span', {}, `total ${fmtValue(d.data.v, tree.unit)} (${pct}%), self ${fmtValue(d.data.s || 0, tree.unit)} `),
    name !== 'root' ? h('span', { class: 'frame-actions' },
      h('button', { type: 'button', 'data-action': 'focus', onclick: () => go({ focus: [...p.getAll('focus'), re] }) }, 'focus'),
      h('button', { type: 'button', 'data-action': 'ignore', onclick: () => go({ ignore: [...p.getAll('ignore'), re] }) }, 'ignore'),
      h('button', { type: 'button', 'data-action': 'sandwich', onclick: () => go({ sandwich: name, invert: '' }) }, 'sandwich')) : null));
}

export { enc };
