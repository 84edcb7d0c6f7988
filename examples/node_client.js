// A chorus-tools client in Node: child_process and newline-delimited JSON, no dependency.
//
//     node examples/node_client.js WORKSPACE [SERVER COMMAND...]
//
// The server command defaults to `chorus-tools`. The client writes a file, reads it,
// patches it with the version it read (expected_version), recovers from a find_not_found
// using the hint, and cancels a search it no longer needs.
"use strict";

const { spawn } = require("node:child_process");
const readline = require("node:readline");

class RpcError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.data = error.data || {};
  }
}

// Responses may arrive in any order: each is matched to its request by id.
class Client {
  constructor(command, workspace) {
    this.process = spawn(command[0], [...command.slice(1), "--workspace", workspace], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.nextId = 1;
    this.pending = new Map();
    readline.createInterface({ input: this.process.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new RpcError(message.error));
      else waiter.resolve(message.result);
    });
  }

  // A request and the promise of its result, not yet sent.
  request(method, params) {
    const id = this.nextId++;
    const result = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    return { id, result, message: { jsonrpc: "2.0", id, method, params } };
  }

  send(...messages) {
    this.process.stdin.write(messages.map((m) => JSON.stringify(m) + "\n").join(""));
  }

  call(method, params) {
    const { result, message } = this.request(method, params);
    this.send(message);
    return result;
  }

  // End of input: the server finishes what is in flight and exits 0.
  close() {
    return new Promise((resolve) => {
      this.process.on("exit", (code) => resolve(code));
      this.process.stdin.end();
    });
  }
}

async function main(workspace, command) {
  const client = new Client(command, workspace);
  await client.call("file.write", {
    path: "hello.py",
    content: 'def greet(name):\n    return "hello, " + name\n',
  });

  const read = await client.call("file.read", { path: "hello.py" });
  console.log(`read hello.py: ${read.total_lines} lines`);

  let patched = await client.call("file.patch", {
    path: "hello.py",
    expected_version: read.version,
    patches: [{ find: '"hello, "', replace: '"Hello, "' }],
  });
  console.log(`patched with expected_version: ${patched.replacements} replacement`);

  const fix = 'return "Hello " + name'; // a typo: the file says "Hello, "
  try {
    await client.call("file.patch", { path: "hello.py", patches: [{ find: fix, replace: "unused" }] });
  } catch (err) {
    if (!(err instanceof RpcError) || err.data.error !== "find_not_found" || !err.data.hint) throw err;
    const hint = err.data.hint;
    console.log(`find_not_found: closest region lines ${hint.start_line}-${hint.end_line}: ${hint.text.trim()}`);
    patched = await client.call("file.patch", {
      path: "hello.py",
      patches: [{ find: hint.text, replace: '    return f"Hello, {name}!"' }],
    });
    console.log(`patched from the hint: ${patched.replacements} replacement`);
  }

  const search = client.request("file.search", { pattern: "greet" });
  const cancel = { jsonrpc: "2.0", method: "$/cancelRequest", params: { id: search.id } };
  client.send(search.message, cancel); // one write: the cancel arrives before the search can run
  try {
    const found = await search.result;
    console.log(`search finished before the cancel: ${found.matches.length} matches`);
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    console.log(`search cancelled: ${err.code} ${err.data.error}`);
  }

  const final = await client.call("file.read", { path: "hello.py", raw: true });
  process.stdout.write("final hello.py:\n" + final.content);
  console.log(`server exited ${await client.close()}`);
}

const [workspace, ...command] = process.argv.slice(2);
if (!workspace) {
  console.error("usage: node examples/node_client.js WORKSPACE [SERVER COMMAND...]");
  process.exit(2);
}
main(workspace, command.length ? command : ["chorus-tools"]).catch((err) => {
  console.error(err);
  process.exit(1);
});
