// Fleet: the captures of one service (same executable or module) across
// nodes and builds — which leaks appear on how many nodes, in which
// builds, since when. Every figure and sentence is from GET /api/fleet,
// which takes them from the captures' reports.
import { api, h, fmtTime, enc, withCode } from '../util.js';

export async function fleetView(main, params) {
  const service = params.get('service');
  if (!service) return servicesList(main);
  const v = await api('/api/fleet?service=' + enc(service));
  const nodes = v.nodes.length + (v.unknown_node_captures ? 1 : 0);
  main.append(h('section', { class: 'panel', id: 'fleet-service', 'data-service': v.service },
    h('h1', {}, 'Service ', h('code', {}, v.service)),
    h('p', { class: 'sub', id: 'fleet-summary' }, v.summary)));
  const leaks = v.leaks.length
    ? h('table', { class: 'grid', id: 'fleet-leaks' },
      h('thead', {}, h('tr', {}, ['Leak', 'Nodes', 'Captures', 'Builds', 'Since (onset)', 'Last seen', 'Worst count', 'Worst growth', 'Score'].map((t) => h('th', {}, t)))),
      h('tbody', {}, v.leaks.map((l) => leakRow(l, nodes))))
    : h('p', { class: 'empty' }, 'No leak in any capture of this service.');
  main.append(h('section', { class: 'panel' }, h('h2', {}, 'Leaks across nodes and builds'), leaks));
  main.append(capturesPanel(v.captures));
  return null;
}

// leakRow is one leak: its nodes, captures, builds, onset and the worst
// capture's figures (count, growth and score all from that capture).
function leakRow(l, nodes) {
  const on = l.nodes.length + (l.unknown_node_captures ? 1 : 0);
  return h('tr', { 'data-location': l.location, 'data-nodes': String(l.nodes.length) },
    h('td', {}, h('b', {}, l.pattern), ' ', h('code', {}, l.location),
      l.origin ? h('div', { class: 'sub' }, 'from ', h('code', {}, l.origin)) : null),
    h('td', { class: 'nodes' }, h('b', { class: on === nodes ? 'count bad' : 'count' }, `${on} of ${nodes}`),
      h('div', { class: 'sub' }, l.display.nodes)),
    h('td', { class: 'captures' }, String(l.captures)),
    h('td', { class: 'builds' }, l.display.builds),
    h('td', { class: 'since' }, l.display.since, h('div', { class: 'sub' }, 'first seen ', fmtTime(l.first_seen))),
    h('td', {}, fmtTime(l.last_seen)),
    h('td', { class: 'num leak-count' }, l.display.count,
      h('div', { class: 'sub' }, h('a', { class: 'worst', href: `#/c/${l.worst.capture}/overview?suspect=${enc(l.worst.suspect)}` }, l.worst.capture))),
    h('td', { class: 'num leak-rate' }, l.display.growth_per_min),
    h('td', { class: 'num leak-score' }, l.display.score));
}

// capturesPanel lists captures, each with its build, what triggered it
// and its first incident in the report's words.
function capturesPanel(caps, title = 'Captures', id = 'fleet-captures') {
  return h('section', { class: 'panel' }, h('h2', {}, title),
    h('table', { class: 'grid', id },
      h('thead', {}, h('tr', {}, ['Capture', 'Node', 'Build', 'Start', 'Trigger', 'First incident', 'Suspects'].map((t) => h('th', {}, t)))),
      h('tbody', {}, caps.map((c) => h('tr', { 'data-id': c.id },
        h('td', {}, h('a', { href: `#/c/${c.id}/overview` }, c.id)),
        h('td', { class: 'node' }, c.node || h('span', { class: 'sub' }, 'unknown')),
        h('td', { class: 'build mono' }, c.build || h('span', { class: 'sub' }, 'unknown')),
        h('td', {}, fmtTime(c.start)),
        h('td', { class: 'trigger' }, c.trigger || h('span', { class: 'sub' }, 'by hand')),
        h('td', { class: 'first-incident' }, incidentCell(c)),
        h('td', {}, c.analysed ? String(c.suspects) : '–'))))));
}

function incidentCell(c) {
  if (!c.analysed) return h('span', { class: 'sub' }, 'not analysed');
  return c.incident ? h('a', { href: `#/c/${c.id}/overview` }, withCode(c.incident)) : h('span', { class: 'sub' }, 'no incident');
}

async function servicesList(main) {
  const { services, unidentified } = await api('/api/fleet');
  main.append(h('section', { class: 'panel' }, h('h1', {}, 'Services'),
    services.length
      ? h('table', { class: 'grid', id: 'fleet-services' },
        h('thead', {}, h('tr', {}, ['Service', 'Captures', 'Nodes', 'Last capture'].map((t) => h('th', {}, t)))),
        h('tbody', {}, services.map((s) => h('tr', { 'data-service': s.service },
          h('td', {}, h('a', { href: '#/fleet?service=' + enc(s.service) }, s.service)),
          h('td', {}, String(s.captures)),
          h('td', {}, String(s.nodes), s.unknown_node_captures ? h('div', { class: 'sub' }, `and ${s.unknown_node_captures} on an unknown node`) : null),
          h('td', {}, fmtTime(s.last_capture))))))
      : h('p', { class: 'empty' }, 'No captures of a known service yet.')));
  if (unidentified.length) {
    main.append(capturesPanel(unidentified, 'Captures of an unknown service (no build info or executable name): compared with nothing', 'fleet-unidentified'));
  }
  return null;
}
