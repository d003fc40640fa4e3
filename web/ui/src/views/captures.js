// Captures: the list, upload by drag-and-drop or file picker, delete.
import { api, h, clear, showError, showInfo, fmtTime, basename, fmtBytes, plural, withCode } from '../util.js';
import { forgetCapture } from '../state.js';

export async function capturesView(main) {
  const list = h('div', { id: 'capture-list' });
  const input = h('input', { type: 'file', accept: '.zst,.gz,.tgz,.tzst', id: 'upload-input', hidden: true });
  const drop = h('div', { id: 'dropzone', class: 'dropzone', tabindex: '0' },
    h('strong', {}, 'Drop a capture bundle here'),
    h('span', {}, ' (.tar.zst or .tar.gz, as written by leakscope capture/upload) or '),
    h('button', { type: 'button', onclick: () => input.click() }, 'choose a file…'));
  main.append(
    h('section', { class: 'panel' }, h('h1', {}, 'Captures'), drop, input),
    h('section', { class: 'panel' }, list));

  const upload = async (file) => {
    showInfo(`Uploading ${file.name} (${fmtBytes(file.size)})…`);
    drop.classList.add('busy');
    try {
      const res = await api('/api/captures', { method: 'POST', body: file, headers: { 'Content-Type': 'application/octet-stream' } });
      showInfo(res.duplicate
        ? `${file.name} is already here as capture ${res.id}: the workbench keeps one copy of a bundle.`
        : `Uploaded ${file.name} as capture ${res.id}.`);
      await refresh();
      list.querySelector(`tr[data-id="${CSS.escape(res.id)}"]`)?.classList.add('selected');
    } catch (err) {
      showError(`The workbench did not take ${file.name}: ${err.message}`);
    } finally {
      drop.classList.remove('busy');
    }
  };
  input.addEventListener('change', () => { for (const f of input.files) upload(f); input.value = ''; });
  for (const ev of ['dragenter', 'dragover']) {
    drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  }
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    for (const f of e.dataTransfer.files) upload(f);
  });

  const refresh = async () => {
    const caps = await api('/api/captures');
    clear(list);
    if (!caps.length) {
      list.append(h('p', { class: 'empty' }, 'No captures yet. Upload one with ', h('code', {}, 'leakscope upload BUNDLE --to ' + location.origin), ' or drop it above.'));
      return;
    }
    list.append(h('table', { class: 'grid', id: 'captures-table' },
      h('thead', {}, h('tr', {}, ['Capture', 'Node', 'Process', 'Capture began', 'Sources', 'Size', 'First incident', 'Suspects', ''].map((t) => h('th', {}, t)))),
      h('tbody', {}, caps.map((c) => captureRow(c, refresh)))));
    // A capture still being analysed reads "analysing…": look again
    // until its answer is there, while this view is shown.
    if (caps.some((c) => c.analysis_pending)) {
      setTimeout(() => { if (list.isConnected) refresh().catch(() => {}); }, 1000);
    }
  };
  await refresh();
  return null;
}

// captureRow is one capture: what, where and when it was captured (when
// the capture itself began; the node agent's history before it apart),
// its sources and size, and the answer: its first incident in the
// report's words and how many suspects it has.
function captureRow(c, refresh) {
  const proc = [basename(c.process.exe) || c.process.url || '', c.process.pid ? `pid ${c.process.pid}` : ''].filter(Boolean).join(' · ');
  const when = [c.duration ? `${c.duration}, until ${fmtTime(c.end)}` : '', c.history_snapshots ? `after ${plural(c.history_snapshots, 'history snapshot')} from ${fmtTime(c.start)}` : ''].filter(Boolean);
  return h('tr', { 'data-id': c.id },
    h('td', {}, h('a', { href: `#/c/${c.id}/overview`, class: 'capture-link' }, c.id),
      c.preliminary ? h('span', { class: 'chip preliminary', title: 'The node agent\'s first answer, from the capture\'s first dump and the history before it; the final capture replaces it under this id.' }, 'preliminary') : null,
      c.capture_id && c.capture_id !== c.id ? h('div', { class: 'sub' }, c.capture_id) : null),
    h('td', {}, c.node || '–'),
    h('td', {}, proc || '–', c.process.go_version ? h('div', { class: 'sub' }, c.process.go_version) : null),
    h('td', { class: 'capture-start' }, fmtTime(c.capture_start), when.map((w) => h('div', { class: 'sub' }, w))),
    h('td', {}, c.sources.map((s, i) => h('span', { class: `chip ${s.status}`, title: (c.sources_text || [])[i] || s.status }, s.kind))),
    h('td', { class: 'num capture-size', 'data-bytes': String(c.bytes) }, c.size),
    h('td', { class: 'first-incident' }, firstIncident(c)),
    h('td', { class: 'suspects' }, suspectsCell(c)),
    h('td', {}, deleteButton(c, refresh)));
}

// firstIncident is the capture's first incident in the report's words,
// linked to the overview, which opens with it.
function firstIncident(c) {
  const inc = c.first_incident;
  if (!inc) return h('span', { class: 'sub' }, c.suspects === null || c.analysis_pending ? '–' : 'no incident');
  return h('a', { href: `#/c/${c.id}/overview`, class: 'incident-link', 'data-incident': inc.id }, h('b', {}, inc.id), ' ', withCode(inc.summary));
}

function suspectsCell(c) {
  if (c.analysis_pending) return h('span', { class: 'sub', 'data-pending': '1' }, 'analysing…');
  if (c.suspects === null) return h('span', { class: 'bad', title: c.analysis_error }, 'analysis failed');
  return h('span', {}, h('b', { class: c.suspects ? 'count bad' : 'count ok' }, String(c.suspects)), c.top_suspect ? h('div', { class: 'sub' }, c.top_suspect) : null);
}

function deleteButton(c, refresh) {
  return h('button', {
    type: 'button', class: 'danger', 'data-action': 'delete',
    onclick: async () => {
      if (!window.confirm(`Delete capture ${c.id}? Its files are removed from the server.`)) return;
      try {
        await api(`/api/captures/${c.id}`, { method: 'DELETE' });
        forgetCapture(c.id);
        await refresh();
      } catch (err) { showError(err); }
    },
  }, 'Delete');
}
