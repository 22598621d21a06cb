// A client for `bash-policy serve` (docs/integrations.md): one long-lived
// server, many checks over its JSON-lines pipe, and every failure a denial.
// Plain ES module JavaScript, so that Node, Bun (OpenCode) and jiti (pi) all
// load it as it is; serve-client.d.ts gives its types.
//
// check() never rejects and never hangs: a server that cannot start, dies,
// closes its pipe, sends something that is not an answer, or does not answer
// within `timeoutMs` turns every open check into a denial (code BP107), and
// the next check starts a new server.  The server answers in order, so the
// oldest open check owns the next answer, even one whose id is null.
import { spawn } from "node:child_process";

const MAX_LINE = 64 * 1024 * 1024; // an answer longer than this is not one

export class BashPolicy {
  constructor(options = {}) {
    this.argv = options.command ?? ["bash-policy", "serve"];
    this.timeoutMs = options.timeoutMs ?? 10000;
    this.server = null;
    this.nextId = 1;
  }

  check(command, cwd, extra = {}) {
    return new Promise((resolve) => {
      const open = { command, resolve, id: 0, timer: null };
      let line;
      try {
        if (typeof command !== "string") throw new Error("the command is not a string");
        if (this.server === null || this.server.failure !== null) this.server = this.start();
        open.id = this.nextId++;
        line = JSON.stringify({ ...extra, id: open.id, command, cwd }) + "\n";
      } catch (error) {
        resolve(failure(command, String(error?.message ?? error)));
        return;
      }
      const server = this.server;
      if (server.failure !== null) {
        resolve(failure(command, server.failure));
        return;
      }
      server.open.push(open);
      open.timer = setTimeout(
        () => this.fail(server, `bash-policy serve did not answer within ${this.timeoutMs} ms`),
        this.timeoutMs,
      );
      try {
        server.proc.stdin.write(line);
      } catch (error) {
        this.fail(server, `cannot write to bash-policy serve: ${error?.message ?? error}`);
      }
    });
  }

  // Start the server ahead of the first check (its start-up then overlaps
  // the model's turn); a failure shows at the next check.
  warm() {
    if (this.server === null || this.server.failure !== null) this.server = this.start();
  }

  close() {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    try {
      server.proc?.stdin?.end();
    } catch {
      // already gone
    }
    this.fail(server, "the bash-policy client was closed", false);
  }

  start() {
    const server = { proc: null, open: [], buffer: "", stderr: "", failure: null };
    const [program, ...args] = this.argv;
    try {
      server.proc = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      server.failure = `cannot start ${program}: ${error?.message ?? error}`;
      return server;
    }
    const proc = server.proc;
    proc.on("error", (error) => this.fail(server, `cannot run ${program}: ${error?.message ?? error}`));
    proc.stdin.on("error", (error) =>
      this.fail(server, `lost the pipe to bash-policy serve (${error?.code ?? error?.message ?? error})`));
    proc.stdout.on("error", (error) => this.fail(server, `cannot read bash-policy serve: ${error?.message}`));
    proc.stderr.on("error", () => {});
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => this.read(server, chunk));
    proc.stderr.on("data", (chunk) => {
      server.stderr = (server.stderr + chunk).slice(-2000);
    });
    const exited = (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      this.fail(server, `bash-policy serve ${how}`);
    };
    proc.on("close", exited);
    // 'close' waits for the pipes; a child that leaves them open must not stall a check.
    proc.on("exit", (code, signal) => setTimeout(() => exited(code, signal), 200).unref?.());
    // Idle, the server must not keep the harness alive; an open check's timer does.
    for (const handle of [proc, proc.stdin, proc.stdout, proc.stderr]) handle?.unref?.();
    return server;
  }

  read(server, chunk) {
    if (server.failure !== null) return;
    server.buffer += chunk;
    let newline;
    while ((newline = server.buffer.indexOf("\n")) >= 0) {
      const line = server.buffer.slice(0, newline);
      server.buffer = server.buffer.slice(newline + 1);
      if (line.trim() !== "") this.answer(server, line);
      if (server.failure !== null) return;
    }
    if (server.buffer.length > MAX_LINE) this.fail(server, "bash-policy serve sent an endless line");
  }

  answer(server, line) {
    let reply;
    try {
      reply = JSON.parse(line);
    } catch {
      this.fail(server, `bash-policy serve sent a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    const open = server.open.shift();
    if (open === undefined || reply === null || typeof reply !== "object" || Array.isArray(reply)) {
      if (open !== undefined) server.open.unshift(open);
      this.fail(server, `bash-policy serve sent an answer nobody asked for: ${line.slice(0, 200)}`);
      return;
    }
    clearTimeout(open.timer);
    if (reply.id !== open.id && reply.id !== null) {
      open.resolve(failure(open.command, `bash-policy serve answered request ${reply.id} for ${open.id}`));
      this.fail(server, "bash-policy serve answered out of order");
      return;
    }
    const verdict = reply.verdict;
    if (reply.error !== undefined || verdict === null || typeof verdict !== "object") {
      open.resolve(failure(open.command, `bash-policy serve: ${reply.error ?? "no verdict"}`));
      return;
    }
    const result = { ...verdict, allowed: verdict.allowed === true };
    if (typeof reply.text === "string") result.text = reply.text;
    if (result.allowed && typeof reply.run === "string") result.run = reply.run;
    open.resolve(result);
  }

  fail(server, why, withStderr = true) {
    if (server.failure !== null) return;
    const said = withStderr ? server.stderr.trim().split("\n").slice(-5).join("\n") : "";
    server.failure = said ? `${why}; it said: ${said}` : why;
    if (this.server === server) this.server = null;
    for (const open of server.open.splice(0)) {
      clearTimeout(open.timer);
      open.resolve(failure(open.command, server.failure));
    }
    try {
      if (server.proc !== null && server.proc.exitCode === null && server.proc.signalCode === null) {
        server.proc.kill("SIGKILL");
      }
    } catch {
      // already gone
    }
  }
}

// The denial for a command the server could not judge, shaped like a verdict.
export function failure(command, why) {
  const text = typeof command === "string" ? command : String(command);
  const message = `bash-policy could not check this command (${why}), so it is blocked`;
  const hint = "make `bash-policy serve` run again (the reason is above); until then no command runs";
  return {
    command: text,
    allowed: false,
    error: why,
    denials: [{
      code: "BP107",
      name: "internal-error",
      message,
      hint,
      span: [0, text.length],
      text,
      segment: 0,
      effect: null,
    }],
    segments: [],
    notes: [],
    text: `denied (1 problem)\n  BP107 internal-error: ${message}\n    fix: ${hint}`,
  };
}

// A denied verdict as one message for the model: what was blocked, why, how
// to rewrite it (the verdict's `text`, asked with { text: true }), then how
// to leave plan mode.
export function denialMessage(verdict, wayOut) {
  const body = typeof verdict.text === "string" && verdict.text !== ""
    ? verdict.text
    : (verdict.denials ?? []).map((d) => `  ${d.code} \`${d.text}\`: ${d.message}\n    fix: ${d.hint}`).join("\n");
  return `bash-policy ${body}\n${wayOut}`;
}
