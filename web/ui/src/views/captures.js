// Captures: the list, upload by drag-and-drop or file picker, delete.
import { api, h, clear, showError, showInfo, fmtTime, basename, fmtBytes } from '../util.js';
import { forgetCapture } from '../state.js';

export async function capturesView(main) {
  const list = h('div', { id: 'capture-list' }, 'Loading…');
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
    const rows = caps.map((c) => {
      const proc = [basename(c.process.exe) || c.process.url || '', c.process.pid ? `pid ${c.process.pid}` : ''].filter(Boolean).join(' · ');
      const dur = c.duration || '';
      const suspects = c.suspects === null
        ? h('span', { class: 'bad', title: c.analysis_error }, 'analysis failed')
        : h('span', {}, h('b', { class: c.suspects ? 'count bad' : 'count ok' }, String(c.suspects)), c.top_suspect ? h('div', { class: 'sub' }, c.top_suspect) : null);
      return h('tr', { 'data-id': c.id },
        h('td', {}, h('a', { href: `#/c/${c.id}/overview`, class: 'capture-link' }, c.id),
          c.preliminary ? h('span', { class: 'chip preliminary', title: 'The node agent\'s first answer, from the capture\'s first dump and the history before it; the final capture replaces it under this id.' }, 'preliminary') : null,
          c.capture_id && c.capture_id !== c.id ? h('div', { class: 'sub' }, c.capture_id) : null),
        h('td', {}, c.node || '–'),
        h('td', {}, proc || '–', c.process.go_version ? h('div', { class: 'sub' }, c.process.go_version) : null),
        h('td', {}, fmtTime(c.start), h('div', { class: 'sub' }, dur ? `${dur} · until ${fmtTime(c.end)}` : '')),
        h('td', {}, c.sources.map((s, i) => h('span', { class: `chip ${s.status}`, title: (c.sources_text || [])[i] || s.status }, s.kind))),
        h('td', { class: 'num capture-size', 'data-bytes': String(c.bytes) }, c.size),
        h('td', { class: 'suspects' }, suspects),
        h('td', {}, h('button', {
          type: 'button', class: 'danger', 'data-action': 'delete',
          onclick: async () => {
            if (!window.confirm(`Delete capture ${c.id}? Its files are removed from the server.`)) return;
            try {
              await api(`/api/captures/${c.id}`, { method: 'DELETE' });
              forgetCapture(c.id);
              await refresh();
            } catch (err) { showError(err); }
          },
        }, 'Delete')));
    });
    list.append(h('table', { class: 'grid', id: 'captures-table' },
      h('thead', {}, h('tr', {}, ['Capture', 'Node', 'Process', 'Time range', 'Sources', 'Size', 'Suspects', ''].map((t) => h('th', {}, t)))),
      h('tbody', {}, rows)));
  };
  await refresh();
  return null;
}
