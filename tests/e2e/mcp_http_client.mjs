// The TypeScript SDK's Streamable HTTP client, driven by tests/e2e/test_http_node_clients.py:
// argv[2] the MCP URL, argv[3] a JSON object {headers, latest, calls: {tool: arguments}}.
// It initializes, lists the tools and calls each one (an argument equal to `latest` is
// replaced by the id the call before returned: a checkpoint, or the newest version of a
// history, as test_mcp_sdk.with_latest does), and prints one JSON document: the
// listed names, and per call its isError and structuredContent. The SDK checks every
// structuredContent against the tool's outputSchema (isError results too) and throws if not.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, plan] = [process.argv[2], JSON.parse(process.argv[3])];
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: plan.headers },
});
const client = new Client({ name: "chorus-tools-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = {};
let latest = null;
for (const [name, args] of Object.entries(plan.calls)) {
  const given = Object.fromEntries(Object.entries(args).map(
    ([k, v]) => [k, v === plan.latest ? latest : v]));
  const result = await client.callTool({ name, arguments: given });
  results[name] = { isError: result.isError ?? false, structured: result.structuredContent };
  const s = result.structuredContent ?? {};
  latest = s.checkpoint ?? (s.versions ?? [])[0]?.version ?? null;
}
await client.ping();
await transport.terminateSession();
await client.close();
console.log(JSON.stringify({ session: transport.sessionId ?? null,
                             tools: tools.map((t) => t.name), results }));
