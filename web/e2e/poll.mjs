// Helpers shared by the browser tests.

// evaluateUntil evaluates fn(arg) in the page every 100 ms until
// done(result) holds or ms pass (30 s unless given: a loaded machine may
// paint a chart long after its canvas appears), and returns the last
// result: the caller asserts on it, so what never comes still fails.
export async function evaluateUntil(page, fn, arg, done, ms = 30000) {
  let got = await page.evaluate(fn, arg);
  for (const deadline = Date.now() + ms; !done(got) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 100));
    got = await page.evaluate(fn, arg);
  }
  return got;
}

// openPage launches headless Chromium (CHROMIUM, else /usr/bin/chromium)
// with one page that may load only from base, and collects the page's
// console errors into the returned errors array.
export async function openPage(chromium, base, viewport = { width: 1400, height: 900 }) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
  return { browser, page, errors };
}

// jsonGetter returns a function that GETs base + path, requires 200 and
// returns the parsed JSON.
export function jsonGetter(base) {
  return async (path) => {
    const res = await fetch(base + path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
    return res.json();
  };
}
