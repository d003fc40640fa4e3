// Reads Parquet files with hyparquet and prints, per file, what the Go
// test compares with the bundle: rows, the root schema element's
// repetition, the values that are not valid UTF-8, and nulls per column.
// Usage: node read.mjs FILE...
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { decompress } from 'fzstd'

const compressors = { ZSTD: (input) => decompress(input) }
const strict = new TextDecoder('utf-8', { fatal: true })

// invalid counts the byte strings in v (a value, or a list of them) that
// are not valid UTF-8.
function invalid(v) {
  if (v instanceof Uint8Array) {
    try { strict.decode(v); return 0 } catch { return 1 }
  }
  if (Array.isArray(v)) return v.reduce((n, x) => n + invalid(x), 0)
  return 0
}

const out = {}
for (const path of process.argv.slice(2)) {
  const file = await asyncBufferFromFile(path)
  const metadata = await parquetMetadataAsync(file)
  const rows = await parquetReadObjects({ file, metadata, compressors, utf8: false })
  const nulls = {}
  let bad = 0
  for (const row of rows) {
    for (const [k, v] of Object.entries(row)) {
      if (v === null || v === undefined) nulls[k] = (nulls[k] ?? 0) + 1
      bad += invalid(v)
    }
  }
  out[path] = {
    rows: rows.length,
    metadata_rows: Number(metadata.num_rows),
    root_repetition: metadata.schema[0].repetition_type ?? null,
    invalid_utf8: bad,
    nulls,
  }
}
process.stdout.write(JSON.stringify(out))
