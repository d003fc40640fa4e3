// Browser test of the history band of the overview chart
// (web/ui/src/views/chart.js), started by views_test.go with the capture
// LEAKSCOPE_HISTORY uploaded, whose bundle starts with the node agent's
// history. What the page shades is checked against GET
// /api/captures/ID's history.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { evaluateUntil } from './poll.mjs';

const base = process.env.LEAKSCOPE_URL;
const shots = process.env.LEAKSCOPE_SCREENSHOTS || new URL('./screenshots/', import.meta.url).pathname;
if (!base) throw new Error('LEAKSCOPE_URL must be set (run through go test ./web/e2e/)');
mkdirSync(shots, { recursive: true });

let browser, page;
const errors = [];
const getJSON = async (path) => {
  const res = await fetch(base + path);
  assert.equal(res.status, 200, path);
  return res.json();
};

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
});

after(async () => { if (browser) await browser.close(); });

test('overview chart: the history is shaded apart from the capture', async () => {
  const c = { id: process.env.LEAKSCOPE_HISTORY };
  assert.ok(c.id, 'LEAKSCOPE_HISTORY names the capture with history');
  const detail = await getJSON(`/api/captures/${c.id}`);
  const hist = detail.history;
  assert.ok(hist && hist.snapshots.length >= 5, `history of the capture: ${JSON.stringify(hist)}`);
  const capStart = Date.parse(hist.capture_start) / 1000;
  await page.goto(`${base}/#/c/${c.id}/overview`);
  await page.waitForSelector('#overview-chart canvas');
  assert.equal(await page.locator('#overview-chart').getAttribute('data-history'), String(hist.snapshots.length));
  // What the chart has painted: the band's pixels and a column in it and
  // one in the capture. A loaded machine may paint after the canvas
  // appears, so the shading is waited for (30 s at most), then asserted.
  const measure = ([snapshots, capStart]) => {
    const el = document.querySelector('#overview-chart');
    if (!el || !el.uplot || !el.historyBand) return null;
    const u = el.uplot, band = el.historyBand;
    const c = el.querySelector('canvas');
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const px = (sec) => Math.round(u.valToPos(sec, 'x', true));
    // A pixel of the band's fill: light amber, partly transparent (the
    // canvas is transparent elsewhere).
    const amber = (x, y) => {
      const i = (y * c.width + x) * 4;
      return img[i + 3] > 15 && img[i + 3] < 120 && img[i] > 200 && img[i + 2] < 120;
    };
    const share = (x) => {
      let n = 0, tot = 0;
      for (let y = Math.round(u.bbox.top) + 20; y < u.bbox.top + u.bbox.height - 2; y++, tot++) if (amber(x, y)) n++;
      return n / tot;
    };
    const from = px(band.from), to = px(band.to);
    const snapPx = snapshots.map((s) => px(Number(BigInt(s) / 1000000n) / 1000));
    const capEnd = u.scales.x.max;
    return {
      band, from, to, snapPx,
      // What the failure message shows: the x range drawn, the plot's
      // left and right edges, and the canvas's width (canvas pixels).
      scale: [u.scales.x.min, u.scales.x.max], plot: [u.bbox.left, u.bbox.left + u.bbox.width], width: c.width,
      // And whether this is the chart painted: uPlot's status (1 once
      // drawn) and how many charts the page holds.
      status: u.status, canvases: document.querySelectorAll('#overview-chart canvas').length,
      inside: share(Math.round((from + to) / 2)),
      after: share(Math.round((px(capStart) + px(capEnd)) / 2)),
      note: document.querySelector('#history-note')?.textContent || '',
    };
  };
  const drawn = await evaluateUntil(page, measure, [hist.snapshots, capStart], (d) => d && d.inside > 0.8);
  assert.ok(drawn, 'the overview chart has no uPlot or history band');
  assert.ok(Math.abs(drawn.band.from - Date.parse(hist.start) / 1000) < 1e-3, `band starts at ${drawn.band.from}, the first history snapshot at ${hist.start}`);
  assert.ok(Math.abs(drawn.band.to - capStart) < 1e-3, `band ends at ${drawn.band.to}, the capture began at ${hist.capture_start}`);
  for (const x of drawn.snapPx) assert.ok(x >= drawn.from && x <= drawn.to, `history snapshot at pixel ${x} outside the band ${drawn.from}..${drawn.to}`);
  assert.ok(drawn.inside > 0.8, `${(100 * drawn.inside).toFixed(0)}% of a column inside the band is shaded (band ${drawn.band.from}..${drawn.band.to} s at pixels ${drawn.from}..${drawn.to}; x range ${drawn.scale} s over pixels ${drawn.plot} of ${drawn.width}; uPlot status ${drawn.status}, ${drawn.canvases} chart canvases)`);
  assert.ok(drawn.after < 0.05, `${(100 * drawn.after).toFixed(0)}% of a column in the capture is shaded`);
  assert.match(drawn.note, new RegExp(`${hist.snapshots.length} history snapshots`));
  await page.locator('#overview-chart').screenshot({ path: `${shots}/overview-history.png` });
  assert.deepEqual(errors, []);
});
