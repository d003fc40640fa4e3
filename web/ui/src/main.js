// The workbench: a hash-routed single-page application over the JSON API
// of `leakscope serve` (docs/DESIGN.md).
import 'uplot/dist/uPlot.min.css';
import '../node_modules/d3-flame-graph/dist/d3-flamegraph.css';
import './style.css';
import { h, clear, showError, hideBanner, loading } from './util.js';
import { captureDetail } from './state.js';
import { capturesView } from './views/captures.js';
import { overviewView } from './views/overview.js';
import { flameView } from './views/flame.js';
import { ancestryView } from './views/ancestry.js';
import { timelineView } from './views/timeline.js';
import { downloadsView } from './views/downloads.js';
import { fleetView } from './views/fleet.js';

const views = {
  overview: ['Overview', overviewView],
  flame: ['Flame graphs', flameView],
  ancestry: ['Ancestry', ancestryView],
  timeline: ['Timeline', timelineView],
  downloads: ['Downloads', downloadsView],
};

let cleanup = null;

// parseRoute splits "#/c/ID/view?query" into its parts.
function parseRoute() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  const parts = path.split('/').filter(Boolean);
  return { parts, params: new URLSearchParams(qs || '') };
}

async function render() {
  if (cleanup) { try { cleanup(); } catch { /* view already gone */ } cleanup = null; }
  hideBanner();
  const main = clear(document.getElementById('view'));
  const tabs = clear(document.getElementById('tabs'));
  const crumb = clear(document.getElementById('crumb'));
  const { parts, params } = parseRoute();
  document.body.dataset.view = 'captures';
  if (parts[0] === 'fleet') {
    document.body.dataset.view = 'fleet';
    crumb.append(h('a', { href: '#/' }, 'captures'), ' / ', h('a', { href: '#/fleet' }, 'fleet'));
    cleanup = await run(main, 'Loading the fleet: every capture\'s analysis…', () => fleetView(main, params));
    return;
  }
  if (parts[0] !== 'c' || !parts[1]) {
    crumb.append(h('a', { href: '#/fleet', id: 'fleet-link' }, 'fleet: leaks across nodes'));
    cleanup = await run(main, 'Loading the captures…', () => capturesView(main));
    return;
  }
  const id = parts[1];
  const name = parts[2] || 'overview';
  const entry = views[name];
  if (!entry) { location.hash = `#/c/${id}/overview`; return; }
  document.body.dataset.view = name;
  crumb.append(h('a', { href: '#/' }, 'captures'), ' / ', h('span', { class: 'capid' }, id));
  for (const [key, [label]] of Object.entries(views)) {
    tabs.append(h('a', { href: `#/c/${id}/${key}`, class: key === name ? 'active' : '', 'data-tab': key }, label));
  }
  const ctx = { id, params, detail: () => captureDetail(id) };
  cleanup = await run(main, `Loading the ${entry[0].toLowerCase()} of capture ${id}… A capture opened for the first time is analysed now, which takes seconds.`, () => entry[1](main, ctx));
}

// run runs a view, showing that it works until it is done: a view waits
// on the API, which analyses a capture opened for the first time.
async function run(main, text, fn) {
  const busy = loading(text, 'view-loading');
  main.prepend(busy);
  try {
    return await fn();
  } catch (err) {
    showError(err);
    return null;
  } finally {
    busy.remove();
  }
}

window.addEventListener('hashchange', render);
window.addEventListener('DOMContentLoaded', render);
