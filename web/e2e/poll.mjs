// Helpers shared by the browser tests.

// evaluateUntil evaluates fn(arg) in the page until done(result) holds or
// ms pass (a loaded machine may paint a chart after its canvas appears),
// every 100 ms, and returns the last result: the caller asserts on it, so
// what never comes still fails.
export async function evaluateUntil(page, fn, arg, done, ms = 10000) {
  let got = await page.evaluate(fn, arg);
  for (const deadline = Date.now() + ms; !done(got) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 100));
    got = await page.evaluate(fn, arg);
  }
  return got;
}
