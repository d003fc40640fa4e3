// Browser test of what started a capture, as the workbench shows it: run
// by deploy's TestAlertToPostmortem against its workbench once the
// agent's capture of the alert's process is there (LEAKSCOPE_CAPTURE).
// The overview's header and the fleet's captures table must show the
// report's sentence of the trigger, naming the alert and the labels the
// test expects (LEAKSCOPE_ALERT, LEAKSCOPE_INSTANCE).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { openPage, jsonGetter } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const id = process.env.LEAKSCOPE_CAPTURE;
const alert = process.env.LEAKSCOPE_ALERT;
const instance = process.env.LEAKSCOPE_INSTANCE;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
if (!base || !id || !alert || !instance) throw new Error('LEAKSCOPE_URL, _CAPTURE, _ALERT and _INSTANCE must be set (run through go test ./deploy/)');
mkdirSync(shots, { recursive: true });

let browser, page, errors;
const getJSON = jsonGetter(base);

before(async () => {
  ({ browser, page, errors } = await openPage(chromium, base));
});

after(async () => { if (browser) await browser.close(); });

test('the overview header names the alert that started the capture', async () => {
  await page.goto(`${base}/#/c/${id}/overview`);
  await page.waitForSelector('#capture-trigger');
  const rep = await getJSON(`/api/captures/${id}/report`);
  const text = rep.bundle.trigger_text;
  assert.equal(rep.bundle.trigger.source, 'alert');
  assert.ok(text.startsWith(`Alertmanager alert ${alert} (`) && text.includes(`instance=${instance}`) && text.includes(', firing since '), text);
  assert.equal(await page.textContent('#capture-trigger'), `Trigger: ${text}`);
  await page.screenshot({ path: `${shots}/overview-trigger.png` });
});

test('the fleet names it beside the capture', async () => {
  const rep = await getJSON(`/api/captures/${id}/report`);
  await page.goto(`${base}/#/fleet?service=${encodeURIComponent(rep.bundle.service)}`);
  await page.waitForSelector(`#fleet-captures tr[data-id="${id}"]`);
  assert.equal(await page.textContent(`#fleet-captures tr[data-id="${id}"] .trigger`), rep.bundle.trigger_text);
  assert.deepEqual(errors, [], 'no console errors');
});
