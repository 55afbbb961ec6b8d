// Foxglove's own WebSocket client against cyber_bridge's services and
// client publish, with bridge_test_peer on the graph
// (tests/bridge): calls /bridge_test/add {a: 2, b: 40}
// with the advertised request schema and expects sum 42 in the decoded
// response; then advertises /bridge_test/cmd (cyber.dds_test.AddRequest),
// publishes {a: 7, b: 8} every 100 ms until the peer's answer on
// /bridge_test/ack (subscribed through the bridge) says sum 15. Exits 0
// then; any failure exits 1 with what was seen.
//
//   node foxglove_client_services_check.js ws://127.0.0.1:PORT [timeout_s]
"use strict";

const path = require("path");
const fs = require("fs");

const modules = process.env.CYBER_NPM_MODULES;
if (!modules || !fs.existsSync(path.join(modules, "@foxglove", "ws-protocol"))) {
  console.error(
    `FAIL: Foxglove's client is not installed (CYBER_NPM_MODULES=${modules || "unset"}): ` +
      "run `bash tools/setup.sh`");
  process.exit(1);
}
const { FoxgloveClient } = require(path.join(modules, "@foxglove", "ws-protocol"));
const WebSocket = require(path.join(modules, "ws"));
const protobuf = require(path.join(modules, "protobufjs"));
const descriptor = require(path.join(modules, "protobufjs", "ext", "descriptor"));

const url = process.argv[2];
const timeoutSeconds = Number(process.argv[3] || 60);
const seen = { capabilities: null, services: [], advertised: [], statuses: [], failures: [] };
function fail(why) {
  console.error(`FAIL: ${why}`);
  console.error(`  seen: ${JSON.stringify(seen)}`);
  process.exit(1);
}
setTimeout(() => fail(`not done within ${timeoutSeconds} s`), timeoutSeconds * 1000).unref();

const typeFrom = (schema, name) =>
  protobuf.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(Buffer.from(schema, "base64")))
    .lookupType(name);
const num = (v) => Number(String(v));

const client = new FoxgloveClient({
  ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]),
});
let requestType = null, responseType = null, ackType = null;
let ackSubscription = null, cmdChannel = null, publishTimer = null, published = 0;

client.on("error", (e) => fail(`client error: ${e && e.message ? e.message : e}`));
client.on("serverInfo", (info) => {
  seen.capabilities = info.capabilities;
  for (const c of ["services", "clientPublish"]) {
    if (!info.capabilities.includes(c)) fail(`serverInfo lacks capability ${c}`);
  }
});
client.on("status", (s) => seen.statuses.push(s));
client.on("serviceCallFailure", (f) => { seen.failures.push(f); fail(`call failed: ${f.message}`); });
client.on("advertiseServices", (services) => {
  for (const s of services) {
    seen.services.push(s.name);
    if (s.name !== "/bridge_test/add" || requestType) continue;
    requestType = typeFrom(s.request.schema, s.request.schemaName);
    responseType = typeFrom(s.response.schema, s.response.schemaName);
    client.sendServiceCallRequest({
      serviceId: s.id, callId: 1, encoding: "protobuf",
      data: requestType.encode(requestType.create({ a: 2, b: 40 })).finish(),
    });
  }
});
client.on("serviceCallResponse", (r) => {
  const response = responseType.decode(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength));
  if (r.callId !== 1 || r.encoding !== "protobuf" || num(response.sum) !== 42) {
    fail(`call response ${JSON.stringify(responseType.toObject(response, { longs: String }))}`);
  }
  console.log(`called /bridge_test/add {a: 2, b: 40}: sum ${response.sum}`);
  // Now publish: the peer answers each command on /bridge_test/ack.
  cmdChannel = client.advertise({
    topic: "/bridge_test/cmd", encoding: "protobuf", schemaName: requestType.fullName.slice(1),
  });
  const cmd = requestType.encode(requestType.create({ a: 7, b: 8 })).finish();
  // Until the bridge's writer and the peer's reader have matched, a
  // message is lost (volatile): send again every 100 ms.
  publishTimer = setInterval(() => { client.sendMessage(cmdChannel, cmd); published++; }, 100);
});
client.on("advertise", (channels) => {
  for (const c of channels) {
    seen.advertised.push(c.topic);
    if (c.topic !== "/bridge_test/ack" || ackSubscription !== null) continue;
    ackType = typeFrom(c.schema, c.schemaName);
    ackSubscription = client.subscribe(c.id);
  }
});
client.on("message", ({ subscriptionId, data }) => {
  if (subscriptionId !== ackSubscription) return;
  const ack = ackType.decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  if (num(ack.sum) !== 15) fail(`ack ${JSON.stringify(ackType.toObject(ack, { longs: String }))}`);
  console.log(`published {a: 7, b: 8} on /bridge_test/cmd (${published} sent); ` +
              `the peer answered sum ${ack.sum} on /bridge_test/ack`);
  clearInterval(publishTimer);
  client.unadvertise(cmdChannel);
  client.close();
  process.exit(0);
});
