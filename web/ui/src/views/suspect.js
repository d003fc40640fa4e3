// One suspect on the overview: what, why, its figures as the analysis
// formatted them, its source, leak-cause timeline, ancestry chain,
// evidence and stack, with jumps to its flame graph, ancestry tree and
// timeline, and its goroutines' states from the execution traces.
import { h, clear, fmtTime, enc, withCode } from '../util.js';
import { lanesPanel } from './lanes.js';

const shown = (s) => s.display || {};

// suspectDetail fills el with suspect s of report rep.
export function suspectDetail(el, ctx, rep, s) {
  clear(el);
  el.append(h('section', { class: 'panel detail', id: 'suspect-panel', 'data-suspect': s.id },
    h('h2', {}, `${s.id} · ${s.title || s.pattern}`, s.incident ? h('span', { class: 'sub' }, ` (incident ${s.incident})`) : null),
    h('p', {}, s.description),
    s.fix ? h('p', { class: 'fix' }, h('b', {}, 'Usual fix: '), withCode(s.fix)) : null,
    figures(s),
    s.source ? sourceBlock(s.source) : null,
    links(ctx, s),
    h('div', { class: 'columns' }, h('div', {}, chainList(s), evidenceList(s), stackBlock(s)), h('div', {}, causeTimeline(rep, s)))));
  if (s.kind === 'goroutine') el.append(lanesPanel(ctx, s));
}

function figure(label, value, id, title) {
  return [h('dt', {}, label), h('dd', { id, title: title || null }, value)];
}

function figures(s) {
  return h('dl', { class: 'figures', id: 'suspect-figures' },
    figure('count', `${shown(s).count} at ${shown(s).count_at}`, 'fig-count'),
    figure('growth', shown(s).range ? `${shown(s).rate} (${shown(s).range})` : shown(s).rate, 'fig-rate'),
    figure('first seen', shown(s).first_seen || '–', 'fig-first'),
    figure('onset', shown(s).onset || '–', 'fig-onset', s.onset ? s.onset.detail : ''),
    s.object ? figure('what grows', s.object, 'fig-object') : null,
    shown(s).verdict ? figure('verdict', shown(s).verdict, 'fig-verdict') : null,
    shown(s).retained ? figure('heap retained', shown(s).retained, 'fig-retained') : null);
}

function links(ctx, s) {
  return h('div', { class: 'actions' },
    h('a', { class: 'button', href: `#/c/${ctx.id}/flame?suspect=${enc(s.id)}`, id: 'suspect-flame' }, 'Flame graph of these ' + (s.kind === 'heap' ? 'allocations' : 'goroutines')),
    h('a', { class: 'button', href: `#/c/${ctx.id}/ancestry?suspect=${enc(s.id)}`, id: 'suspect-ancestry' }, 'Show in ancestry tree'),
    s.kind === 'goroutine' ? h('a', { class: 'button', href: `#/c/${ctx.id}/timeline?suspect=${enc(s.id)}`, id: 'suspect-timeline-link' }, 'Show in timeline') : null);
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

// chainList is the suspect's ancestry chain: where it waits (or
// allocates), its creator, and theirs.
function chainList(s) {
  const chain = [s.location, ...(s.creator ? [s.creator] : []), ...(s.ancestry || []).filter((f) => f !== s.creator)];
  const tag = (i) => {
    if (i === 0) return s.kind === 'heap' ? 'allocates' : 'parked in';
    return i === 1 && s.creator ? 'created by' : 'from';
  };
  return [h('h3', {}, 'Ancestry chain'),
    h('ol', { class: 'chain', id: 'suspect-chain' }, chain.map((f, i) => h('li', { class: 'mono' }, h('span', { class: 'tag' }, tag(i)), ' ', f)))];
}

function evidenceList(s) {
  return [h('h3', {}, 'Evidence'),
    h('ul', {}, (s.evidence || []).map((e) => h('li', {}, h('span', { class: 'tag' }, e.kind), ' ', e.detail)))];
}

function stackBlock(s) {
  return [h('h3', {}, 'Stack'),
    h('pre', { class: 'stack' }, (s.stack || []).map((f) => `${f.function}\n    ${f.file}:${f.line}`).join('\n'))];
}

// causeTimeline lists the report's dated events of this suspect and of
// the capture.
function causeTimeline(rep, s) {
  const events = rep.timeline.filter((e) => !e.suspect || e.suspect === s.id);
  return [h('h3', {}, 'Leak-cause timeline'),
    h('ol', { class: 'events', id: 'suspect-timeline' }, events.map((e) => h('li', { class: e.suspect ? 'mine' : '' },
      h('time', {}, fmtTime(e.ts)), ' ', h('span', { class: `tag ${e.kind || ''}` }, e.kind || 'event'), ' ', e.event)))];
}
