// Reads every TABLE.arrow of a leakscope bundle with apache-arrow (JS) and
// prints, per table, the row count and the sum of each integer or float
// column, as JSON. The Go test compares this with what Go wrote.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC, compressionRegistry, CompressionType } from "apache-arrow";
import { decompress } from "fzstd";

compressionRegistry.set(CompressionType.ZSTD, {
  encode: null,
  // Copy into a fresh buffer: typed-array views of 64-bit columns need an
  // 8-byte-aligned offset, which fzstd's output does not promise.
  decode: (data) => {
    const raw = decompress(data);
    const aligned = new Uint8Array(new ArrayBuffer((raw.length + 7) & ~7));
    aligned.set(raw);
    return aligned.subarray(0, raw.length);
  },
});

const dir = process.argv[2];
const out = {};
for (const name of readdirSync(dir)) {
  if (!name.endsWith(".arrow")) continue;
  const table = tableFromIPC(readFileSync(join(dir, name)));
  const sums = {};
  for (const field of table.schema.fields) {
    const col = table.getChild(field.name);
    const t = String(field.type);
    if (!/^(Int|Uint|Float)/.test(t)) continue;
    let s = 0n;
    for (const v of col) {
      if (v === null || v === undefined) continue;
      s += typeof v === "bigint" ? v : BigInt(Math.round(v));
    }
    sums[field.name] = s.toString();
  }
  // Dictionary-encoded strings must decode: count distinct values.
  const distinct = {};
  for (const field of table.schema.fields) {
    if (!String(field.type).startsWith("Dictionary")) continue;
    distinct[field.name] = new Set(table.getChild(field.name).toArray()).size;
  }
  out[name.replace(/\.arrow$/, "")] = { rows: table.numRows, sums, distinct };
}
console.log(JSON.stringify(out));
