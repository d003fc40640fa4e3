// Browser test of the fleet view's builds (web/ui/src/views/fleet.js),
// started by builds_test.go with three captures of one service uploaded:
// its leaky build (git revision LEAKSCOPE_LEAKY_REV) on node-a and
// node-b, its healthy build (LEAKSCOPE_HEALTHY_REV) on node-a. What the
// page draws is checked against GET /api/fleet and the revisions git gave.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { openPage, jsonGetter } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const leakyRev = process.env.LEAKSCOPE_LEAKY_REV;
const healthyRev = process.env.LEAKSCOPE_HEALTHY_REV;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
if (!base || !leakyRev || !healthyRev) throw new Error('LEAKSCOPE_URL and the revisions must be set (run through go test ./web/e2e/)');
mkdirSync(shots, { recursive: true });

let browser, page, errors;
const getJSON = jsonGetter(base);

before(async () => {
  ({ browser, page, errors } = await openPage(chromium, base, { width: 1500, height: 900 }));
  // Every capture analysed, so that each counts with or without the leak.
  let caps = [];
  for (const deadline = Date.now() + 180000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    caps = await getJSON('/api/captures');
    if (caps.length === 3 && caps.every((c) => typeof c.suspects === 'number')) break;
  }
  assert.ok(caps.length === 3 && caps.every((c) => typeof c.suspects === 'number'), `captures analysed: ${JSON.stringify(caps.map((c) => [c.id, c.suspects, c.analysis_error]))}`);
});

after(async () => { if (browser) await browser.close(); });

test('fleet builds: the leak is present in every capture of the leaky build, absent in the healthy one', async () => {
  await page.goto(base + '/#/fleet');
  await page.click('#fleet-services tr[data-service="buildsvc"] a');
  await page.waitForSelector('#fleet-leaks tbody tr');
  const v = await getJSON('/api/fleet?service=buildsvc');
  assert.equal(await page.textContent('#fleet-summary'), v.summary);
  assert.equal(v.summary, '3 captures on 2 nodes: node-a, node-b');
  const leak = v.leaks.find((l) => l.location === 'main.probe' && l.pattern === 'chan-send-no-receiver');
  assert.ok(leak, `the leak at main.probe: ${JSON.stringify(v.leaks.map((l) => [l.pattern, l.location]))}`);
  const row = await page.$eval('#fleet-leaks tr[data-location="main.probe"]', (tr) => ({
    builds: tr.querySelector('.builds').textContent,
    since: tr.querySelector('.since').firstChild.textContent,
    count: tr.querySelector('.leak-count').firstChild.textContent,
    worst: tr.querySelector('.leak-count a.worst').textContent,
    nodes: tr.querySelector('.nodes b').textContent,
  }));
  assert.equal(row.builds, leak.display.builds);
  const short = (r) => r.slice(0, 12);
  // A build is named by its module version (the go command stamps a
  // pseudo-version holding the revision) or its revision.
  assert.match(row.builds, new RegExp(`^present in every capture of build \\S*${short(leakyRev)} \\(2\\)( since [^;]+)?; absent in build \\S*${short(healthyRev)} \\(1 capture\\)$`));
  assert.equal(row.since, leak.display.since);
  assert.equal(row.count, leak.display.count);
  assert.equal(row.worst, leak.worst.capture);
  assert.equal(row.nodes, '2 of 2');
  // The worst figures are one capture's, and it is of the leaky build.
  const worst = leak.seen.find((s) => s.capture === leak.worst.capture);
  assert.ok(worst && worst.count === leak.worst.count && worst.score === leak.worst.score && worst.build.endsWith(short(leakyRev)));
  // The captures table names each capture's build, as the API does.
  const caps = await page.$$eval('#fleet-captures tbody tr', (trs) => trs.map((tr) => [tr.dataset.id, tr.querySelector('.build').textContent, tr.querySelector('.node').textContent]));
  assert.deepEqual(caps, v.captures.map((c) => [c.id, c.build, c.node]));
  assert.deepEqual(new Set(caps.map((c) => c[1].slice(-12))), new Set([short(leakyRev), short(healthyRev)]));
  await page.screenshot({ path: `${shots}/fleet-builds.png`, fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
});
