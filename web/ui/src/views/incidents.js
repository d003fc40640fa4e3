// Incidents: the report's answer, first on the overview. Each incident is
// shown in the report's words (its summary, origin, rate and heap per
// call, fix and evidence, as the analysis wrote and formatted them), with
// links to its suspects and to their flame graph, ancestry and timeline.
import { h, basename, enc, withCode } from '../util.js';

// incidentsPanel lists the report's incidents, highest score first.
export function incidentsPanel(ctx, rep) {
  const incidents = rep.incidents || [];
  const panel = h('section', { class: 'panel incidents', id: 'incidents' }, h('h2', {}, 'What leaks'));
  if (!incidents.length) {
    panel.append(h('p', { class: 'empty', id: 'no-incident' }, rep.suspects.length
      ? 'No incident: no suspect below could be traced to a place in your code. The suspects are listed below.'
      : 'No incident and no leak suspect: nothing grows or waits long enough to be reported.'));
    return panel;
  }
  const byID = new Map(rep.suspects.map((s) => [s.id, s]));
  incidents.forEach((inc, i) => panel.append(incidentCard(ctx, inc, byID, i === 0)));
  return panel;
}

// incidentCard is one incident: its line, its figures, origin, fix,
// evidence (open for the first) and where to look next.
function incidentCard(ctx, inc, byID, first) {
  const d = inc.display || {};
  return h('article', { class: 'incident', id: `incident-${inc.id}`, 'data-incident': inc.id },
    h('h3', { class: 'incident-title' }, `${inc.id} · ${inc.title || inc.pattern}`, inc.title ? h('span', { class: 'sub' }, ` (${inc.pattern})`) : null,
      h('span', { class: 'score', style: `--score:${inc.score}`, title: 'score' }, d.score)),
    h('p', { class: 'incident-summary' }, withCode(inc.summary)),
    h('dl', { class: 'figures incident-figures' },
      figure('goroutines', d.goroutines, 'goroutines'),
      figure('growth', d.rate, 'rate'),
      figure('per call', d.per_call, 'per-call'),
      figure('heap per call', inc.heap_per_call, 'heap-per-call'),
      figure('heap held', d.retained, 'retained'),
      figure('first seen', d.first_seen, 'first-seen'),
      inc.origin ? figure('origin (your code)', originText(inc.origin), 'origin') : null,
      inc.parked_in ? figure('parked in', h('code', {}, inc.parked_in), 'parked-in') : null),
    inc.fix ? h('p', { class: 'fix incident-fix' }, h('b', {}, 'Fix: '), withCode(inc.fix)) : null,
    incidentLinks(ctx, inc, byID),
    (inc.evidence || []).length ? h('details', { class: 'incident-evidence', open: first }, h('summary', {}, 'Evidence'),
      h('ul', {}, inc.evidence.map((e) => h('li', {}, h('span', { class: 'tag' }, e.kind), ' ', e.detail)))) : null);
}

// figure is one dt/dd pair, none when the report has no such figure.
function figure(label, value, key) {
  if (value === undefined || value === null || value === '') return null;
  return [h('dt', {}, label), h('dd', { 'data-figure': key }, value)];
}

function originText(o) {
  return [h('code', {}, o.function), o.file ? ` (${basename(o.file)}${o.line ? ':' + o.line : ''})` : ''];
}

// incidentLinks opens the incident's suspects, and its first goroutine
// suspect (else its first) in the flame graph, ancestry and timeline.
function incidentLinks(ctx, inc, byID) {
  const members = inc.suspects.map((id) => byID.get(id)).filter(Boolean);
  const top = members.find((s) => s.kind === 'goroutine') || members[0];
  const base = `#/c/${ctx.id}`;
  return h('div', { class: 'actions incident-links' },
    h('span', { class: 'sub' }, 'suspects: '),
    members.map((s) => h('a', { class: 'chip', href: `${base}/overview?suspect=${enc(s.id)}`, 'data-link': 'suspect', 'data-suspect': s.id }, s.id)),
    top ? [
      h('a', { class: 'button', href: `${base}/flame?suspect=${enc(top.id)}`, 'data-link': 'flame' }, `Flame graph of ${top.id}`),
      h('a', { class: 'button', href: `${base}/ancestry?suspect=${enc(top.id)}`, 'data-link': 'ancestry' }, `Ancestry of ${top.id}`),
      top.kind === 'goroutine'
        ? h('a', { class: 'button', href: `${base}/timeline?suspect=${enc(top.id)}`, 'data-link': 'timeline' }, `Timeline of ${top.id}`)
        : h('a', { class: 'button', href: `${base}/timeline`, 'data-link': 'timeline' }, 'Timeline'),
    ] : null);
}
