// Per-page cache of capture details.
import { api } from './util.js';

const details = new Map(); // capture id -> detail promise

// captureDetail returns GET /api/captures/{id}, fetched once per page load.
export function captureDetail(id, refresh) {
  if (refresh || !details.has(id)) {
    const p = api(`/api/captures/${id}`);
    p.catch(() => details.delete(id));
    details.set(id, p);
  }
  return details.get(id);
}

export function forgetCapture(id) {
  details.delete(id);
}
