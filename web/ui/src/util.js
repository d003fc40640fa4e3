// Shared helpers: API calls, formatting and tiny DOM builders.

const TOKEN_KEY = 'leakscope-token';

// setTokenCookie keeps the token in a cookie too, so that downloads
// (plain links) carry it to a workbench that needs it for reads.
function setTokenCookie(token) {
  document.cookie = `leakscope-token=${encodeURIComponent(token)}; path=/; SameSite=Strict`;
}
if (localStorage.getItem(TOKEN_KEY)) setTokenCookie(localStorage.getItem(TOKEN_KEY));

// api fetches a JSON endpoint; it throws an Error carrying the server's
// {"error": ...} message. Requests send the token kept in localStorage (a
// workbench off loopback needs it for reads too); on 401 it is asked for.
export async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers['Authorization'] = 'Bearer ' + token;
  const res = await fetch(path, Object.assign({}, opts, { headers }));
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!res.ok) {
    if (res.status === 401) {
      const t = window.prompt('This workbench needs its token:');
      if (t) { localStorage.setItem(TOKEN_KEY, t); setTokenCookie(t); return api(path, opts); }
    }
    const err = new Error((body && body.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

// h builds an element: h('div', {class: 'x', onclick: fn}, child, ...).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// fill replaces el's children, skipping null, undefined and false as h does.
export function fill(el, ...children) {
  clear(el);
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const banner = () => document.getElementById('banner');

// showError puts a message in the banner at the top of the page.
export function showError(err) {
  const b = banner();
  b.textContent = String(err && err.message ? err.message : err);
  b.className = 'error';
  b.hidden = false;
}

export function showInfo(msg) {
  const b = banner();
  b.textContent = msg;
  b.className = 'info';
  b.hidden = false;
}

export function hideBanner() {
  banner().hidden = true;
}

const nf = new Intl.NumberFormat('en-US');

export function fmtNum(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  return nf.format(Math.round(n * 100) / 100);
}

// plural words a count: "1 lifetime", "2 lifetimes" (counts the API
// words itself come worded from it).
export function plural(n, noun, nouns) {
  return `${fmtNum(n)} ${n === 1 ? noun : nouns || noun + 's'}`;
}

// fmtBytes writes bytes as internal/format.Bytes does, rule for rule:
// whole bytes below a KiB, one decimal above ("512 B", "1.5 MiB"), and
// "1.0 MiB" rather than "1024.0 KiB".
export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  if (!Number.isFinite(n)) return '? B';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = Math.abs(n), i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  let s = i ? `${v.toFixed(1)} ${units[i]}` : `${Math.round(v)} B`;
  if (s.startsWith('1024.0 ') && i < units.length - 1) s = `1.0 ${units[i + 1]}`;
  return n < 0 && s !== '0 B' ? '-' + s : s;
}

export function fmtValue(n, unit) {
  if (unit === 'bytes') return fmtBytes(n);
  if (unit === 'nanoseconds') return fmtDur(n / 1e6);
  return fmtNum(n);
}

// fmtDur formats milliseconds.
export function fmtDur(ms) {
  if (ms === null || ms === undefined) return '–';
  const a = Math.abs(ms);
  if (a < 1) return (ms * 1000).toFixed(0) + ' µs';
  if (a < 1000) return ms.toFixed(1) + ' ms';
  if (a < 60e3) return (ms / 1000).toFixed(2) + ' s';
  if (a < 3600e3) return (ms / 60e3).toFixed(1) + ' min';
  return (ms / 3600e3).toFixed(1) + ' h';
}

// fmtTime formats an RFC 3339 string, Date or Unix nanoseconds as UTC to
// the millisecond, as internal/format.Time writes every time the API
// words ("2026-12-01 12:53:55.287 UTC"): one page, one way to read a time.
export function fmtTime(t) {
  if (t === null || t === undefined || t === '' || t === 0) return '–';
  if (typeof t === 'string' && /^\d+$/.test(t)) t = Number(t);
  const d = typeof t === 'number' ? new Date(t / 1e6) : new Date(t);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1971) return '–';
  return d.toISOString().replace('T', ' ').replace(/Z$/, ' UTC');
}

// fmtTimeShort is fmtTime's time of day ("12:53:55.287").
export function fmtTimeShort(t) {
  const s = fmtTime(t);
  return s.length > 10 ? s.slice(11).replace(/ UTC$/, '') : s;
}

// loading is the sign that a view waits on the workbench: a capture
// opened for the first time is analysed before its views can answer.
export function loading(text, id) {
  return h('p', { class: 'loading', id: id || null, role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' ', text);
}

// withCode turns the `code spans` of an analysis text into <code>
// elements (the rest stays text), as the reports render them.
export function withCode(s) {
  return String(s || '').split(/`([^`]+)`/).map((part, i) => (i % 2 ? h('code', {}, part) : part));
}

export function basename(p) {
  return p ? p.split('/').pop() : '';
}

// debounce delays fn until calls pause for ms.
export function debounce(fn, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

export function enc(s) {
  return encodeURIComponent(s);
}
