// Ancestry: the goroutine creation tree, collapsible, with counts per
// creator, search, and a jump from a suspect to its chain.
import { api, h, clear, fmtNum, fmtTime, enc, debounce } from '../util.js';

export async function ancestryView(main, ctx) {
  const sid = ctx.params.get('suspect');
  let suspect = null;
  let members = null;
  let tree;
  if (sid) {
    const rep = await api(`/api/captures/${ctx.id}/report`);
    suspect = rep.suspects.find((s) => s.id === sid) || null;
    if (suspect && suspect.kind === 'goroutine') {
      tree = await api(`/api/captures/${ctx.id}/ancestry?suspect=${enc(sid)}`).catch(() => null);
      members = tree && tree.suspect;
    }
  }
  if (!tree) tree = await api(`/api/captures/${ctx.id}/ancestry`);
  const aliveAt = tree.alive_at ? ` · alive at ${fmtTime(tree.alive_at)}` : '';
  const search = h('input', { type: 'search', id: 'ancestry-search', placeholder: 'search functions', value: ctx.params.get('q') || '' });
  const status = h('span', { class: 'sub', id: 'ancestry-status' });
  const root = h('ul', { class: 'tree', id: 'ancestry-tree' });
  main.append(h('section', { class: 'panel' },
    h('div', { class: 'toolbar' },
      h('b', {}, `${fmtNum(tree.goroutines)} goroutines`), h('span', { class: 'sub', id: 'ancestry-alive-at' }, ` from ${(tree.sources || []).join(', ') || 'no source'}${aliveAt}`),
      search, status,
      h('button', { type: 'button', onclick: () => setAll(true) }, 'expand all'),
      h('button', { type: 'button', onclick: () => setAll(false) }, 'collapse all')),
    suspect && suspect.kind === 'heap' ? h('p', { class: 'chip active', id: 'ancestry-suspect', 'data-paths': String(coveredPaths(suspect).length) }, `goroutines running the allocation path of ${suspect.id}: `, coversText(suspect)) : null,
    suspect && suspect.kind !== 'heap' ? h('p', { class: 'chip active', id: 'ancestry-suspect' }, `chain of suspect ${suspect.id}: `, [...new Set([suspect.location, suspect.creator, ...(suspect.ancestry || [])].filter(Boolean))].join(' ← '),
      members ? h('span', { id: 'ancestry-members', 'data-alive': String(members.alive) }, ` · ${fmtNum(members.alive)} of its goroutines alive at ${fmtTime(members.alive_at)}`) : null) : null,
    root));

  // The nodes holding each goroutine suspect's members (alive at
  // alive_at), from the one selection the suspect's count uses: only
  // these are drawn as leaking.
  const key = (n) => n.function + '\u0000' + (n.created_by || '');
  const heldBy = new Map();
  for (const m of tree.suspects || []) {
    for (const n of m.nodes || []) {
      if (!heldBy.has(key(n))) heldBy.set(key(n), []);
      heldBy.get(key(n)).push({ id: m.id, members: n.members });
    }
  }
  // Build DOM nodes lazily: children are rendered when first expanded.
  const items = [];
  const build = (node, parentItem, depth) => {
    const li = h('li', { class: 'node' });
    const item = { node, li, parent: parentItem, open: false, built: false, kids: h('ul', {}) };
    items.push(item);
    const toggle = h('button', { type: 'button', class: 'toggle', 'aria-label': 'expand' }, node.children && node.children.length ? '▸' : '·');
    const inSuspects = heldBy.get(key(node)) || [];
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
    item.depth = depth;
    return item;
  };
  const ensureBuilt = (item) => {
    if (item.built) return;
    item.built = true;
    for (const c of item.node.children || []) item.kids.append(build(c, item, item.depth + 1).li);
  };
  const setOpen = (item, open) => {
    if (!(item.node.children || []).length) return;
    if (open) ensureBuilt(item);
    item.open = open;
    item.kids.hidden = !open;
    item.toggle.textContent = open ? '▾' : '▸';
  };
  const topItems = (tree.roots || []).map((n) => build(n, null, 0));
  topItems.forEach((it) => { root.append(it.li); it.kids.hidden = true; });
  const buildAll = () => {
    for (let i = 0; i < items.length; i++) ensureBuilt(items[i]);
  };
  const setAll = (open) => {
    buildAll();
    items.forEach((it) => setOpen(it, open));
  };

  const reveal = (match) => {
    buildAll();
    let n = 0, first = null;
    for (const it of items) {
      it.row.classList.remove('match');
      it.kids.hidden = true;
      it.open = false;
      it.toggle.textContent = (it.node.children || []).length ? '▸' : '·';
    }
    for (const it of items) {
      if (!match(it.node)) continue;
      n++;
      it.row.classList.add('match');
      first = first || it;
      for (let p = it.parent; p; p = p.parent) setOpen(p, true);
    }
    return { n, first };
  };
  const doSearch = () => {
    const term = search.value.trim().toLowerCase();
    if (!term) { status.textContent = ''; items.forEach((it) => it.row.classList.remove('match')); return; }
    const { n, first } = reveal((node) => (node.label || node.function).toLowerCase().includes(term) || (node.created_by || '').toLowerCase().includes(term));
    status.textContent = `${n} match${n === 1 ? '' : 'es'}`;
    if (first) first.row.scrollIntoView({ block: 'center' });
  };
  search.addEventListener('input', debounce(doSearch, 200));
  if (suspect) {
    // Mark the nodes the API says hold the suspect's goroutines, and the
    // chain above them.
    // A heap suspect has no goroutines of its own: mark the goroutines
    // whose entry function is on its allocation stack (they run it).
    const held = new Set(((members && members.nodes) || []).map(key));
    const heap = suspect.kind === 'heap';
    const fns = new Set(heap ? allocPath(suspect) : [suspect.creator, ...(suspect.ancestry || [])].filter(Boolean));
    const { n, first } = reveal((node) => (heap ? fns.has(node.function) : held.has(node.function + '\u0000' + (node.created_by || '')) || (!held.size && (fns.has(node.created_by) || fns.has(node.function)))));
    status.textContent = heap ? `${n} node${n === 1 ? '' : 's'} run this allocation path` : `${n} node${n === 1 ? '' : 's'} on the chain`;
    if (first) first.row.scrollIntoView({ block: 'center' });
  } else if (search.value) {
    doSearch();
  } else if (heldBy.size) {
    // Open the path to every node holding a suspect's goroutines.
    const { n } = reveal((node) => heldBy.has(key(node)));
    status.textContent = `${n} node${n === 1 ? '' : 's'} hold suspects' goroutines`;
  } else if (topItems.length <= 3) {
    topItems.forEach((it) => setOpen(it, true));
  }
  return null;
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
