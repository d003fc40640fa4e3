// Browser test of the fleet view (web/ui/src/views/fleet.js), started by
// fleet_test.go with three captures uploaded: the service in
// LEAKSCOPE_SERVICE on two nodes and another service on a third. What the
// page draws is checked against GET /api/fleet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { openPage, jsonGetter } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const service = process.env.LEAKSCOPE_SERVICE;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
if (!base || !service) throw new Error('LEAKSCOPE_URL and LEAKSCOPE_SERVICE must be set (run through go test ./web/e2e/)');
mkdirSync(shots, { recursive: true });

let browser, page, errors;
const getJSON = jsonGetter(base);

before(async () => {
  ({ browser, page, errors } = await openPage(chromium, base));
});

after(async () => { if (browser) await browser.close(); });

test('fleet: services list, reached from the captures page', async () => {
  await page.goto(base + '/');
  await page.click('#fleet-link');
  await page.waitForSelector('#fleet-services tbody tr');
  const { services } = await getJSON('/api/fleet');
  const rows = await page.$$eval('#fleet-services tbody tr', (trs) => trs.map((tr) => ({
    service: tr.dataset.service, cells: [...tr.children].map((td) => td.textContent.trim()),
  })));
  assert.deepEqual(rows.map((r) => r.service), services.map((s) => s.service));
  for (const [i, s] of services.entries()) {
    assert.equal(rows[i].cells[1], String(s.captures), `${s.service} captures`);
    assert.equal(rows[i].cells[2], String(s.nodes), `${s.service} nodes`);
  }
  const mine = services.find((s) => s.service === service);
  assert.ok(mine && mine.captures === 2 && mine.nodes === 2, `service ${service} on two nodes: ${JSON.stringify(services)}`);
});

test('fleet: one service, each leak with its nodes and captures', async () => {
  await page.click(`#fleet-services tr[data-service="${service}"] a`);
  await page.waitForSelector('#fleet-leaks tbody tr');
  const v = await getJSON('/api/fleet?service=' + encodeURIComponent(service));
  assert.ok(v.leaks.length > 0, 'the service has leaks');
  assert.equal(await page.textContent('#fleet-summary'), v.summary);
  assert.equal(v.summary, `2 captures on 2 nodes: ${v.nodes.join(', ')}`);
  const rows = await page.$$eval('#fleet-leaks tbody tr', (trs) => trs.map((tr) => ({
    location: tr.dataset.location,
    nodes: tr.querySelector('.nodes b').textContent,
    nodeNames: tr.querySelector('.nodes .sub').textContent,
    captures: tr.querySelector('.captures').textContent,
  })));
  assert.equal(rows.length, v.leaks.length);
  for (const [i, l] of v.leaks.entries()) {
    assert.equal(rows[i].location, l.location);
    assert.equal(rows[i].nodes, `${l.nodes.length} of ${v.nodes.length}`);
    assert.equal(rows[i].nodeNames, l.display.nodes);
    assert.equal(l.display.nodes, l.nodes.join(', '));
    assert.equal(rows[i].captures, String(l.captures));
  }
  // The same capture uploaded from both nodes: its top leak is on both.
  assert.equal(rows[0].nodes, '2 of 2');
  const caps = await page.$$eval('#fleet-captures tbody tr', (trs) => trs.map((tr) => tr.dataset.id));
  assert.deepEqual(caps, v.captures.map((c) => c.id));
  await page.screenshot({ path: `${shots}/fleet.png`, fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
});
