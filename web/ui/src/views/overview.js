// Overview: goroutines, live heap and GC over time; leak suspects ranked,
// each opening its leak-cause timeline and ancestry chain.
import { api, h, clear, fmtNum, fmtTime, basename, enc, withCode } from '../util.js';
import { seriesChart } from './chart.js';
import { lanesPanel } from './lanes.js';

// Every figure is the API's, as the analysis formatted it (display).
const shown = (s) => s.display || {};

// historyNote says what the chart's shaded band is.
function historyNote(hist) {
  return h('p', { class: 'sub history-note', id: 'history-note' },
    h('span', { class: 'swatch history' }), ` Shaded: ${hist.snapshots.length} history snapshots the node agent recorded before the trigger, `,
    `${fmtTime(hist.start)} to ${fmtTime(hist.end)}; the capture began at ${fmtTime(hist.capture_start)}.`);
}

export async function overviewView(main, ctx) {
  const [rep, detail] = await Promise.all([api(`/api/captures/${ctx.id}/report`), ctx.detail().catch(() => null)]);
  const b = rep.bundle;
  const chartEl = h('div', { class: 'chart', id: 'overview-chart' });
  const detailEl = h('div', { id: 'suspect-detail' });
  const rows = rep.suspects.map((s, i) => h('tr', {
    'data-suspect': s.id, class: 'clickable',
    onclick: () => { location.hash = `#/c/${ctx.id}/overview?suspect=${enc(s.id)}`; },
  },
  h('td', {}, String(i + 1)),
  h('td', {}, h('b', {}, s.id)),
  h('td', {}, h('div', { class: 'pattern' }, s.pattern), h('div', { class: 'sub' }, s.title)),
  h('td', { class: 'mono' }, s.location, h('div', { class: 'sub' }, `${basename(s.file)}:${s.line}`)),
  h('td', { class: 'num suspect-count', title: `at ${shown(s).count_at}` }, shown(s).count),
  h('td', { class: 'num suspect-rate', title: shown(s).range || '' }, shown(s).rate),
  h('td', { class: 'num' }, h('span', { class: 'score', style: `--score:${s.score}` }, shown(s).score)),
  h('td', { class: 'suspect-first' }, shown(s).first_seen || '–')));

  main.append(
    h('section', { class: 'panel summary' },
      h('h1', {}, b.capture_id || ctx.id),
      h('div', { class: 'facts' },
        fact('node', b.node || '–'),
        fact('process', [basename(b.exe) || b.url, b.pid ? `pid ${b.pid}` : ''].filter(Boolean).join(' · ') || '–'),
        fact('Go', b.go_version || '–'),
        fact('from', fmtTime(b.start)), fact('to', fmtTime(b.end)),
        fact('peak goroutines', fmtNum(b.peak_goroutines), 'peak-goroutines'),
        fact('suspects', String(rep.suspects.length), 'suspect-total'),
        fact('sources', (b.sources || []).join(', ') || '–')),
      detail && detail.preliminary ? h('p', { class: 'preliminary-note', id: 'preliminary-note' }, h('span', { class: 'chip preliminary' }, 'preliminary'),
        ' The node agent\'s first answer, sent after the capture\'s first dump: stuck verdicts from that dump, growth from the history before it. The final capture replaces it here when the capture ends.') : null,
      (rep.warnings || []).length ? h('ul', { class: 'warnings' }, rep.warnings.map((w) => h('li', {}, w))) : null),
    h('section', { class: 'panel' }, h('h2', {}, 'Goroutines, live heap and GC'), chartEl),
    h('section', { class: 'panel' }, h('h2', {}, 'Leak suspects'),
      rep.suspects.length
        ? h('table', { class: 'grid', id: 'suspects-table' },
          h('thead', {}, h('tr', {}, ['#', 'id', 'pattern', 'location', 'count', 'growth', 'score', 'first seen'].map((t) => h('th', {}, t)))),
          h('tbody', {}, rows))
        : h('p', { class: 'empty' }, 'No leak suspects: nothing grows or waits long enough to be reported.')),
    detailEl);

  const hasSeries = ['goroutines', 'heap_live', 'heap_inuse', 'gc'].some((k) => (rep.series[k] || []).length);
  let chart = null;
  if (hasSeries) chart = seriesChart(chartEl, rep.series, { history: detail && detail.history });
  if (detail && detail.history) chartEl.after(historyNote(detail.history));
  else chartEl.append(h('p', { class: 'empty' }, 'This capture has no time series (a single snapshot).'));

  const sel = ctx.params.get('suspect');
  const s = rep.suspects.find((x) => x.id === sel);
  if (s) {
    main.querySelector(`tr[data-suspect="${CSS.escape(s.id)}"]`)?.classList.add('selected');
    suspectDetail(detailEl, ctx, rep, s);
    detailEl.scrollIntoView({ block: 'start' });
  }
  return () => { if (chart) { chart.disconnect(); chart.destroy(); } };
}

function figure(label, value, id, title) {
  return [h('dt', {}, label), h('dd', { id, title: title || null }, value)];
}

// sourceBlock shows the quoted source kept in the bundle, or why there is
// none (the file changed since the build, or was unreadable).
function sourceBlock(q) {
  if (q.status !== 'ok') {
    return h('p', { class: 'source-missing', id: 'suspect-source', 'data-status': q.status },
      `${q.file}:${q.line}: source ${q.status === 'changed' ? 'changed since build' : 'unavailable'} — ${q.detail || ''}`);
  }
  return h('pre', { class: 'stack source', id: 'suspect-source', 'data-status': q.status },
    (q.lines || []).map((l) => `${l.line === q.line ? '→' : ' '} ${String(l.line).padStart(5)}  ${l.text}`).join('\n'));
}

function fact(label, value, id) {
  return h('div', { class: 'fact' }, h('span', { class: 'label' }, label), h('span', { class: 'value', id }, value));
}

// suspectDetail shows one suspect: what, why, its leak-cause timeline and
// its ancestry chain, with jumps to its flame graph and creation tree.
function suspectDetail(el, ctx, rep, s) {
  clear(el);
  const events = rep.timeline.filter((e) => !e.suspect || e.suspect === s.id);
  const chain = [s.location, ...(s.creator ? [s.creator] : []), ...(s.ancestry || []).filter((f) => f !== s.creator)];
  el.append(h('section', { class: 'panel detail', id: 'suspect-panel', 'data-suspect': s.id },
    h('h2', {}, `${s.id} · ${s.title || s.pattern}`),
    h('p', {}, s.description),
    s.fix ? h('p', { class: 'fix' }, h('b', {}, 'Usual fix: '), withCode(s.fix)) : null,
    h('dl', { class: 'figures', id: 'suspect-figures' },
      figure('count', `${shown(s).count} at ${shown(s).count_at}`, 'fig-count'),
      figure('growth', shown(s).range ? `${shown(s).rate} (${shown(s).range})` : shown(s).rate, 'fig-rate'),
      figure('first seen', shown(s).first_seen || '–', 'fig-first'),
      figure('onset', shown(s).onset || '–', 'fig-onset', s.onset ? s.onset.detail : ''),
      s.object ? figure('what grows', s.object, 'fig-object') : null,
      shown(s).retained ? figure('heap retained', shown(s).retained, 'fig-retained') : null),
    s.source ? sourceBlock(s.source) : null,
    h('div', { class: 'actions' },
      h('a', { class: 'button', href: `#/c/${ctx.id}/flame?suspect=${enc(s.id)}`, id: 'suspect-flame' }, 'Flame graph of these ' + (s.kind === 'heap' ? 'allocations' : 'goroutines')),
      h('a', { class: 'button', href: `#/c/${ctx.id}/ancestry?suspect=${enc(s.id)}`, id: 'suspect-ancestry' }, 'Show in ancestry tree'),
      s.kind === 'goroutine' ? h('a', { class: 'button', href: `#/c/${ctx.id}/timeline?suspect=${enc(s.id)}`, id: 'suspect-timeline-link' }, 'Show in timeline') : null),
    h('div', { class: 'columns' },
      h('div', {},
        h('h3', {}, 'Ancestry chain'),
        h('ol', { class: 'chain', id: 'suspect-chain' }, chain.map((f, i) => h('li', { class: 'mono' },
          i === 0 ? h('span', { class: 'tag' }, s.kind === 'heap' ? 'allocates' : 'parked in') : i === 1 && s.creator ? h('span', { class: 'tag' }, 'created by') : h('span', { class: 'tag' }, 'from'), ' ', f))),
        h('h3', {}, 'Evidence'),
        h('ul', {}, (s.evidence || []).map((e) => h('li', {}, h('span', { class: 'tag' }, e.kind), ' ', e.detail))),
        h('h3', {}, 'Stack'),
        h('pre', { class: 'stack' }, (s.stack || []).map((f) => `${f.function}\n    ${f.file}:${f.line}`).join('\n'))),
      h('div', {},
        h('h3', {}, 'Leak-cause timeline'),
        h('ol', { class: 'events', id: 'suspect-timeline' }, events.map((e) => h('li', { class: e.suspect ? 'mine' : '' },
          h('time', {}, fmtTime(e.ts)), ' ', h('span', { class: `tag ${e.kind || ''}` }, e.kind || 'event'), ' ', e.event)))))));
  if (s.kind === 'goroutine') el.append(lanesPanel(ctx, s));
}
