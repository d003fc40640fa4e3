// Builds the workbench into ../static (committed, embedded by go:embed).
// Reproducible: pinned esbuild and dependencies (package-lock.json), no
// source maps, no timestamps. Run with `npm ci && npm run build`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const out = new URL('../static/', import.meta.url).pathname;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: 'src/main.js' },
  bundle: true,
  minify: true,
  keepNames: true, // d3-flame-graph tests constructor.name === 'Node'
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  outdir: out,
  legalComments: 'linked',
  logLevel: 'info',
  charset: 'utf8',
});
copyFileSync('src/index.html', out + 'index.html');
copyFileSync('src/favicon.svg', out + 'favicon.svg');
