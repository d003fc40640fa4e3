// Ancestry: the goroutine creation tree, collapsible, with counts per
// creator, search, and a jump from a suspect to its chain. A node holding
// a suspect's goroutines carries that suspect's badge with the members it
// holds, by the node's id in the API's tree (two nodes may share a
// function and creator in different places).
import { api, h, fmtNum, fmtTime, enc, debounce, plural } from '../util.js';

export async function ancestryView(main, ctx) {
  const { tree, suspect, members } = await load(ctx);
  const search = h('input', { type: 'search', id: 'ancestry-search', placeholder: 'search functions', value: ctx.params.get('q') || '' });
  const status = h('span', { class: 'sub', id: 'ancestry-status' });
  const root = h('ul', { class: 'tree', id: 'ancestry-tree' });
  const t = treeView(root, tree);
  main.append(h('section', { class: 'panel' },
    h('div', { class: 'toolbar' },
      h('b', {}, plural(tree.goroutines, 'goroutine')),
      h('span', { class: 'sub', id: 'ancestry-alive-at' }, ` from ${(tree.sources || []).join(', ') || 'no source'}${tree.alive_at ? ` · alive at ${fmtTime(tree.alive_at)}` : ''}`),
      search, status,
      h('button', { type: 'button', onclick: () => t.setAll(true) }, 'expand all'),
      h('button', { type: 'button', onclick: () => t.setAll(false) }, 'collapse all')),
    suspect ? suspectChip(suspect, members) : null,
    root));
  const doSearch = () => {
    const term = search.value.trim().toLowerCase();
    if (!term) { status.textContent = ''; t.unmark(); return; }
    const { n, first } = t.reveal((node) => (node.label || node.function).toLowerCase().includes(term) || (node.created_by || '').toLowerCase().includes(term));
    status.textContent = plural(n, 'match', 'matches');
    if (first) first.row.scrollIntoView({ block: 'center' });
  };
  search.addEventListener('input', debounce(doSearch, 200));
  if (suspect) {
    const { n, first } = t.reveal(suspectMatch(suspect, members));
    status.textContent = suspect.kind === 'heap'
      ? `${plural(n, 'node')} ${n === 1 ? 'runs' : 'run'} this allocation path`
      : `${plural(n, 'node')} on the chain`;
    if (first) first.row.scrollIntoView({ block: 'center' });
  } else if (search.value) {
    doSearch();
  } else if (t.held.size) {
    // Open the path to every node holding a suspect's goroutines.
    const { n } = t.reveal((node) => t.held.has(node.id));
    status.textContent = `${plural(n, 'node')} ${n === 1 ? 'holds' : 'hold'} suspects' goroutines`;
  } else {
    t.openTop();
  }
  return null;
}

// load fetches the tree, with suspect=ID that suspect and where its
// goroutines sit.
async function load(ctx) {
  const sid = ctx.params.get('suspect');
  let suspect = null, members = null, tree = null;
  if (sid) {
    const rep = await api(`/api/captures/${ctx.id}/report`);
    suspect = rep.suspects.find((s) => s.id === sid) || null;
    if (suspect && suspect.kind === 'goroutine') {
      tree = await api(`/api/captures/${ctx.id}/ancestry?suspect=${enc(sid)}`).catch(() => null);
      members = tree && tree.suspect;
    }
  }
  if (!tree) tree = await api(`/api/captures/${ctx.id}/ancestry`);
  return { tree, suspect, members };
}

// suspectChip names the suspect the tree is opened for: its chain (or,
// for heap, the allocation path it covers) and its goroutines alive.
function suspectChip(suspect, members) {
  if (suspect.kind === 'heap') {
    return h('p', { class: 'chip active', id: 'ancestry-suspect', 'data-paths': String(coveredPaths(suspect).length) }, `goroutines running the allocation path of ${suspect.id}: `, coversText(suspect));
  }
  return h('p', { class: 'chip active', id: 'ancestry-suspect' }, `chain of suspect ${suspect.id}: `, [...new Set([suspect.location, suspect.creator, ...(suspect.ancestry || [])].filter(Boolean))].join(' ← '),
    members ? h('span', { id: 'ancestry-members', 'data-alive': String(members.alive) }, ` · ${fmtNum(members.alive)} of its goroutines alive at ${fmtTime(members.alive_at)}`) : null);
}

// suspectMatch picks the nodes to open for a suspect: those the API says
// hold its goroutines; for a heap suspect, the goroutines whose entry is
// on its allocation path (they run it); without members, its chain.
function suspectMatch(suspect, members) {
  if (suspect.kind === 'heap') {
    const fns = new Set(allocPath(suspect));
    return (node) => fns.has(node.function);
  }
  const held = new Set(((members && members.nodes) || []).map((m) => m.node));
  const fns = new Set([suspect.creator, ...(suspect.ancestry || [])].filter(Boolean));
  return (node) => held.has(node.id) || (!held.size && (fns.has(node.created_by) || fns.has(node.function)));
}

// treeView builds the tree into root lazily (children are rendered when
// first opened) and returns what the view steers it with.
function treeView(root, tree) {
  // The nodes holding each goroutine suspect's members (alive at
  // alive_at), by node id: only these are drawn as leaking.
  const held = new Map();
  for (const m of tree.suspects || []) {
    for (const n of m.nodes || []) {
      if (!held.has(n.node)) held.set(n.node, []);
      held.get(n.node).push({ id: m.id, members: n.members });
    }
  }
  const items = [];
  const setOpen = (item, open) => {
    if (!(item.node.children || []).length) return;
    if (open) ensureBuilt(item);
    item.open = open;
    item.kids.hidden = !open;
    item.toggle.textContent = open ? '▾' : '▸';
  };
  const ensureBuilt = (item) => {
    if (item.built) return;
    item.built = true;
    for (const c of item.node.children || []) item.kids.append(nodeItem(c, item, items, held.get(c.id) || [], setOpen).li);
  };
  const top = (tree.roots || []).map((n) => nodeItem(n, null, items, held.get(n.id) || [], setOpen));
  top.forEach((it) => { root.append(it.li); it.kids.hidden = true; });
  const buildAll = () => { for (let i = 0; i < items.length; i++) ensureBuilt(items[i]); };
  return {
    held,
    setAll: (open) => { buildAll(); items.forEach((it) => setOpen(it, open)); },
    unmark: () => items.forEach((it) => it.row.classList.remove('match')),
    openTop: () => { if (top.length <= 3) top.forEach((it) => setOpen(it, true)); },
    // reveal marks the nodes match accepts and opens the path to each.
    reveal: (match) => {
      buildAll();
      let n = 0, first = null;
      for (const it of items) {
        it.row.classList.remove('match');
        setOpen(it, false);
      }
      for (const it of items) {
        if (!match(it.node)) continue;
        n++;
        it.row.classList.add('match');
        first = first || it;
        for (let p = it.parent; p; p = p.parent) setOpen(p, true);
      }
      return { n, first };
    },
  };
}

// nodeItem builds one node's row (its own and subtree counts, and a
// badge per suspect whose goroutines it holds) and registers it in items.
function nodeItem(node, parent, items, inSuspects, setOpen) {
  const li = h('li', { class: 'node', 'data-node': String(node.id) });
  const item = { node, li, parent, open: false, built: false, kids: h('ul', {}) };
  items.push(item);
  const toggle = h('button', { type: 'button', class: 'toggle', 'aria-label': 'expand' }, node.children && node.children.length ? '▸' : '·');
  const sub = node.subtree !== undefined && node.subtree !== node.count;
  const row = h('div', { class: 'row' },
    toggle,
    h('span', { class: node.function ? 'fn mono' : 'fn unknown' }, node.label || node.function),
    node.created_by ? h('span', { class: 'sub' }, ` created by ${node.created_by}`) : null,
    h('span', { class: 'count', 'data-count': String(node.count), title: 'goroutines of this node' }, `${fmtNum(node.count)} · `,
      h('span', { class: inSuspects.length ? 'alive bad' : 'alive' }, `${fmtNum(node.alive)} alive`)),
    sub ? h('span', { class: 'subtree sub', 'data-subtree': String(node.subtree), title: 'with every goroutine created under it' },
      `subtree ${fmtNum(node.subtree)} · ${fmtNum(node.subtree_alive)} alive`) : null,
    inSuspects.map((m) => h('span', { class: 'chip member', 'data-suspect': m.id, 'data-members': String(m.members) }, `${fmtNum(m.members)} in ${m.id}`)));
  toggle.addEventListener('click', () => setOpen(item, !item.open));
  li.append(row, item.kids);
  item.row = row;
  item.toggle = toggle;
  return item;
}

// allocPath lists the functions of a heap suspect's allocation stack,
// innermost first, each once, and where its other stacks part from it
// (paths): every function its flame graph shows on the way.
function allocPath(s) {
  return [...new Set([...(s.stack || []).map((f) => f.function), ...coveredPaths(s).map((p) => p.replace(/:\d+$/, ''))].filter(Boolean))];
}

// coveredPaths are the report's paths of a heap suspect: where its
// stacks part, one per stack (none for a single stack).
function coveredPaths(s) {
  return s.paths || [];
}

// coversText says what a heap suspect covers: its one stack, or its
// stacks (as many as stack_ids) and where they part, as the flame graph
// of the suspect draws them.
function coversText(s) {
  const paths = coveredPaths(s);
  const n = (s.stack_ids || []).length;
  if (n > 1 && paths.length) return `${n} stacks to ${s.location}, through ${paths.join(', ')}`;
  return [...new Set((s.stack || []).map((f) => f.function).filter(Boolean))].join(' ← ');
}
