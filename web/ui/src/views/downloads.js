// Downloads: the raw artifacts (for go tool pprof and go tool trace), and
// the report and postmortem of the capture.
import { h, fmtNum, fmtBytes } from '../util.js';

export async function downloadsView(main, ctx) {
  const d = await ctx.detail();
  const base = `/api/captures/${ctx.id}`;
  const link = (href, label) => h('a', { href, download: '', class: 'button' }, label);
  const hint = (name) => {
    if (/trace/.test(name)) return 'go tool trace ' + name;
    if (/\.pb\.gz$|\.pprof$/.test(name)) return 'go tool pprof -http=: ' + name;
    return '';
  };
  main.append(
    h('section', { class: 'panel' }, h('h2', {}, 'Report and postmortem'),
      h('div', { class: 'actions', id: 'report-downloads' },
        link(`${base}/report?format=html&download=1`, 'Report (HTML)'),
        link(`${base}/report?format=md&download=1`, 'Report (Markdown)'),
        link(`${base}/report?format=json&download=1`, 'Report (JSON)'),
        link(`${base}/report?format=html&postmortem=1&download=1`, 'Postmortem (HTML)'),
        link(`${base}/report?format=md&postmortem=1&download=1`, 'Postmortem (Markdown)'))),
    h('section', { class: 'panel' }, h('h2', {}, 'Raw artifacts'),
      d.raw.length
        ? h('table', { class: 'grid', id: 'raw-table' },
          h('thead', {}, h('tr', {}, h('th', {}, 'file'), h('th', {}, 'open with'))),
          h('tbody', {}, d.raw.map((name) => h('tr', {},
            h('td', {}, h('a', { href: `${base}/raw/${encodeURIComponent(name)}`, download: name, class: 'mono raw-link' }, name)),
            h('td', { class: 'mono sub' }, hint(name))))))
        : h('p', { class: 'empty' }, 'This capture kept no raw artifacts.')),
    h('section', { class: 'panel' }, h('h2', {}, 'Tables'),
      h('table', { class: 'grid', id: 'tables-table' },
        h('thead', {}, h('tr', {}, ['table', 'rows', 'batches', 'size', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, d.tables.map((t) => h('tr', {},
          h('td', { class: 'mono' }, t.name), h('td', { class: 'num', 'data-rows': String(t.rows) }, fmtNum(t.rows)),
          h('td', { class: 'num' }, fmtNum(t.batches)), h('td', { class: 'num' }, fmtBytes(t.bytes)),
          h('td', { class: 'bad' }, t.truncated ? 'truncated: ' + t.truncated : '')))))));
  return null;
}
