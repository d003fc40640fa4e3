// Fleet: the captures of one service (same executable or module) across
// nodes — which leaks appear on how many nodes, since when. Every figure
// is from GET /api/fleet, which takes them from the captures' reports.
import { api, h, fmtTime, enc, withCode, plural } from '../util.js';

export async function fleetView(main, params) {
  const service = params.get('service');
  if (!service) return servicesList(main);
  const v = await api('/api/fleet?service=' + enc(service));
  const nodes = v.nodes.length;
  main.append(h('section', { class: 'panel', id: 'fleet-service', 'data-service': v.service },
    h('h1', {}, 'Service ', h('code', {}, v.service)),
    h('p', { class: 'sub', id: 'fleet-summary' },
      `${plural(v.captures.length, 'capture')} on ${plural(nodes, 'node')}: ${v.nodes.join(', ')}`)));
  const leaks = v.leaks.length
    ? h('table', { class: 'grid', id: 'fleet-leaks' },
      h('thead', {}, h('tr', {}, ['Leak', 'Nodes', 'Captures', 'Since', 'Last seen', 'Worst count', 'Worst growth', 'Score'].map((t) => h('th', {}, t)))),
      h('tbody', {}, v.leaks.map((l) => h('tr', { 'data-location': l.location, 'data-nodes': String(l.nodes.length) },
        h('td', {}, h('b', {}, l.pattern), ' ', h('code', {}, l.location),
          l.creator ? h('div', { class: 'sub' }, 'created by ', h('code', {}, l.creator)) : null),
        h('td', { class: 'nodes' }, h('b', { class: l.nodes.length === nodes ? 'count bad' : 'count' }, `${l.nodes.length} of ${nodes}`),
          h('div', { class: 'sub' }, l.nodes.join(', '))),
        h('td', { class: 'captures' }, String(l.captures)),
        h('td', {}, fmtTime(l.first_seen)),
        h('td', {}, fmtTime(l.last_seen)),
        h('td', { class: 'num leak-count' }, l.display.max_count),
        h('td', { class: 'num leak-rate' }, l.display.max_growth_per_min),
        h('td', { class: 'num leak-score' }, l.display.max_score)))))
    : h('p', { class: 'empty' }, 'No leak in any capture of this service.');
  main.append(h('section', { class: 'panel' }, h('h2', {}, 'Leaks across nodes'), leaks));
  main.append(capturesPanel(v));
  return null;
}

// capturesPanel lists the service's captures, each with its first
// incident in the report's words.
function capturesPanel(v) {
  return h('section', { class: 'panel' }, h('h2', {}, 'Captures'),
    h('table', { class: 'grid', id: 'fleet-captures' },
      h('thead', {}, h('tr', {}, ['Capture', 'Node', 'Start', 'First incident', 'Suspects'].map((t) => h('th', {}, t)))),
      h('tbody', {}, v.captures.map((c) => h('tr', { 'data-id': c.id },
        h('td', {}, h('a', { href: `#/c/${c.id}/overview` }, c.id)),
        h('td', {}, c.node || '–'),
        h('td', {}, fmtTime(c.start)),
        h('td', { class: 'first-incident' }, c.incident ? h('a', { href: `#/c/${c.id}/overview` }, withCode(c.incident)) : h('span', { class: 'sub' }, 'no incident')),
        h('td', {}, String(c.suspects)))))));
}

async function servicesList(main) {
  const { services } = await api('/api/fleet');
  main.append(h('section', { class: 'panel' }, h('h1', {}, 'Services'),
    services.length
      ? h('table', { class: 'grid', id: 'fleet-services' },
        h('thead', {}, h('tr', {}, ['Service', 'Captures', 'Nodes', 'Last capture'].map((t) => h('th', {}, t)))),
        h('tbody', {}, services.map((s) => h('tr', { 'data-service': s.service },
          h('td', {}, h('a', { href: '#/fleet?service=' + enc(s.service) }, s.service)),
          h('td', {}, String(s.captures)),
          h('td', {}, String(s.nodes)),
          h('td', {}, fmtTime(s.last_capture))))))
      : h('p', { class: 'empty' }, 'No captures yet.')));
  return null;
}
