// Reads every TABLE.arrow of a leakscope bundle with apache-arrow (JS) and
// prints, per table, the row count and the sum of each integer or float
// column, as JSON. The Go test compares this with what Go wrote.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC, compressionRegistry, CompressionType } from "apache-arrow";
import { decompress as zstdDecompress } from "fzstd";
import lz4 from "lz4js";

// Copy into a fresh buffer: typed-array views of 64-bit columns need an
// 8-byte-aligned offset, which neither decoder's output promises.
const aligned = (raw) => {
  const out = new Uint8Array(new ArrayBuffer((raw.length + 7) & ~7));
  out.set(raw);
  return out.subarray(0, raw.length);
};

// LZ4 frames for every table; zstd in bundles written before (both codecs
// are read).
compressionRegistry.set(CompressionType.ZSTD, { encode: null, decode: (data) => aligned(zstdDecompress(data)) });
compressionRegistry.set(CompressionType.LZ4_FRAME, { encode: null, decode: (data) => aligned(lz4.decompress(data)) });

// sumDeltas decodes the delta column name batch by batch and returns the
// sum of its non-null values. With low, the name of a uint16 column, each
// delta is split: name holds its high bits, low its low 16 bits.
function sumDeltas(table, name, low) {
  let s = 0n;
  for (const batch of table.batches) {
    const lows = low ? batch.getChild(low).data : null;
    batch.getChild(name).data.forEach((d, k) => {
      let run = 0n;
      for (let i = 0; i < d.length; i++) {
        let v = d.values[d.offset + i];
        if (lows) v = (v << 16n) | BigInt(lows[k].values[lows[k].offset + i]);
        run = BigInt.asIntN(64, run + v);
        if (d.getValid(i)) s += run;
      }
    });
  }
  return s;
}

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
    if (field.name.endsWith("_delta_high")) {
      // A delta split in two (schema 4): its high bits here, its low 16
      // bits in NAME_delta_low.
      const base = field.name.slice(0, -"_delta_high".length);
      sums[base] = sumDeltas(table, field.name, base + "_delta_low").toString();
      continue;
    }
    if (field.name.endsWith("_delta_low")) continue;
    if (field.name.endsWith("_delta")) {
      // A column stored as deltas (schema 3): each batch's values are the
      // running sum of its deltas, over every slot, null or not, wrapping
      // at 64 bits; reported under the column's own name.
      sums[field.name.slice(0, -"_delta".length)] = sumDeltas(table, field.name).toString();
      continue;
    }
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
