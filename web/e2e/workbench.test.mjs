// End-to-end test of the workbench in headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core). It is started by
// e2e_test.go, which runs `leakscope serve` on a free loopback port with
// an empty data directory and makes a real capture bundle; the variables
// below say where. Every view is opened, what it shows is checked against
// the API's JSON, and a screenshot of each is written to
// LEAKSCOPE_SCREENSHOTS (web/e2e/screenshots by default).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { evaluateUntil } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const archive = process.env.LEAKSCOPE_BUNDLE_ARCHIVE;
const sampleArchive = process.env.LEAKSCOPE_SAMPLE_ARCHIVE;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!base || !archive) throw new Error('LEAKSCOPE_URL and LEAKSCOPE_BUNDLE_ARCHIVE must be set (run through go test ./web/e2e/)');
mkdirSync(shots, { recursive: true });

let browser, page, id, sampleID;
const consoleErrors = [];

const getJSON = async (path) => {
  const res = await fetch(base + path);
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${res.status} ${text}`);
  return JSON.parse(text);
};
const nf = new Intl.NumberFormat('en-US');
const shot = (name) => page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });

before(async () => {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  // The workbench must work offline: refuse every request not to the server.
  await page.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
});

after(async () => {
  if (browser) await browser.close();
});

test('captures: upload through the page, list shows it', async () => {
  await page.goto(base + '/');
  await page.waitForSelector('#dropzone');
  const before = await getJSON('/api/captures');
  await page.setInputFiles('#upload-input', archive);
  await page.waitForFunction((n) => document.querySelectorAll('#captures-table tbody tr').length > n, before.length, { timeout: 60000 });
  let after = await getJSON('/api/captures');
  let added = after.filter((c) => !before.some((b) => b.id === c.id));
  assert.equal(added.length, 1, 'exactly one new capture');
  id = added[0].id;
  const row = page.locator(`#captures-table tr[data-id="${id}"]`);
  await row.waitFor();
  // Its analysis runs after the upload: the row says so, then the page
  // shows the answer by itself.
  await page.waitForFunction((cid) => {
    const r = document.querySelector(`#captures-table tr[data-id="${cid}"]`);
    return r && r.querySelector('.suspects .count');
  }, id, { timeout: 120000 });
  after = await getJSON('/api/captures');
  added = after.filter((c) => !before.some((b) => b.id === c.id));
  const text = await row.innerText();
  assert.ok(text.includes(added[0].node), `row shows node ${added[0].node}: ${text}`);
  assert.ok(added[0].suspects > 0, 'the leaky sample has suspects');
  assert.equal(await row.locator('.suspects .count').innerText(), String(added[0].suspects));
  // Sizes in binary units, as the API words them.
  assert.equal(await row.locator('.capture-size').innerText(), added[0].size);
  assert.match(added[0].size, /^\d+(\.\d)? (B|KiB|MiB|GiB)$/);
  await shot('captures');
  // The same bundle again: no second entry, the page says it is there.
  await page.setInputFiles('#upload-input', archive);
  await page.waitForFunction(() => /already here/.test(document.querySelector('#banner').textContent), null, { timeout: 60000 });
  const again = await getJSON('/api/captures');
  assert.equal(again.length, after.length, 'a second upload of one bundle adds nothing');
  assert.ok((await page.locator('#banner').innerText()).includes(id), 'the banner names the stored capture');
});

test('overview: series chart and ranked suspects match the report', async () => {
  const rep = await getJSON(`/api/captures/${id}/report`);
  await page.goto(`${base}/#/c/${id}/overview`);
  await page.waitForSelector('#suspects-table');
  await page.waitForSelector('#overview-chart canvas');
  assert.equal(await page.locator('#suspect-total').innerText(), String(rep.suspects.length));
  assert.equal(await page.locator('#peak-goroutines').innerText(), nf.format(rep.bundle.peak_goroutines));
  const ids = await page.locator('#suspects-table tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.suspect));
  assert.deepEqual(ids, rep.suspects.map((s) => s.id), 'suspects in report order');
  const top = rep.suspects[0];
  const topRow = page.locator(`#suspects-table tr[data-suspect="${top.id}"]`);
  assert.ok((await topRow.innerText()).includes(top.location), 'top row names the location');
  // Every figure on the page is the API's (formatted once, by the analysis).
  for (const s of rep.suspects) {
    const row = page.locator(`#suspects-table tr[data-suspect="${s.id}"]`);
    assert.equal(await row.locator('.suspect-count').innerText(), s.display.count, `${s.id} count`);
    assert.equal(await row.locator('.suspect-rate').innerText(), s.display.rate, `${s.id} rate`);
    assert.equal(await row.locator('.suspect-first').innerText(), s.display.first_seen || '–', `${s.id} first seen`);
  }
  await shot('overview');
  await topRow.click();
  await page.waitForSelector('#suspect-panel');
  assert.equal(await page.locator('#fig-count').innerText(), `${top.display.count} at ${top.display.count_at}`);
  assert.equal(await page.locator('#fig-onset').innerText(), top.display.onset || '–');
  if (top.display.verdict) assert.equal(await page.locator('#fig-verdict').innerText(), top.display.verdict);
  else assert.equal(await page.locator('#fig-verdict').count(), 0);
  const chain = await page.locator('#suspect-chain').innerText();
  assert.ok(chain.includes(top.location), 'chain starts at the location');
  if (top.creator) assert.ok(chain.includes(top.creator), 'chain names the creator');
  const tl = await page.locator('#suspect-timeline li').count();
  assert.equal(tl, rep.timeline.filter((e) => !e.suspect || e.suspect === top.id).length, 'leak-cause timeline entries');
  await shot('overview-suspect');
});

test('overview: a suspect\'s goroutine states, lane by lane, as the API answers; hover shows where it blocked', async () => {
  const rep = await getJSON(`/api/captures/${id}/report`);
  const s = rep.suspects.find((x) => x.kind === 'goroutine');
  assert.ok(s, 'the capture has a goroutine suspect');
  const lv = await getJSON(`/api/captures/${id}/lanes?suspect=${encodeURIComponent(s.id)}`);
  assert.ok(lv.lanes.length > 0, `lanes of ${s.id}: ${lv.note}`);
  assert.ok(lv.lanes.some((l) => l.role === 'member'), 'the suspect\'s own goroutines have lanes');
  assert.ok(lv.lanes.some((l) => l.role === 'creator'), 'the goroutines that created them have lanes');
  await page.goto(`${base}/#/c/${id}/overview?suspect=${encodeURIComponent(s.id)}`);
  await page.waitForSelector('#lanes-svg');
  const drawn = await page.locator('#lanes-svg g.lane').evaluateAll((gs) => gs.map((g) => ({
    goid: Number(g.dataset.goid),
    role: g.dataset.role,
    label: g.querySelector('text').textContent,
    segs: [...g.querySelectorAll('rect.seg')].map((r) => ({
      i: Number(r.dataset.index), state: r.dataset.state, reason: r.dataset.reason,
      fill: r.getAttribute('fill'), x: Number(r.getAttribute('x')), w: Number(r.getAttribute('width')),
    })),
  })));
  assert.deepEqual(drawn.map((d) => d.goid), lv.lanes.map((l) => l.goid), 'one lane per goroutine, in the API\'s order');
  // Every segment inside a trace window is drawn, in time order, with
  // the API's state and reason; one colour per state.
  const inWindow = (t) => lv.windows.some((w) => Date.parse(t) >= Date.parse(w.start) && Date.parse(t) <= Date.parse(w.end));
  const fills = {};
  for (const [k, lane] of lv.lanes.entries()) {
    const want = lane.segments.map((seg, i) => ({ i, ...seg })).filter((seg) => inWindow(seg.start) && inWindow(seg.end));
    assert.deepEqual(drawn[k].segs.map((d) => [d.i, d.state, d.reason]), want.map((w) => [w.i, w.state, w.reason || '']), `lane of goroutine ${lane.goid}`);
    assert.equal(drawn[k].role, lane.role);
    assert.ok(lane.label.startsWith(drawn[k].label.replace(/…$/, '')), `lane label ${drawn[k].label} vs ${lane.label}`);
    for (const [j, d] of drawn[k].segs.entries()) {
      fills[d.state] ??= d.fill;
      assert.equal(d.fill, fills[d.state], `${d.state} drawn in one colour`);
      if (j > 0) assert.ok(d.x >= drawn[k].segs[j - 1].x, `goroutine ${lane.goid}: segments left to right`);
    }
  }
  const states = Object.keys(fills);
  assert.ok(states.includes('waiting') && states.includes('running'), `states drawn: ${states}`);
  assert.equal(new Set(Object.values(fills)).size, states.length, 'each state its own colour');
  const legend = await page.locator('#lanes-legend span').evaluateAll((ss) => Object.fromEntries(ss.map((x) => [x.textContent, x.querySelector('i').style.background])));
  const rgb = (hex) => `rgb(${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)})`;
  for (const st of states) assert.equal(legend[st], rgb(fills[st]), `legend colour of ${st}`);
  // Hovering a wait with a stack shows the reason and where it blocked.
  let found = null;
  for (const lane of lv.lanes) {
    const i = lane.segments.findIndex((seg) => seg.state === 'waiting' && seg.stack_id && lv.stacks[String(seg.stack_id)]?.length && inWindow(seg.start) && inWindow(seg.end));
    if (i >= 0) { found = { lane, i, seg: lane.segments[i] }; break; }
  }
  assert.ok(found, 'some wait has its blocking stack');
  await page.locator(`#lanes-svg g.lane[data-goid="${found.lane.goid}"] rect.seg[data-index="${found.i}"]`).hover({ force: true });
  await page.waitForSelector('#lanes-hover-stack');
  const what = await page.locator('#lanes-hover-what').innerText();
  assert.ok(what.includes(`goroutine ${found.lane.goid}`) && what.includes('waiting'), what);
  if (found.seg.reason) assert.ok(what.includes(found.seg.reason), `${what} names ${found.seg.reason}`);
  const stackText = await page.locator('#lanes-hover-stack').innerText();
  for (const f of lv.stacks[String(found.seg.stack_id)]) assert.ok(stackText.includes(f.function), `hover stack shows ${f.function}`);
  await page.locator('#lanes-panel').screenshot({ path: `${shots}/lanes.png` });
});

test('flame graph: totals equal the API, search, focus, invert, sandwich, diff, suspect', async () => {
  const rep = await getJSON(`/api/captures/${id}/report`);
  const api = await getJSON(`/api/captures/${id}/flamegraph?profile=goroutine`);
  await page.goto(`${base}/#/c/${id}/flame?profile=goroutine`);
  await page.waitForSelector('.flame svg');
  assert.equal(await page.locator('.flame-total').first().getAttribute('data-total'), String(api.total));
  const frames = await page.locator('.flame svg g').count();
  assert.ok(frames > 3, `flame graph draws frames (${frames})`);
  await page.fill('#flame-search', 'main\\.');
  await page.waitForFunction(() => document.querySelector('#flame-search-info').textContent.includes('search:'));
  const searchInfo = await page.locator('#flame-search-info').innerText();
  assert.ok(!/NaN|undefined/.test(searchInfo), `search info ${searchInfo}`);
  await shot('flame');

  // Click a frame, then focus on it: the total becomes that frame's total.
  const top = rep.suspects.find((s) => s.kind === 'goroutine') || rep.suspects[0];
  const frame = page.locator('.flame svg g', { hasText: top.location.split('.').pop() }).first();
  await frame.click();
  await page.waitForSelector('#frame-info button[data-action="focus"]');
  await page.click('#frame-info button[data-action="focus"]');
  await page.waitForFunction(() => location.hash.includes('focus='));
  const focused = await getJSON(`/api/captures/${id}/flamegraph?${page.url().split('?')[1]}`);
  await page.waitForSelector(`#flame-focus[value*="poll"]`).catch(() => {});
  await page.waitForSelector(`.flame-total[data-total="${focused.total}"]`);
  assert.ok(focused.total <= api.total);
  await shot('flame-focus');

  // Sandwich of the suspect's location: callers and callees.
  await page.goto(`${base}/#/c/${id}/flame?profile=goroutine&sandwich=${encodeURIComponent(top.location)}`);
  await page.waitForFunction(() => document.querySelectorAll('.flame svg').length === 2);
  await shot('flame-sandwich');

  // Invert.
  await page.goto(`${base}/#/c/${id}/flame?profile=goroutine&invert=1`);
  await page.waitForFunction(() => document.querySelectorAll('.flame svg').length === 1);
  await page.waitForSelector(`.flame-total[data-total="${api.total}"]`);
  assert.ok(await page.locator('#flame-invert').isChecked(), 'invert is on');

  // One suspect's goroutines.
  const sq = await getJSON(`/api/captures/${id}/flamegraph?suspect=${top.id}`);
  await page.goto(`${base}/#/c/${id}/flame?suspect=${top.id}`);
  await page.waitForSelector(`.flame-total[data-total="${sq.total}"]`);
  // The suspect's flame graph counts what its figure counts, at its time.
  assert.equal(sq.total, top.count, 'suspect flame graph total is the suspect count');
  assert.equal(Math.floor(Number(sq.snapshot) / 1e6), Date.parse(top.count_at), 'suspect flame graph is of the suspect\'s snapshot');
  assert.equal(await page.locator('#flame-suspect').innerText(), `${top.id}: ${top.display.count} at ${top.display.count_at}`);
  await shot('flame-suspect');
  // A heap suspect's graph says heap in the profile selector.
  const heap = rep.suspects.find((s) => s.kind === 'heap');
  if (heap) {
    const hq = await getJSON(`/api/captures/${id}/flamegraph?suspect=${heap.id}`);
    await page.goto(`${base}/#/c/${id}/flame?suspect=${heap.id}`);
    await page.waitForSelector(`.flame-total[data-total="${hq.total}"]`);
    assert.equal(await page.locator('#flame-profile').inputValue(), 'heap');
  }
});

test('flame graph: a diff drawn as change, the capture\'s own requests left out, widths by change', async () => {
  const detail = await getJSON(`/api/captures/${id}`);
  const heapSnaps = detail.profiles.heap || [];
  assert.ok(heapSnaps.length >= 2, 'the capture has two heap snapshots to compare');
  const q = `profile=heap&base=${heapSnaps[0]}&snapshot=${heapSnaps[heapSnaps.length - 1]}`;
  const hidden = await getJSON(`/api/captures/${id}/flamegraph?${q}&own=hide`);
  const marked = await getJSON(`/api/captures/${id}/flamegraph?${q}&own=mark`);
  await page.goto(`${base}/#/c/${id}/flame?${q}&mode=diff`);
  await page.waitForSelector('#flame-legend');
  // A diff leaves the capture's own requests out by default and says how much.
  assert.ok(await page.locator('#flame-own').isChecked(), 'own requests left out by default in a diff');
  assert.equal(await page.locator('.flame-total').first().getAttribute('data-total'), String(hidden.total));
  assert.ok(hidden.own_hidden, 'the API says what it left out');
  assert.equal(await page.locator('#own-hidden').getAttribute('data-total'), String(hidden.own_hidden.total));
  assert.equal(hidden.total + hidden.own_hidden.total, marked.total, 'kept + left out = everything');
  // Growth and shrink are drawn in their own colours.
  const grew = (n) => (n.d || 0) > 0;
  const anyGrew = (n) => grew(n) || (n.c || []).some(anyGrew);
  const fills = await page.locator('.flame svg g rect').evaluateAll((rs) => rs.map((r) => r.getAttribute('fill') || r.style.fill));
  if (anyGrew(hidden.root)) assert.ok(fills.some((f) => /^rgb\(240,/.test(f)), `a grown frame is red: ${fills.slice(0, 5)}`);
  await shot('flame-diff');
  // Widths by the change, with the capture's own requests marked in their
  // own colour (green), far from unchanged's grey.
  await page.goto(`${base}/#/c/${id}/flame?${q}&mode=diff&own=mark&widths=change`);
  await page.waitForSelector('.flame[data-widths="change"] svg g');
  assert.equal(await page.locator('.flame-total').first().getAttribute('data-total'), String(marked.total));
  // Each frame drawn is in the own colour exactly when the API marks it the
  // capture's own.
  // Widths are by the size of the change, so an own frame is drawn only when
  // its requests changed by a pixel's worth or more; one of a hundredth of the
  // whole change is drawn for certain.
  const frames = await page.locator('.flame svg g').evaluateAll((gs) => gs
    .filter((g) => g.__data__ && g.__data__.data && g.querySelector('rect'))
    .map((g) => {
      const r = g.querySelector('rect');
      return { n: g.__data__.data.n, own: !!g.__data__.data.o, ownColour: (r.getAttribute('fill') || r.style.fill).replace(/\s/g, '') === 'rgb(150,200,150)' };
    }));
  assert.ok(frames.length > 0, 'the diff draws frames');
  for (const f of frames) assert.equal(f.ownColour, f.own, `${f.n}: own colour ${f.ownColour}, the capture's own ${f.own}`);
  const legend = await page.locator('#flame-legend span i').evaluateAll((is) => is.map((i) => i.style.background.replace(/\s/g, '')));
  assert.ok(legend.includes('rgb(150,200,150)') && legend.includes('rgb(220,220,220)'), `legend ${legend}: unchanged and the capture's own in different colours`);
  const ownNodes = [];
  const walk = (n) => { if (n.o) ownNodes.push(n); (n.c || []).forEach(walk); };
  walk(marked.root);
  const wide = ownNodes.filter((n) => (n.a || 0) * 100 >= (marked.root.a || 0) && n.a > 0);
  if (wide.length) {
    assert.ok(frames.some((f) => f.own), `the capture's own frames (${wide.slice(0, 3).map((n) => n.n)}) are drawn, in their own colour`);
  }
  await shot('flame-diff-change');
});

test('flame graph: top table sorted by the API, peek and source of a function', async () => {
  const flat = await getJSON(`/api/captures/${id}/top?profile=goroutine&own=mark&sort=flat`);
  const cum = await getJSON(`/api/captures/${id}/top?profile=goroutine&own=mark&sort=cum`);
  await page.goto(`${base}/#/c/${id}/flame?profile=goroutine&view=top`);
  await page.waitForSelector('#top-table');
  const rowsOf = () => page.locator('#top-table tbody tr').evaluateAll((rs) => rs.map((r) => [r.dataset.function, Number(r.dataset.flat), Number(r.dataset.cum)]));
  assert.deepEqual(await rowsOf(), flat.rows.map((r) => [r.function, r.flat, r.cum]), 'rows and values are the API\'s, in flat order');
  assert.equal(await page.locator('.flame-total').first().getAttribute('data-total'), String(flat.total));
  await page.click('#top-table th[data-sort="cum"]');
  await page.waitForSelector('#top-table[data-sort="cum"]');
  assert.deepEqual(await rowsOf(), cum.rows.map((r) => [r.function, r.flat, r.cum]), 'sorted by cum as the API sorts');
  await shot('flame-top');
  // Peek and source of the suspect's location.
  const rep = await getJSON(`/api/captures/${id}/report`);
  const top = rep.suspects.find((s) => s.kind === 'goroutine');
  const fn = top ? top.location : cum.rows.find((r) => !r.function.startsWith('runtime.')).function;
  await page.click(`#top-table tr[data-function="${fn}"]`);
  await page.waitForSelector('#peek-panel .peek-table');
  await page.waitForSelector('#source-panel #source-table');
  const peek = await getJSON(`/api/captures/${id}/peek?profile=goroutine&own=mark&function=${encodeURIComponent(fn)}`);
  const callers = await page.locator('#peek-panel tr.caller').evaluateAll((rs) => rs.map((r) => [r.dataset.function, Number(r.dataset.value)]));
  assert.deepEqual(callers, peek.callers.map((e) => [e.function, e.value]), 'callers and edge weights are the API\'s');
  const callees = await page.locator('#peek-panel tr.callee').evaluateAll((rs) => rs.map((r) => [r.dataset.function, Number(r.dataset.value)]));
  assert.deepEqual(callees, peek.callees.map((e) => [e.function, e.value]));
  const lines = await getJSON(`/api/captures/${id}/source?profile=goroutine&own=mark&function=${encodeURIComponent(fn)}`);
  const hot = await page.locator('#source-table tr.hot').evaluateAll((rs) => rs.map((r) => [Number(r.dataset.line), Number(r.dataset.flat), Number(r.dataset.cum)]));
  assert.deepEqual(hot, lines.rows.map((r) => [r.line, r.flat, r.cum]), 'per-line values are the API\'s');
  assert.ok(lines.rows.length > 0 && lines.cum === peek.cum, 'source and peek agree on the cum');
  // The kept source is shown beside the values, as pprof -list does, and
  // the titles keep the function's case.
  assert.ok(lines.source_status, 'the source answer says what the bundle kept');
  if (lines.source_status === 'ok') {
    const shown = await page.locator('#source-table td.code').allInnerTexts();
    assert.ok(lines.text.length > 0 && shown.some((x) => x.trim() === lines.text.find((l) => l.line === lines.rows[0].line).text.trim()), 'source text shown');
  }
  for (const sel of ['#peek-panel h3', '#source-panel h3']) {
    assert.equal(await page.locator(sel).evaluate((e) => getComputedStyle(e).textTransform), 'none', `${sel} keeps the function's case`);
  }
  await shot('flame-peek-source');
});

test('ancestry: tree counts, search and the suspect chain', async () => {
  const tree = await getJSON(`/api/captures/${id}/ancestry`);
  const rep = await getJSON(`/api/captures/${id}/report`);
  await page.goto(`${base}/#/c/${id}/ancestry`);
  await page.waitForSelector('#ancestry-tree');
  const rootCounts = await page.locator('#ancestry-tree > li > .row .count').evaluateAll((els) => els.map((e) => Number(e.dataset.count)));
  assert.deepEqual(rootCounts, tree.roots.map((r) => r.count));
  // Every node is named: a goroutine whose entry no source shows is named
  // by what is known of it, never "?".
  const rootNames = await page.locator('#ancestry-tree > li > .row .fn').allInnerTexts();
  assert.deepEqual(rootNames, tree.roots.map((r) => r.label));
  assert.ok(rootNames.every((n) => n && n !== '?'), `root names: ${rootNames}`);
  // Subtree totals stand beside a node's own count; the path to every
  // node holding a suspect's goroutines is open, and only those nodes draw
  // their alive count as leaking, with as many members as the API counts.
  const subs = await page.locator('#ancestry-tree > li > .row .subtree').evaluateAll((els) => els.map((e) => Number(e.dataset.subtree)));
  assert.deepEqual(subs, tree.roots.filter((r) => r.subtree !== r.count).map((r) => r.subtree));
  const rows = await page.locator('#ancestry-tree .row').evaluateAll((els) => els.map((e) => ({
    bad: !!e.querySelector('.alive.bad'), chips: [...e.querySelectorAll('.member')].map((c) => [c.dataset.suspect, Number(c.dataset.members)]) })));
  assert.ok(rows.every((r) => r.bad === (r.chips.length > 0)), 'alive drawn red exactly where a suspect\'s goroutines are');
  for (const m of tree.suspects) {
    const drawn = rows.flatMap((r) => r.chips).filter(([sid]) => sid === m.id).reduce((a, [, n]) => a + n, 0);
    assert.equal(drawn, m.nodes.reduce((a, n) => a + n.members, 0), `ancestry draws ${m.id}'s members`);
  }
  await page.fill('#ancestry-search', 'main.');
  await page.waitForFunction(() => /match/.test(document.querySelector('#ancestry-status').textContent));
  assert.ok((await page.locator('#ancestry-tree .row.match').count()) > 0);
  await shot('ancestry');
  const top = rep.suspects.find((s) => s.kind === 'goroutine');
  if (top) {
    await page.goto(`${base}/#/c/${id}/overview?suspect=${top.id}`);
    await page.click('#suspect-ancestry');
    await page.waitForSelector('#ancestry-suspect');
    const members = await getJSON(`/api/captures/${id}/ancestry?suspect=${top.id}`);
    assert.equal(members.suspect.alive, top.count, 'ancestry: the suspect\'s goroutines alive at the named snapshot');
    assert.equal(Date.parse(members.suspect.alive_at), Date.parse(top.count_at), 'ancestry alive_at is the suspect\'s count_at');
    assert.equal(await page.locator('#ancestry-members').getAttribute('data-alive'), String(top.count));
    const marked = await page.locator('#ancestry-tree .row.match').allInnerTexts();
    assert.ok(marked.some((t) => t.includes(top.creator || top.location)), `chain of ${top.id} is marked: ${marked.slice(0, 3)}`);
    await shot('ancestry-suspect');
  }
});

test('timeline: a suspect\'s goroutines alive at its snapshot are its count', async () => {
  const rep = await getJSON(`/api/captures/${id}/report`);
  const top = rep.suspects.find((s) => s.kind === 'goroutine');
  if (!top) return;
  const tl = await getJSON(`/api/captures/${id}/timeline?limit=100000&suspect=${top.id}`);
  assert.equal(tl.suspect.alive, top.count);
  assert.equal(Date.parse(tl.suspect.alive_at), Date.parse(top.count_at));
  await page.goto(`${base}/#/c/${id}/timeline?suspect=${top.id}`);
  await page.waitForSelector('#timeline-suspect');
  assert.equal(await page.locator('#timeline-suspect').getAttribute('data-alive'), String(top.count));
});

test('timeline: lifetimes drawn with series beneath, click-through to a stack', async () => {
  const tl = await getJSON(`/api/captures/${id}/timeline?limit=100000`);
  await page.goto(`${base}/#/c/${id}/timeline`);
  await page.waitForSelector('#timeline-canvas');
  assert.equal(await page.locator('#timeline-count').getAttribute('data-bars'), String(tl.lifetimes.bars.length));
  if (Object.values(tl.series).some((s) => s && s.length)) await page.waitForSelector('#timeline-chart canvas');
  // Click through the lanes until a goroutine bar is hit.
  const box = await page.locator('#timeline-canvas').boundingBox();
  let hit = false;
  for (let y = 20; y < Math.min(box.height, 400) && !hit; y += 3) {
    await page.mouse.click(box.x + box.width * 0.5, box.y + y);
    hit = (await page.locator('#timeline-info b').count()) > 0;
  }
  assert.ok(hit, 'a click on a bar shows it');
  // What a click shows is the API's bar, drawn in the colour of its verdict.
  const colours = { suspect: [198, 40, 40], healthy: [46, 125, 50], ended: [144, 164, 174] };
  const groups = tl.lifetimes.groups;
  assert.ok(groups.every((g) => g.label && g.label !== '?' && g.summary), 'every group is named and counted');
  let checked = 0;
  const wrong = [];
  for (let y = 20; y < Math.min(box.height, 400) && checked < 6; y += 2) {
    const x = box.x + box.width * 0.75;
    await page.mouse.click(x, box.y + y);
    const shown = page.locator('#timeline-bar[data-id]');
    if (!(await shown.count())) continue;
    const barID = await shown.getAttribute('data-id');
    const bar = tl.lifetimes.bars.find((b) => b.id === barID);
    assert.ok(bar, `bar ${barID} is in the API answer`);
    assert.equal(await shown.getAttribute('data-verdict'), bar.verdict || null, `verdict of ${barID}`);
    if (bar.kind !== 'goroutine') continue; // a task or region: coloured by its kind
    const goid = bar.goid;
    const px = await page.evaluate(([cx, cy]) => {
      const c = document.querySelector('#timeline-canvas');
      const r = c.getBoundingClientRect();
      const d = window.devicePixelRatio || 1;
      return [...c.getContext('2d').getImageData(Math.round((cx - r.left) * d), Math.round((cy - r.top) * d), 1, 1).data];
    }, [x, box.y + y]);
    const want = colours[bar.verdict];
    // Between bars: the white canvas, the lanes' grey-blue band (#f3f5f8)
    // or text; no bar colour is that unsaturated.
    if (!want || px[3] !== 255 || Math.max(...px.slice(0, 3)) - Math.min(...px.slice(0, 3)) < 12) continue;
    if (Math.abs(px[0] - want[0]) + Math.abs(px[1] - want[1]) + Math.abs(px[2] - want[2]) < 30) checked++;
    else wrong.push(`goroutine ${goid} (${bar.verdict}) drawn in rgb(${px.slice(0, 3)})`);
  }
  // A click within a few pixels of a bar's end may pick its neighbour in
  // the lane; a wrong colour scheme fails every time.
  assert.ok(checked > 0 && checked >= 3 * wrong.length, `bars in their verdict colour: ${checked}; not: ${wrong}`);
  await page.locator('#timeline-stack:not([hidden])').waitFor({ timeout: 10000 }).catch(() => {});
  await shot('timeline');
});

// sample uploads the committed operator-sim capture (four trace windows,
// a heap suspect) once and returns its id.
async function sample() {
  if (sampleID) return sampleID;
  const res = await fetch(`${base}/api/captures`, { method: 'POST', body: readFileSync(sampleArchive) });
  const body = await res.json();
  assert.ok(res.status === 201 || res.status === 200, `upload of the sample: ${res.status} ${JSON.stringify(body)}`);
  sampleID = body.id;
  return sampleID;
}

test('overview chart: trace-window series drawn window by window with nothing in the gaps, axes from zero, times in UTC', async () => {
  const sid = await sample();
  const rep = await getJSON(`/api/captures/${sid}/report`);
  const { windows, heap_live: live } = rep.series;
  assert.equal(rep.series.heap_live_from, 'trace');
  assert.ok(windows.length >= 2 && live.length > 0, `${windows.length} windows, ${live.length} live-heap points`);
  await page.goto(`${base}/#/c/${sid}/overview`);
  await page.waitForSelector('#overview-chart canvas');
  assert.equal(await page.locator('#overview-chart').getAttribute('data-windows'), String(windows.length));
  // What the chart has painted; a loaded machine may paint after the
  // canvas appears, so the line is waited for (30 s at most), then the
  // last reading asserted.
  const measure = ([windows, live]) => {
    const el = document.querySelector('#overview-chart');
    const u = el.uplot;
    const c = el.querySelector('canvas');
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const red = [198, 40, 40]; // the live heap's stroke, #c62828
    const isRed = (x, y) => {
      const i = (y * c.width + x) * 4;
      return img[i + 3] > 200 && Math.abs(img[i] - red[0]) + Math.abs(img[i + 1] - red[1]) + Math.abs(img[i + 2] - red[2]) < 60;
    };
    const top = Math.round(u.bbox.top), bottom = Math.round(u.bbox.top + u.bbox.height);
    const columnRed = (x) => { for (let y = top; y < bottom; y++) if (isRed(x, y)) return true; return false; };
    const px = (iso) => Math.round(u.valToPos(Date.parse(iso) / 1000, 'x', true));
    const gaps = [];
    for (let i = 1; i < windows.length; i++) {
      const a = px(windows[i - 1].end) + 3, b = px(windows[i].start) - 3;
      let red = 0;
      for (let x = a; x <= b; x++) if (columnRed(x)) red++;
      gaps.push({ from: windows[i - 1].end, to: windows[i].start, columns: Math.max(0, b - a + 1), red });
    }
    // Inside each window the line passes through its points.
    const inside = windows.map((w) => {
      const pts = live.filter((p) => Date.parse(p.ts) > Date.parse(w.start) && Date.parse(p.ts) < Date.parse(w.end));
      const hit = pts.filter((p) => [-1, 0, 1].some((d) => columnRed(px(p.ts) + d))).length;
      return { points: pts.length, hit };
    });
    // The heap axis's ticks (uPlot's splits of axis 2) at its step.
    const ticks = u.axes[2]._splits || [];
    return { gaps, inside, gMin: u.scales.g.min, heapMin: u.scales.heap.min, ticks, step: ticks.length > 1 ? ticks[1] - ticks[0] : 0 };
  };
  const linePainted = (d) => d.inside.reduce((n, w) => n + w.hit, 0) >= 0.8 * d.inside.reduce((n, w) => n + w.points, 0);
  const drawn = await evaluateUntil(page, measure, [windows, live], linePainted);
  assert.equal(drawn.gMin, 0, 'the goroutine axis starts at zero');
  // Its ticks are binary sizes, as every byte figure is written: a power
  // of two of bytes apart ("4.0 MiB", "8.0 MiB"), never "4.8 MiB".
  assert.ok(drawn.ticks.length > 1 && Number.isInteger(Math.log2(drawn.step)), `heap axis ticks ${JSON.stringify(drawn.ticks)}`);
  assert.equal(drawn.heapMin, 0, 'the heap axis starts at zero');
  for (const g of drawn.gaps) assert.equal(g.red, 0, `live heap drawn across the gap ${g.from} … ${g.to} (${g.red} of ${g.columns} columns)`);
  assert.ok(drawn.gaps.some((g) => g.columns > 5), `some gap wide enough to see: ${JSON.stringify(drawn.gaps)}`);
  const pts = drawn.inside.reduce((n, w) => n + w.points, 0), hit = drawn.inside.reduce((n, w) => n + w.hit, 0);
  assert.ok(pts > 0 && hit >= 0.8 * pts, `live heap drawn through ${hit} of its ${pts} points inside the windows`);
  // The legend's time, under the cursor at a sample, is that sample's UTC time.
  const g0 = rep.series.goroutines[Math.floor(rep.series.goroutines.length / 2)];
  const at = await page.evaluate((iso) => {
    const el = document.querySelector('#overview-chart');
    const u = el.uplot;
    u.setCursor({ left: u.valToPos(Date.parse(iso) / 1000, 'x'), top: 10 });
    return el.querySelector('.u-legend .u-series:first-child .u-value').textContent;
  }, g0.ts);
  assert.equal(at, new Date(g0.ts).toISOString().replace('T', ' ').replace(/Z$/, ' UTC'), 'legend time in UTC');
  await page.locator('#overview-chart').screenshot({ path: `${shots}/overview-chart.png` });
});

test('ancestry: a heap suspect marks the goroutines that run its allocation path', async () => {
  const sid = await sample();
  const rep = await getJSON(`/api/captures/${sid}/report`);
  const heap = rep.suspects.find((s) => s.kind === 'heap');
  assert.ok(heap, 'the sample has a heap suspect');
  // Its stack, and where its other stacks part (paths): what its flame
  // graph shows.
  const path = new Set([...heap.stack.map((f) => f.function), ...(heap.paths || []).map((p) => p.replace(/:\d+$/, ''))]);
  await page.goto(`${base}/#/c/${sid}/ancestry?suspect=${encodeURIComponent(heap.id)}`);
  await page.waitForSelector('#ancestry-tree');
  await page.waitForFunction(() => /allocation path/.test(document.querySelector('#ancestry-status').textContent));
  const marked = await page.locator('#ancestry-tree .row.match .fn').allInnerTexts();
  assert.ok(marked.length > 0, 'the view is not empty: some goroutines run the path');
  for (const fn of marked) assert.ok(path.has(fn), `${fn} is on ${heap.id}'s allocation stack`);
  assert.match(await page.locator('#ancestry-status').innerText(), new RegExp(`^${marked.length} (node runs|nodes run) this allocation path`));
  const chip = await page.locator('#ancestry-suspect').innerText();
  assert.ok(chip.includes(heap.location));
  // The chip names every stack the suspect covers, from the report's paths.
  for (const p of heap.paths || []) assert.ok(chip.includes(p), `chip ${JSON.stringify(chip)} names ${p}`);
  if ((heap.stack_ids || []).length > 1 && (heap.paths || []).length) assert.ok(chip.includes(`${heap.stack_ids.length} stacks`), chip);
});

test('downloads: raw artifacts and reports', async () => {
  const detail = await getJSON(`/api/captures/${id}`);
  await page.goto(`${base}/#/c/${id}/downloads`);
  await page.waitForSelector('#report-downloads');
  const names = await page.locator('#raw-table .raw-link').allInnerTexts();
  assert.deepEqual(names, detail.raw);
  const rows = await page.locator('#tables-table td[data-rows]').evaluateAll((els) => els.map((e) => Number(e.dataset.rows)));
  assert.deepEqual(rows, detail.tables.map((t) => t.rows));
  for (const href of await page.locator('#report-downloads a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))) {
    const res = await fetch(base + href);
    assert.equal(res.status, 200, href);
    assert.match(res.headers.get('content-disposition') || '', /attachment/);
    assert.ok((await res.text()).length > 100, href);
  }
  const raw = await fetch(`${base}/api/captures/${id}/raw/${encodeURIComponent(detail.raw[0])}`);
  assert.equal(raw.status, 200);
  await shot('downloads');
});

test('no errors in the page console', () => {
  assert.deepEqual(consoleErrors, []);
});
