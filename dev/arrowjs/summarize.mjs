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

// stored returns the stored values of column name in batch, as BigInts,
// joined with its low 16 bits from the uint16 column low when given.
function stored(batch, name, low) {
  const out = [];
  const lows = low ? batch.getChild(low).data : null;
  batch.getChild(name).data.forEach((d, k) => {
    for (let i = 0; i < d.length; i++) {
      let v = d.values[d.offset + i];
      if (lows) v = (v << 16n) | BigInt(lows[k].values[lows[k].offset + i]);
      out.push({ v, valid: d.getValid(i) });
    }
  });
  return out;
}

// decoded returns the values of the column that batch stores as name: the
// running sum of its deltas (NAME_delta, or NAME_delta_high with
// NAME_delta_low), over every slot, null or not, wrapping at 64 bits.
function decoded(batch, name) {
  const split = batch.schema.fields.some((f) => f.name === name + "_delta_high");
  const rows = split ? stored(batch, name + "_delta_high", name + "_delta_low") : stored(batch, name + "_delta");
  let run = 0n;
  return rows.map(({ v, valid }) => {
    run = BigInt.asIntN(64, run + v);
    return { v: run, valid };
  });
}

// sumValid is the sum of the valid values of rows.
const sumValid = (rows) => rows.reduce((s, { v, valid }) => (valid ? s + v : s), 0n);

// sumOf returns the sum of the valid values of the column a table stores
// as field (a stored form of schema.Encodings) under the column's own
// name, or null when field is stored as it is or is part of another
// column's form.
function sumOf(table, field) {
  let m;
  if ((m = field.match(/^(.*)_less_(.*)_high$/))) {
    // NAME_less_BASE_high/_low (schema 5): each row's value less the
    // decoded BASE column's, split in two; 0 in null slots.
    let s = 0n;
    for (const batch of table.batches) {
      const base = decoded(batch, m[2]);
      stored(batch, field, m[1] + "_less_" + m[2] + "_low").forEach(({ v, valid }, i) => {
        if (valid) s += BigInt.asIntN(64, v + base[i].v);
      });
    }
    return [m[1], s];
  }
  if ((m = field.match(/^(.*)_delta_high$/)) || (m = field.match(/^(.*)_delta$/))) {
    let s = 0n;
    for (const batch of table.batches) s += sumValid(decoded(batch, m[1]));
    return [m[1], s];
  }
  return null;
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
    if (field.name.endsWith("_low")) continue;
    const dec = sumOf(table, field.name);
    if (dec) {
      sums[dec[0]] = dec[1].toString();
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
