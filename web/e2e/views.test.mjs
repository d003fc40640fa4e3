// Every view read as a person reads it: the words, figures, badges and the
// drawn charts' axes, compared with the API's JSON (the report's own
// words and figures). Started by views_test.go with three captures
// uploaded (LEAKSCOPE_DEMO, the demo's sample; LEAKSCOPE_HISTORY, an agent
// capture with history; LEAKSCOPE_SINGLE, one goroutine dump) and a
// fourth to upload and open cold (LEAKSCOPE_COLD_ARCHIVE).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { evaluateUntil } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const demo = process.env.LEAKSCOPE_DEMO;
const hist = process.env.LEAKSCOPE_HISTORY;
const single = process.env.LEAKSCOPE_SINGLE;
const coldArchive = process.env.LEAKSCOPE_COLD_ARCHIVE;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
if (!base || !demo || !hist || !single || !coldArchive) throw new Error('run through go test ./web/e2e -run Views');
mkdirSync(shots, { recursive: true });

let browser, page;
const errors = [];
const getJSON = async (path) => {
  const res = await fetch(base + path);
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${res.status} ${text}`);
  return JSON.parse(text);
};
const getText = async (path) => {
  const res = await fetch(base + path);
  assert.equal(res.status, 200, path);
  return res.text();
};
// plain is an analysis text as the page prints it: `code` spans become
// code elements, whose text has no backticks.
const plain = (s) => String(s || '').replace(/`/g, '');
// utc is a time of the API as every view prints it (internal/format.Time).
const utc = (iso) => new Date(iso).toISOString().replace('T', ' ').replace('Z', ' UTC');
const viewText = () => page.locator('#view').innerText();

// wordsRead checks what no view may say: a count of one in the plural, a
// time in another format than the API's.
function wordsRead(text, where) {
  const plural = text.match(/\b1 (snapshots|minutes|goroutines|nodes|lifetimes|groups|captures|matches|points|tasks|regions|suspects|incidents|rows|history snapshots|goroutine snapshots|heap snapshots)\b/g) || [];
  assert.deepEqual(plural, [], `${where}: a count of one in the plural`);
  assert.ok(!/\b1 node hold\b/.test(text), `${where}: "1 node hold"`);
  assert.ok(!/\d\d:\d\d:\d\dZ\b/.test(text), `${where}: a time not written as the API writes it`);
}

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
});

after(async () => { if (browser) await browser.close(); });

test('overview: the demo capture opens with its incidents, in the report\'s words', async () => {
  const rep = await getJSON(`/api/captures/${demo}/report`);
  assert.ok(rep.incidents.length > 0, 'the demo capture has incidents');
  await page.goto(`${base}/#/c/${demo}/overview`);
  await page.waitForSelector('#suspects-table');
  // The incidents come first: right under the capture's facts, above the
  // chart and the suspects.
  const panels = await page.locator('#view > section.panel').allInnerTexts();
  assert.ok(panels[1].includes(plain(rep.incidents[0].summary)), `under the capture's facts the page says ${JSON.stringify(panels[1].slice(0, 200))}, not the first incident: ${plain(rep.incidents[0].summary)}`);
  assert.equal(await page.locator('#incident-total').innerText(), String(rep.incidents.length));
  for (const [i, inc] of rep.incidents.entries()) {
    const card = page.locator(`#incident-${inc.id}`);
    assert.equal(await card.locator('.incident-summary').innerText(), plain(inc.summary), `${inc.id} summary`);
    const figures = Object.fromEntries(await card.locator('dd[data-figure]').evaluateAll((dds) => dds.map((d) => [d.dataset.figure, d.innerText])));
    const want = { goroutines: inc.display.goroutines, rate: inc.display.rate, 'per-call': inc.display.per_call, 'heap-per-call': inc.heap_per_call, retained: inc.display.retained, 'first-seen': inc.display.first_seen };
    for (const [k, v] of Object.entries(want)) assert.equal(figures[k], v, `${inc.id} ${k}`);
    if (inc.origin) assert.ok(figures.origin.startsWith(inc.origin.function), `${inc.id} origin ${figures.origin}`);
    assert.equal(await card.locator('.incident-fix').innerText(), 'Fix: ' + plain(inc.fix), `${inc.id} fix`);
    if (i === 0) {
      const ev = await card.locator('.incident-evidence li').allInnerTexts();
      assert.deepEqual(ev, inc.evidence.map((e) => `${e.kind} ${e.detail}`), `${inc.id} evidence`);
    }
    const links = await card.locator('.incident-links a').evaluateAll((as) => as.map((a) => [a.dataset.link, a.getAttribute('href')]));
    for (const sid of inc.suspects) assert.ok(links.some(([k, href]) => k === 'suspect' && href.endsWith(`overview?suspect=${sid}`)), `${inc.id} links its suspect ${sid}`);
    for (const k of ['flame', 'ancestry', 'timeline']) assert.ok(links.some(([l]) => l === k), `${inc.id} links its ${k}`);
  }
  await page.screenshot({ path: `${shots}/views-overview.png`, fullPage: true });
  // The first incident's flame graph is its first member's, counted as
  // the report counts it.
  const inc = rep.incidents[0];
  const top = rep.suspects.find((s) => s.id === inc.suspects[0]);
  await page.click(`#incident-${inc.id} a[data-link="flame"]`);
  await page.waitForSelector('#flame-suspect');
  assert.equal(await page.locator('#flame-suspect').innerText(), `${top.id}: ${top.display.count} at ${top.display.count_at}`);
  await page.goBack();
  await page.click(`#incident-${inc.id} a[data-link="ancestry"]`);
  await page.waitForSelector('#ancestry-suspect');
  assert.ok((await page.locator('#ancestry-suspect').innerText()).includes(top.id));
  await page.goBack();
  await page.click(`#incident-${inc.id} a[data-link="timeline"]`);
  await page.waitForSelector('#timeline-canvas');
  if (top.kind === 'goroutine') assert.equal(await page.locator('#timeline-suspect').getAttribute('data-alive'), String(top.count));
});

// axisLabels reads the time axis of the chart in sel as drawn: its tick
// labels, where each is centred and how wide it is in the axis's font.
const axisLabels = (sel) => {
  const u = document.querySelector(sel).uplot;
  const a = u.axes[0];
  const g = document.createElement('canvas').getContext('2d');
  g.font = a.font[0];
  return {
    status: u.status,
    labels: (a._values || []).map((v, i) => ({ text: v, x: u.valToPos(a._splits[i], 'x'), w: g.measureText(v).width })),
    gap: u.scales.x.max - u.scales.x.min,
  };
};
// readable says no two labels read the same and none runs into the next.
function readable(ax, where) {
  const texts = ax.labels.map((l) => l.text);
  assert.ok(texts.length >= 2, `${where}: ${texts.length} time labels`);
  assert.equal(new Set(texts).size, texts.length, `${where}: time labels repeat: ${texts}`);
  for (let i = 1; i < ax.labels.length; i++) {
    const a = ax.labels[i - 1], b = ax.labels[i];
    assert.ok(a.x + a.w / 2 + 4 <= b.x - b.w / 2, `${where}: "${a.text}" (${Math.round(a.w)} px at ${Math.round(a.x)}) runs into "${b.text}" (at ${Math.round(b.x)})`);
  }
}

test('overview chart: the series drawn, its time axis readable at any zoom, GC counted once', async () => {
  const rep = await getJSON(`/api/captures/${demo}/report`);
  const detail = await getJSON(`/api/captures/${demo}`);
  await page.goto(`${base}/#/c/${demo}/overview`);
  await page.waitForSelector('#overview-chart canvas');
  // A capture of many snapshots says nothing of "no time series".
  assert.ok(!/no time series/.test(await viewText()), 'a chart of many snapshots says it has no time series');
  const whole = await evaluateUntil(page, axisLabels, '#overview-chart', (d) => d.status === 1 && d.labels.length >= 2);
  readable(whole, 'the whole capture');
  // In a narrow window too, where ticks crowd.
  await page.setViewportSize({ width: 760, height: 900 });
  readable(await evaluateUntil(page, axisLabels, '#overview-chart', (d) => d.status === 1 && d.labels.length >= 2 && d.labels.every((l) => l.x < 760)), 'the whole capture in a 760 px window');
  await page.setViewportSize({ width: 1440, height: 900 });
  await evaluateUntil(page, axisLabels, '#overview-chart', (d) => d.labels.some((l) => l.x > 760));
  // Zoomed in to two seconds, as a drag does: ticks under a second apart.
  const zoomed = await page.evaluate((sel) => {
    const u = document.querySelector(sel).uplot;
    const mid = (u.scales.x.min + u.scales.x.max) / 2;
    u.setScale('x', { min: mid - 1, max: mid + 1 });
    return true;
  }, '#overview-chart');
  assert.ok(zoomed);
  readable(await evaluateUntil(page, axisLabels, '#overview-chart', (d) => d.gap < 3), 'two seconds of it');
  // GC cycles: the eBPF probes counted every cycle of the capture; the
  // report's timeline and the chart's GC axis say that one count.
  const ebpf = detail.sources.find((s) => s.kind === 'ebpf');
  const gcEvent = rep.timeline.find((e) => e.kind === 'gc');
  assert.ok(ebpf && ebpf.counters.gc_start > 0 && gcEvent, 'the demo capture has eBPF GC cycles and a GC event');
  const cycles = `${ebpf.counters.gc_start} GC cycles during the capture (eBPF)`;
  await page.goto(`${base}/#/c/${demo}/overview?suspect=${rep.suspects[0].id}`);
  await page.waitForSelector('#suspect-timeline');
  const said = (await page.locator('#suspect-timeline li').allInnerTexts()).filter((e) => / GC cycles? /.test(e));
  assert.ok(said.length === 1 && said[0].endsWith(cycles), `the page's timeline says ${JSON.stringify(said)}; the capture's eBPF probes counted ${ebpf.counters.gc_start}`);
  assert.equal(gcEvent.event, cycles, 'the report counts the cycles the eBPF probes saw');
  assert.equal(rep.series.gc_from, 'ebpf');
  const gcTop = await page.evaluate(() => document.querySelector('#overview-chart').uplot.scales.gc.max);
  assert.equal(gcTop, ebpf.counters.gc_start, 'the GC axis reaches the count of cycles');
  wordsRead(await viewText(), 'demo overview');
});

test('lanes: they say which of the suspect\'s goroutines they show', async () => {
  const rep = await getJSON(`/api/captures/${demo}/report`);
  const s = rep.suspects.find((x) => x.kind === 'goroutine');
  const lv = await getJSON(`/api/captures/${demo}/lanes?suspect=${s.id}`);
  assert.equal(lv.members, s.count, 'the lanes answer counts the suspect\'s goroutines as the report does');
  await page.goto(`${base}/#/c/${demo}/overview?suspect=${s.id}`);
  await page.waitForSelector('#lanes-svg');
  const panel = await page.locator('#lanes-panel').innerText();
  const of = lv.members > lv.sampled_members ? `the oldest ${lv.sampled_members} of its ${s.count.toLocaleString('en-US')} goroutines` : `its ${s.count} goroutines`;
  assert.ok(panel.includes(`Lanes of ${of}`), `the lanes say ${JSON.stringify(panel.slice(0, 200))}; want them to say they are of ${of}`);
  if (lv.creators) assert.ok(panel.includes(`${lv.creators} goroutine${lv.creators === 1 ? '' : 's'} that created them`), panel.slice(0, 200));
  const members = await page.locator('#lanes-svg g.lane[data-role="member"]').count();
  assert.equal(members, lv.sampled_members - lv.missing_members.length, 'a lane per sampled member a window saw');
  // What no window saw is said of members and creators apart.
  const missing = panel.match(/(\d+) goroutines? of \S+ no trace window saw/);
  assert.equal(missing ? Number(missing[1]) : 0, lv.missing_members.length, `members no window saw: ${missing && missing[0]}`);
});

test('agent capture: one start and one count of history snapshots, everywhere', async () => {
  const detail = await getJSON(`/api/captures/${hist}`);
  const rep = await getJSON(`/api/captures/${hist}/report`);
  const samples = detail.manifest.artifacts.filter((a) => a.role === 'history' && a.profile === 'goroutine').length;
  const firstOwn = detail.manifest.artifacts.filter((a) => a.role !== 'history' && a.time).map((a) => Date.parse(a.time)).sort((a, b) => a - b)[0];
  assert.ok(samples >= 5, `the capture's history holds ${samples} watch samples`);
  // The capture began with its first artifact that is not the history.
  const began = utc(new Date(firstOwn).toISOString());
  // The captures list.
  await page.goto(`${base}/#/`);
  await page.waitForSelector(`#captures-table tr[data-id="${hist}"]`);
  const cell = await page.locator(`#captures-table tr[data-id="${hist}"] .capture-start`).innerText();
  assert.ok(cell.startsWith(began), `list: capture began ${cell}`);
  assert.ok(cell.includes(`after ${samples} history snapshots`), `list: ${cell}`);
  assert.ok(cell.includes(`${detail.duration}, until`), `list: ${cell}`);
  // The overview: the facts, the band's note and the leak-cause timeline.
  await page.goto(`${base}/#/c/${hist}/overview?suspect=${rep.suspects[0].id}`);
  await page.waitForSelector('#suspect-timeline');
  assert.equal(await page.locator('#capture-start').innerText(), began);
  assert.equal(await page.locator('#capture-length').innerText(), detail.duration);
  assert.ok((await page.locator('#history-fact').innerText()).startsWith(`${samples} snapshots from`));
  const note = await page.locator('#history-note').innerText();
  assert.ok(note.includes(`${samples} history snapshots`) && note.includes(`the capture began at ${began}`), note);
  const started = (await page.locator('#suspect-timeline li').allInnerTexts()).filter((e) => e.endsWith('capture started'));
  assert.deepEqual(started, [`${began} capture capture started`], 'the timeline\'s capture start');
  const text = await viewText();
  for (const m of text.matchAll(/(\d+) (history )?snapshots? (from|the node agent)/g)) assert.equal(Number(m[1]), samples, `"${m[0]}" counts the history`);
  wordsRead(text, 'agent capture overview');
  assert.equal(utc(detail.capture_start), began, 'the API\'s capture_start');
});

test('single snapshot: no chart, no rate, and one of each thing in the singular', async () => {
  const rep = await getJSON(`/api/captures/${single}/report`);
  assert.equal(rep.bundle.goroutine_snapshots, 1);
  await page.goto(`${base}/#/c/${single}/overview`);
  await page.waitForSelector('#suspects-table');
  // What a chart there would read (uPlot may draw it a frame later).
  const axis = await evaluateUntil(page, () => {
    const el = document.querySelector('#overview-chart');
    if (!el || !el.querySelector('canvas')) return null;
    return (el.uplot && el.uplot.axes[0]._values) || ['(not drawn yet)'];
  }, null, (a) => a === null || a[0] !== '(not drawn yet)', 3000);
  assert.equal(axis, null, `a single snapshot draws a chart, its time axis reading ${axis}`);
  const banner = await page.locator('#banner:not([hidden])').count() ? await page.locator('#banner').innerText() : '';
  assert.equal(banner, '', 'the overview of a single snapshot fails');
  assert.match(await page.locator('#no-series').innerText({ timeout: 5000 }), /^One snapshot/);
  const text = await viewText();
  assert.ok(!/\+0\.0\/min/.test(text), 'no rate over a single snapshot');
  for (const s of rep.suspects) {
    assert.equal(await page.locator(`#suspects-table tr[data-suspect="${s.id}"] .suspect-rate`).innerText(), s.display.rate);
    assert.ok(!/\/min/.test(s.display.rate), `${s.id} rate ${s.display.rate}`);
  }
  wordsRead(text, 'single-snapshot overview');
  await page.screenshot({ path: `${shots}/views-single.png`, fullPage: true });
  // The report the downloads offer says it the same way.
  const md = await getText(`/api/captures/${single}/report?format=md`);
  wordsRead(md, 'single-snapshot report');
  assert.match(md, /\*\*Longest wait:\*\* 1 minute\b/);
  await page.goto(`${base}/#/c/${single}/timeline`);
  await page.waitForSelector('#timeline-canvas');
  assert.equal(await page.locator('#timeline-chart canvas').count(), 0, 'the timeline draws no series of one snapshot');
  wordsRead(await viewText(), 'single-snapshot timeline');
});

test('ancestry: a suspect\'s goroutines in two nodes of one function, each badge on its node', async () => {
  const tree = await getJSON(`/api/captures/${single}/ancestry`);
  const m = tree.suspects[0];
  assert.ok(m && m.nodes.length >= 2 && m.nodes[0].function === m.nodes[1].function && m.nodes[0].created_by === m.nodes[1].created_by,
    `the suspect's goroutines sit in nodes of one function and creator: ${JSON.stringify(m && m.nodes)}`);
  await page.goto(`${base}/#/c/${single}/ancestry`);
  await page.waitForSelector('#ancestry-tree .member');
  const rows = await page.locator('#ancestry-tree li.node').evaluateAll((lis) => lis.map((li) => ({
    node: Number(li.dataset.node),
    chips: [...li.querySelector(':scope > .row').querySelectorAll('.member')].map((c) => [c.dataset.suspect, Number(c.dataset.members), c.textContent]),
  })));
  for (const n of m.nodes) {
    const row = rows.find((r) => r.node === n.node);
    assert.ok(row, `node ${n.node} is drawn`);
    assert.deepEqual(row.chips, [[m.id, n.members, `${n.members} in ${m.id}`]], `node ${n.node} carries its own badge only`);
  }
  const badged = rows.filter((r) => r.chips.length).map((r) => r.node).sort();
  assert.deepEqual(badged, m.nodes.map((n) => n.node).sort(), 'only the nodes holding members carry a badge');
  assert.equal(await page.locator('#ancestry-status').innerText(), `${m.nodes.length} nodes hold suspects' goroutines`);
  wordsRead(await viewText(), 'ancestry');
  await page.screenshot({ path: `${shots}/views-ancestry.png`, fullPage: true });
  // The demo capture's tree, where one node holds them.
  const demoTree = await getJSON(`/api/captures/${demo}/ancestry`);
  const holding = new Set(demoTree.suspects.flatMap((x) => x.nodes.map((n) => n.node))).size;
  await page.goto(`${base}/#/c/${demo}/ancestry`);
  await page.waitForSelector('#ancestry-tree .member');
  const status = await page.locator('#ancestry-status').innerText();
  assert.equal(status, holding === 1 ? '1 node holds suspects\' goroutines' : `${holding} nodes hold suspects' goroutines`);
  wordsRead(await viewText(), 'demo ancestry');
});

test('flame: the top table with peek and source fits the window; a diff without base says so', async () => {
  // The program's function with the longest source line the bundle kept.
  const top = await getJSON(`/api/captures/${demo}/top?profile=goroutine&own=mark&sort=flat`);
  let fn = null, longest = 0;
  for (const r of top.rows.filter((x) => x.function.startsWith('main.'))) {
    const lt = await getJSON(`/api/captures/${demo}/source?profile=goroutine&own=mark&function=${encodeURIComponent(r.function)}`);
    for (const l of lt.text || []) if (l.text.length > longest) { fn = r.function; longest = l.text.length; }
  }
  assert.ok(fn && longest > 100, `a function of the sample with a long source line: ${fn} (${longest} characters)`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${base}/#/c/${demo}/flame?view=top&peek=${encodeURIComponent(fn)}&list=${encodeURIComponent(fn)}`);
  await page.waitForSelector('#source-table td.code');
  await page.waitForSelector('#peek-panel .peek-table');
  const fit = await page.evaluate(() => {
    const panel = document.querySelector('#source-panel').getBoundingClientRect();
    return {
      page: document.documentElement.scrollWidth, window: window.innerWidth, panel: panel.right,
      cut: [...document.querySelectorAll('#source-table td.code')].filter((td) => td.getBoundingClientRect().right > panel.right + 1 || td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent),
    };
  });
  assert.ok(fit.page <= fit.window, `the page is ${fit.page} px wide in a ${fit.window} px window`);
  assert.ok(fit.panel <= fit.window, `the source panel ends at ${fit.panel} px, past the window's ${fit.window}`);
  assert.deepEqual(fit.cut, [], 'source lines cut');
  const lines = await getJSON(`/api/captures/${demo}/source?profile=goroutine&own=mark&function=${encodeURIComponent(fn)}`);
  const shown = await page.locator('#source-table td.code').allInnerTexts();
  for (const l of lines.text || []) assert.ok(shown.includes(l.text), `source line ${l.line} shown whole: ${l.text}`);
  await page.screenshot({ path: `${shots}/views-flame-top.png`, fullPage: true });
  // A diff with no base chosen says what is drawn instead.
  await page.goto(`${base}/#/c/${demo}/flame?profile=heap&mode=diff`);
  await page.waitForSelector('.flame svg');
  const diffText = await viewText();
  assert.ok(/choose a base snapshot/.test(diffText), `a diff with no base drawn with no word of it: ${JSON.stringify(diffText.slice(0, 300))}`);
  assert.equal(await page.locator('#flame-legend').count(), 0, 'no diff legend without a diff');
  const snaps = (await getJSON(`/api/captures/${demo}`)).profiles.heap;
  await page.selectOption('#flame-base', snaps[0]);
  await page.waitForSelector('#flame-legend');
  assert.equal(await page.locator('#flame-diff-hint').count(), 0, 'the hint goes once a base is chosen');
  wordsRead(await viewText(), 'flame');
});

test('captures and fleet: each capture\'s first incident, in the report\'s words', async () => {
  const caps = await getJSON('/api/captures');
  await page.goto(`${base}/#/`);
  await page.waitForSelector('#captures-table');
  for (const c of caps) {
    const rep = await getJSON(`/api/captures/${c.id}/report`);
    const cell = await page.locator(`#captures-table tr[data-id="${c.id}"] .first-incident`).innerText();
    if (rep.incidents.length) assert.equal(cell, `${rep.incidents[0].id} ${plain(rep.incidents[0].summary)}`, `${c.id} first incident`);
    else assert.equal(cell, 'no incident', c.id);
  }
  wordsRead(await viewText(), 'captures');
  await page.screenshot({ path: `${shots}/views-captures.png`, fullPage: true });
  const service = (await getJSON(`/api/captures/${demo}`)).manifest.target.exe.split('/').pop();
  const v = await getJSON(`/api/fleet?service=${encodeURIComponent(service)}`);
  await page.goto(`${base}/#/fleet?service=${encodeURIComponent(service)}`);
  await page.waitForSelector('#fleet-captures');
  for (const c of v.captures) {
    const cell = await page.locator(`#fleet-captures tr[data-id="${c.id}"] .first-incident`).innerText();
    assert.equal(cell, c.incident ? plain(c.incident) : 'no incident', `fleet: ${c.id}`);
    const rep = await getJSON(`/api/captures/${c.id}/report`);
    assert.equal(c.incident || '', rep.incidents.length ? rep.incidents[0].summary : '', `fleet: ${c.id} is its report's first incident`);
  }
});

test('a capture opened cold says it is being analysed, in every view that waits on it', async () => {
  const res = await fetch(`${base}/api/captures`, { method: 'POST', body: readFileSync(coldArchive) });
  const { id } = await res.json();
  assert.ok(res.status === 201 && id, `upload: ${res.status}`);
  // The analysis of a capture opened for the first time takes seconds;
  // the capture's answers are held back 2 s here so that the page is
  // caught waiting whatever the machine's speed.
  const hold = (route) => setTimeout(() => route.continue(), 2000);
  await page.route(`${base}/api/captures/${id}**`, hold);
  const views = { overview: '#incidents', flame: '.flame svg', ancestry: '#ancestry-tree', timeline: '#timeline-canvas', downloads: '#report-downloads' };
  for (const [view, done] of Object.entries(views)) {
    // Each view opened in a page of its own, as a link opened anew is:
    // nothing the page fetched for another view is at hand.
    await page.goto('about:blank');
    await page.goto(`${base}/#/c/${id}/${view}`);
    const waiting = page.locator('#view-loading');
    const said = await evaluateUntil(page, () => document.querySelector('#view').innerText, null, (t) => /analysed/.test(t), 1500);
    assert.match(said, /analysed/, `${view}: what the page says while the capture is analysed: ${JSON.stringify(said)}`);
    await page.waitForSelector(done, { timeout: 30000 });
    assert.equal(await waiting.count(), 0, `${view}: the sign of work goes once the view is drawn`);
    wordsRead(await viewText(), `${view} of a capture opened cold`);
  }
  await page.unroute(`${base}/api/captures/${id}**`, hold);
});

test('no errors in the page console', () => {
  assert.deepEqual(errors, []);
});
