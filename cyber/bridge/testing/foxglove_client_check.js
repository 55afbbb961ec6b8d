// Foxglove's own WebSocket client (@foxglove/ws-protocol's FoxgloveClient,
// over the `ws` package) against a running cyber_bridge: waits for the
// advertise of a channel, checks how it is advertised, subscribes, decodes
// N messages with the advertised schema (protobufjs, from the
// FileDescriptorSet in the advertise), checks the fields of the sensor
// example's IMU readings, unsubscribes, and exits 0. Any failure exits 1
// with what was seen.
//
//   node foxglove_client_check.js ws://127.0.0.1:PORT [/sensor/imu] [N] [timeout_s]
//
// The packages come from tools/npm/node_modules (tools/setup.sh installs
// them), found through CYBER_NPM_MODULES.
"use strict";

const path = require("path");
const fs = require("fs");

const modules = process.env.CYBER_NPM_MODULES;
if (!modules || !fs.existsSync(path.join(modules, "@foxglove", "ws-protocol"))) {
  console.error(
    `FAIL: Foxglove's client is not installed (CYBER_NPM_MODULES=${modules || "unset"}): ` +
      "run `bash tools/setup.sh` (npm ci --prefix tools/npm), which also writes the " +
      "test_env line of .bazelrc.generated");
  process.exit(1);
}
const { FoxgloveClient } = require(path.join(modules, "@foxglove", "ws-protocol"));
const WebSocket = require(path.join(modules, "ws"));
const protobuf = require(path.join(modules, "protobufjs"));
const descriptor = require(path.join(modules, "protobufjs", "ext", "descriptor"));

const url = process.argv[2];
const topic = process.argv[3] || "/sensor/imu";
const wanted = Number(process.argv[4] || 20);
const timeoutSeconds = Number(process.argv[5] || 60);

const seen = { serverInfo: null, advertised: [], statuses: [] };
function fail(why) {
  console.error(`FAIL: ${why}`);
  console.error(`  serverInfo: ${JSON.stringify(seen.serverInfo)}`);
  console.error(`  advertised: ${seen.advertised.join(", ") || "(nothing)"}`);
  for (const s of seen.statuses) console.error(`  status: ${JSON.stringify(s)}`);
  process.exit(1);
}
setTimeout(() => fail(`no ${wanted} messages on ${topic} within ${timeoutSeconds} s`),
           timeoutSeconds * 1000).unref();

const client = new FoxgloveClient({
  ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]),
});
let subscription = null;
let type = null;
const decoded = [];

client.on("error", (e) => fail(`client error: ${e && e.message ? e.message : e}`));
client.on("close", (e) => {
  if (decoded.length < wanted) fail(`connection closed (code ${e && e.code})`);
});
client.on("serverInfo", (info) => {
  seen.serverInfo = info;
  if (info.name !== "cyber_bridge") fail(`serverInfo.name is "${info.name}"`);
});
client.on("status", (s) => seen.statuses.push(s));
client.on("advertise", (channels) => {
  for (const c of channels) {
    seen.advertised.push(`${c.topic} (${c.schemaName}, id ${c.id})`);
    if (c.topic !== topic || subscription !== null) continue;
    if (c.encoding !== "protobuf") fail(`${topic}: encoding "${c.encoding}"`);
    if (c.schemaEncoding !== "protobuf") fail(`${topic}: schemaEncoding "${c.schemaEncoding}"`);
    // The schema: a FileDescriptorSet in base64.
    const set = descriptor.FileDescriptorSet.decode(Buffer.from(c.schema, "base64"));
    const root = protobuf.Root.fromDescriptor(set);
    type = root.lookupType(c.schemaName);
    subscription = client.subscribe(c.id);
    console.log(`advertised ${c.topic} as ${c.schemaName} (${set.file.length} files), ` +
                `subscribed (${subscription})`);
  }
});

const toNumber = (v) => (v === undefined || v === null ? NaN : Number(String(v)));

client.on("message", ({ subscriptionId, timestamp, data }) => {
  if (subscriptionId !== subscription || decoded.length >= wanted) return;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const m = type.decode(bytes);
  // The receive time, ns since the Unix epoch: within a minute of now.
  const skewSeconds = Math.abs(Number(timestamp / 1000000n) - Date.now()) / 1000;
  if (!(skewSeconds < 60)) fail(`timestamp ${timestamp} ns is ${skewSeconds} s from now`);
  decoded.push(m);
  if (topic === "/sensor/imu") {
    const seq = toNumber(m.seq);
    const prev = decoded.length > 1 ? toNumber(decoded[decoded.length - 2].seq) : 0;
    if (!(seq > prev)) fail(`seq ${seq} after ${prev}`);
    // Field names as in the .proto (a Root from a descriptor keeps them).
    const stamp = m.stamp_ns !== undefined ? m.stamp_ns : m.stampNs;
    if (!(toNumber(stamp) > 0)) fail(`stamp_ns ${stamp}`);
    if (!m.accel || Math.abs(m.accel.z - 9.81) > 1e-9) fail(`accel ${JSON.stringify(m.accel)}`);
    if (!(Math.abs(m.accel.x) <= 0.1 + 1e-9 && Math.abs(m.accel.y) <= 0.1 + 1e-9)) {
      fail(`accel ${JSON.stringify(m.accel)}`);
    }
    if (!m.gyro || !(Math.abs(m.gyro.z || 0) <= 0.05 + 1e-9)) fail(`gyro ${JSON.stringify(m.gyro)}`);
  }
  if (decoded.length === wanted) {
    const first = decoded[0], last = decoded[decoded.length - 1];
    console.log(`decoded ${wanted} messages on ${topic}: seq ${first.seq}..${last.seq}, ` +
                `last ${JSON.stringify(type.toObject(last, { longs: String }))}`);
    client.unsubscribe(subscription);
    client.close();
    process.exit(0);
  }
});
