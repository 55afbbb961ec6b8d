// Reads a recording with Foxglove's own MCAP library (@mcap/core, with
// @mcap/support's zstd and lz4) the way Foxglove opens a file, and checks
// it as CI must see every recording the tests make:
//   - every record parses in a streaming read with CRCs validated;
//   - the summary (indexed read) agrees with the data: statistics message
//     count and per-channel counts, one chunk index per chunk, the data
//     section's CRC, and an indexed read of every message in log-time
//     order giving the same messages;
//   - each schema is a protobuf FileDescriptorSet that protobufjs loads,
//     naming a type it defines, and every message decodes with it.
// With --truncated (a recorder killed with -9), only the streaming read of
// the complete records is checked, and it must end in a cut, not an error.
//
//   node check_mcap.js FILE [--truncated]
//
// Prints one line "OK <json summary>" and exits 0, or "FAIL: <why>" and 1.
// Packages come from tools/npm/node_modules through CYBER_NPM_MODULES
// (tools/setup.sh installs them).
"use strict";

const path = require("path");
const fs = require("fs");

function fail(why) {
  console.log(`FAIL: ${why}`);
  process.exit(1);
}

const modules = process.env.CYBER_NPM_MODULES;
if (!modules || !fs.existsSync(path.join(modules, "@mcap", "core"))) {
  fail(`Foxglove's MCAP library is not installed (CYBER_NPM_MODULES=${modules || "unset"}): ` +
       "run `bash tools/setup.sh` (npm ci --prefix tools/npm)");
}
const { McapStreamReader, McapIndexedReader } = require(path.join(modules, "@mcap", "core"));
const { loadDecompressHandlers } = require(path.join(modules, "@mcap", "support"));
const { crc32 } = require(path.join(modules, "@foxglove", "crc"));
const protobuf = require(path.join(modules, "protobufjs"));
const descriptor = require(path.join(modules, "protobufjs", "ext", "descriptor"));

const file = process.argv[2];
const truncated = process.argv.includes("--truncated");
if (!file) fail("usage: node check_mcap.js FILE [--truncated]");

async function main() {
  const bytes = fs.readFileSync(file);
  const decompressHandlers = await loadDecompressHandlers();

  // 1. Streaming: every record, CRCs validated.
  const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true, includeChunks: true });
  stream.append(bytes);
  const schemas = new Map();
  const channels = new Map();
  const streamed = [];
  const counts = new Map();
  let chunks = 0;
  let privateRecords = 0;
  let metadata = [];
  let sawFooter = false;
  for (;;) {
    let record;
    try {
      record = stream.nextRecord();
    } catch (e) {
      fail(`${file}: streaming read: ${e.message}`);
    }
    if (record === undefined) break;
    switch (record.type) {
      case "Schema": schemas.set(record.id, record); break;
      case "Channel": channels.set(record.id, record); break;
      case "Message":
        streamed.push(record);
        counts.set(record.channelId, (counts.get(record.channelId) || 0) + 1);
        break;
      case "Chunk": chunks++; break;
      case "Metadata": metadata.push(record); break;
      case "Unknown": privateRecords++; break;
      case "Footer": sawFooter = true; break;
      default: break;
    }
  }
  if (!truncated && (!sawFooter || !stream.done())) {
    fail(`${file}: streaming read ended without the footer and closing magic ` +
         `(${stream.bytesRemaining()} bytes left)`);
  }
  if (truncated && sawFooter) fail(`${file}: --truncated, but the file is complete`);

  // 2. Schemas load, messages decode.
  const types = new Map();
  for (const [id, s] of schemas) {
    if (s.encoding !== "protobuf") fail(`schema ${id} (${s.name}): encoding "${s.encoding}"`);
    let root;
    try {
      root = protobuf.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(s.data));
      types.set(id, root.lookupType(s.name));
    } catch (e) {
      fail(`schema ${id} (${s.name}): not a FileDescriptorSet defining it: ${e.message}`);
    }
  }
  for (const m of streamed) {
    const c = channels.get(m.channelId);
    if (!c) fail(`message at log_time ${m.logTime}: channel ${m.channelId} was never defined`);
    if (c.messageEncoding !== "protobuf") fail(`${c.topic}: messageEncoding "${c.messageEncoding}"`);
    const type = types.get(c.schemaId);
    if (!type) fail(`${c.topic}: schema ${c.schemaId} was never defined`);
    try {
      type.decode(m.data);
    } catch (e) {
      fail(`${c.topic} message at log_time ${m.logTime} (seq ${m.sequence}): ` +
           `does not decode as ${type.fullName}: ${e.message}`);
    }
  }

  const summary = {
    messages: streamed.length,
    chunks,
    private_records: privateRecords,
    metadata: metadata.map((m) => m.name),
    channels: Object.fromEntries([...channels.values()].map((c) => [
      c.topic, { schema: schemas.get(c.schemaId).name, messages: counts.get(c.id) || 0 }])),
  };
  if (truncated) {
    console.log(`OK ${JSON.stringify(summary)}`);
    return;
  }

  // 3. The summary agrees with the data.
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
  };
  let indexed;
  try {
    indexed = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  } catch (e) {
    fail(`${file}: indexed read: ${e.message}`);
  }
  const st = indexed.statistics;
  if (!st) fail(`${file}: the summary has no Statistics record`);
  if (st.messageCount !== BigInt(streamed.length)) {
    fail(`statistics say ${st.messageCount} messages, the data holds ${streamed.length}`);
  }
  for (const [id, n] of counts) {
    if (st.channelMessageCounts.get(id) !== BigInt(n)) {
      fail(`channel ${channels.get(id).topic}: statistics say ` +
           `${st.channelMessageCounts.get(id)}, the data holds ${n}`);
    }
  }
  if (indexed.chunkIndexes.length !== chunks) {
    fail(`${indexed.chunkIndexes.length} chunk indexes for ${chunks} chunks`);
  }
  if (st.chunkCount !== chunks) fail(`statistics say ${st.chunkCount} chunks, the data holds ${chunks}`);
  if (indexed.dataSectionCrc !== undefined && indexed.dataSectionCrc !== 0) {
    const crc = crc32(bytes.subarray(0, Number(indexed.dataEndOffset)));
    if (crc !== indexed.dataSectionCrc) {
      fail(`DataEnd's data_section_crc ${indexed.dataSectionCrc} does not match the data (${crc})`);
    }
  }
  if (indexed.schemasById.size !== schemas.size || indexed.channelsById.size !== channels.size) {
    fail(`the summary has ${indexed.schemasById.size} schemas and ${indexed.channelsById.size} ` +
         `channels, the data ${schemas.size} and ${channels.size}`);
  }
  let read = 0;
  let last = -1n;
  for await (const m of indexed.readMessages({ validateCrcs: true })) {
    if (m.logTime < last) fail(`indexed read: log_time ${m.logTime} after ${last}`);
    last = m.logTime;
    read++;
  }
  if (read !== streamed.length) fail(`indexed read gave ${read} messages, streaming ${streamed.length}`);
  let metadataRead = 0;
  for await (const m of indexed.readMetadata()) {
    void m;
    metadataRead++;
  }
  if (metadataRead !== metadata.length) {
    fail(`${indexed.metadataIndexes.length} metadata indexes read ${metadataRead}, the data holds ${metadata.length}`);
  }
  console.log(`OK ${JSON.stringify(summary)}`);
}

main().catch((e) => fail(`${file}: ${e && e.stack ? e.stack : e}`));
