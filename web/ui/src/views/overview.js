// Overview: the incidents first, in the report's words; then goroutines,
// live heap and GC over time; the leak suspects ranked, each opening its
// figures, leak-cause timeline, ancestry chain and goroutine states.
import { api, h, fmtNum, fmtTime, basename, enc, plural } from '../util.js';
import { seriesChart, seriesTimes } from './chart.js';
import { incidentsPanel } from './incidents.js';
import { suspectDetail } from './suspect.js';

// Every figure is the API's, as the analysis formatted it (display).
const shown = (s) => s.display || {};

export async function overviewView(main, ctx) {
  const [rep, detail] = await Promise.all([api(`/api/captures/${ctx.id}/report`), ctx.detail().catch(() => null)]);
  const chartEl = h('div', { class: 'chart', id: 'overview-chart' });
  const chartPanel = h('section', { class: 'panel', id: 'series-panel' }, h('h2', {}, 'Goroutines, live heap and GC over time'), chartEl);
  const detailEl = h('div', { id: 'suspect-detail' });
  main.append(summaryPanel(ctx, rep, detail), incidentsPanel(ctx, rep), chartPanel, suspectsPanel(ctx, rep), detailEl);

  // A chart needs two times at least: a single snapshot has no series.
  let chart = null;
  if (seriesTimes(rep.series) >= 2) {
    chart = seriesChart(chartEl, rep.series, { history: detail && detail.history });
    if (detail && detail.history) chartEl.after(historyNote(detail.history));
  } else {
    chartEl.remove();
    chartPanel.append(h('p', { class: 'empty', id: 'no-series' },
      `One snapshot (${fmtTime(rep.bundle.end)}): there is no time series to draw. Growth needs two snapshots or more; capture over time, or ingest dumps taken apart.`));
  }
  const sel = ctx.params.get('suspect');
  const s = rep.suspects.find((x) => x.id === sel);
  if (s) {
    main.querySelector(`tr[data-suspect="${CSS.escape(s.id)}"]`)?.classList.add('selected');
    suspectDetail(detailEl, ctx, rep, s);
    detailEl.scrollIntoView({ block: 'start' });
  }
  return () => { if (chart) { chart.disconnect(); chart.destroy(); } };
}

// summaryPanel names what was captured and when: one start (when the
// capture began), one end, and the node agent's history before it, if any.
function summaryPanel(ctx, rep, detail) {
  const b = rep.bundle;
  const hist = detail && detail.history;
  const name = basename(b.exe) || b.url || b.capture_id || ctx.id;
  return h('section', { class: 'panel summary' },
    h('h1', {}, name, b.node ? h('span', { class: 'sub' }, ` on ${b.node}`) : null),
    h('p', { class: 'sub' }, 'capture ', h('span', { class: 'mono', id: 'capture-id' }, b.capture_id || ctx.id),
      b.build ? [' · build ', h('span', { class: 'mono', id: 'capture-build' }, b.build)] : null),
    b.trigger_text ? h('p', { class: 'trigger', id: 'capture-trigger', 'data-source': b.trigger.source }, h('b', {}, 'Trigger: '), b.trigger_text) : null,
    h('div', { class: 'facts' },
      fact('process', [b.pid ? `pid ${b.pid}` : '', b.url || ''].filter(Boolean).join(' · ') || '–'),
      fact('Go', b.go_version || '–'),
      fact('capture began', fmtTime(detail ? detail.capture_start : b.start), 'capture-start'),
      fact('ended', fmtTime(b.end), 'capture-end'),
      detail && detail.duration ? fact('length', detail.duration, 'capture-length') : null,
      hist ? fact('history before it', `${plural(hist.snapshots.length, 'snapshot')} from ${fmtTime(hist.start)}`, 'history-fact') : null,
      fact('goroutine snapshots', fmtNum(b.goroutine_snapshots), 'goroutine-snapshots'),
      fact('peak goroutines', fmtNum(b.peak_goroutines), 'peak-goroutines'),
      fact('incidents', String((rep.incidents || []).length), 'incident-total'),
      fact('suspects', String(rep.suspects.length), 'suspect-total'),
      fact('sources', (b.sources || []).join(', ') || '–')),
    detail && detail.preliminary ? h('p', { class: 'preliminary-note', id: 'preliminary-note' }, h('span', { class: 'chip preliminary' }, 'preliminary'),
      ' The node agent\'s first answer, sent after the capture\'s first dump: stuck verdicts from that dump, growth from the history before it. The final capture replaces it here when the capture ends.') : null,
    (rep.warnings || []).length ? h('ul', { class: 'warnings' }, rep.warnings.map((w) => h('li', {}, w))) : null);
}

// historyNote says what the chart's shaded band is.
function historyNote(hist) {
  return h('p', { class: 'sub history-note', id: 'history-note' },
    h('span', { class: 'swatch history' }), ` Shaded: ${plural(hist.snapshots.length, 'history snapshot')} the node agent recorded before the trigger, `,
    `from ${fmtTime(hist.start)}; the capture began at ${fmtTime(hist.capture_start)}.`);
}

// suspectsPanel ranks the suspects, each row opening its detail.
function suspectsPanel(ctx, rep) {
  const rows = rep.suspects.map((s, i) => h('tr', {
    'data-suspect': s.id, class: 'clickable',
    onclick: () => { location.hash = `#/c/${ctx.id}/overview?suspect=${enc(s.id)}`; },
  },
  h('td', {}, String(i + 1)),
  h('td', {}, h('b', {}, s.id), s.incident ? h('div', { class: 'sub' }, s.incident) : null),
  h('td', {}, h('div', { class: 'pattern' }, s.pattern), h('div', { class: 'sub' }, s.title)),
  h('td', { class: 'mono' }, s.location, h('div', { class: 'sub' }, `${basename(s.file)}:${s.line}`)),
  h('td', { class: 'num suspect-count', title: `at ${shown(s).count_at}` }, shown(s).count),
  h('td', { class: 'num suspect-rate', title: shown(s).range || '' }, shown(s).rate),
  h('td', { class: 'num' }, h('span', { class: 'score', style: `--score:${s.score}` }, shown(s).score)),
  h('td', { class: 'suspect-first' }, shown(s).first_seen || '–')));
  return h('section', { class: 'panel' }, h('h2', {}, 'Leak suspects'),
    rep.suspects.length
      ? h('table', { class: 'grid', id: 'suspects-table' },
        h('thead', {}, h('tr', {}, ['#', 'id', 'pattern', 'location', 'count', 'growth', 'score', 'first seen'].map((t) => h('th', {}, t)))),
        h('tbody', {}, rows))
      : h('p', { class: 'empty' }, 'No leak suspects: nothing grows or waits long enough to be reported.'));
}

function fact(label, value, id) {
  return h('div', { class: 'fact' }, h('span', { class: 'label' }, label), h('span', { class: 'value', id }, value));
}
