// bash-policy for OpenCode (and Kilo Code's CLI): the plan agent's bash
// calls checked by one long-lived `bash-policy serve`.  Install the file that
// `bash-policy hook opencode --print-config` prints (this source with the
// client inlined and absolute paths filled in) as .opencode/plugins/bash-policy.js
// or ~/.config/opencode/plugins/bash-policy.js.
//
// OpenCode's tool.execute.before hook does not say which agent runs the
// session, so the plugin learns it from each chat.message (the resolved
// agent of every prompt) and links child sessions (subagents) to their
// parent from session.created events.  A session is gated when its agent is
// one of `agents` (default: plan), when it descends from a gated session, or
// when its agent is unknown.  A gated bash call is checked in its workdir;
// a denial throws, which OpenCode hands the model as the tool's error, and an
// allowed command is rewritten to run under `bash-policy run` unless
// `confine` is false.  Any failure throws too: the module exports nothing
// but the plugin function, whose setup cannot throw (a plugin that fails to
// load is skipped by OpenCode, which would leave bash ungated).
import { isAbsolute, resolve } from "node:path";
import { BashPolicy, denialMessage } from "./serve-client.mjs"; // bash-policy: client

const SETTINGS = {}; // bash-policy: settings

const DEFAULTS = {
  command: ["bash-policy", "serve"],
  agents: ["plan"],
  confine: true,
  timeoutMs: 10000,
  wayOut: "To run it, switch to the build agent (Tab in the TUI; `opencode run --agent build`).",
};

const NOTE = "bash-policy denied this command in plan mode: a decision, not a failure; "
  + "the same command is denied again.";
const FAILED = "bash-policy could not check this command, so it is blocked: a failure of the checker, "
  + "not a decision on the command.";

function settingsFrom(options) {
  const given = options !== null && typeof options === "object" ? options : {};
  const settings = { ...DEFAULTS, ...SETTINGS, ...given };
  const strings = (value) => Array.isArray(value) && value.every((item) => typeof item === "string");
  if (!strings(settings.agents)) throw new Error("the `agents` option must be a list of agent names");
  if (!strings(settings.command) || settings.command.length === 0) {
    throw new Error("the `command` option must be the argv of `bash-policy serve`");
  }
  if (typeof settings.confine !== "boolean") throw new Error("the `confine` option must be true or false");
  if (!Number.isFinite(settings.timeoutMs) || settings.timeoutMs <= 0) {
    throw new Error("the `timeoutMs` option must be a positive number");
  }
  if (typeof settings.wayOut !== "string") throw new Error("the `wayOut` option must be text");
  return settings;
}

export const BashPolicyPlanMode = async (context, options) => {
  let settings;
  try {
    settings = settingsFrom(options);
  } catch (error) {
    const why = `the bash-policy plugin is misconfigured (${error.message}), so no bash command runs`;
    return {
      "tool.execute.before": async (input) => {
        if (input?.tool === "bash") throw new Error(why);
      },
    };
  }
  const agents = new Set(settings.agents);
  const agentOf = new Map(); // sessionID -> the agent of its latest prompt
  const parentOf = new Map(); // sessionID -> parent sessionID
  const policy = new BashPolicy({ command: settings.command, timeoutMs: settings.timeoutMs });
  const directory = typeof context?.directory === "string" ? context.directory : process.cwd();

  // Why the session's bash calls are gated, or null when they are not.
  function gatedBecause(sessionID) {
    const seen = new Set();
    for (let id = sessionID; id !== undefined && !seen.has(id); id = parentOf.get(id)) {
      seen.add(id);
      const agent = agentOf.get(id);
      if (agent === undefined) return "an agent bash-policy has not seen";
      if (agents.has(agent)) return id === sessionID ? `the ${agent} agent` : `a subagent of the ${agent} agent`;
    }
    return null;
  }

  return {
    "chat.message": async (input, output) => {
      try {
        const agent = output?.message?.agent ?? input?.agent;
        if (typeof input?.sessionID === "string" && typeof agent === "string") agentOf.set(input.sessionID, agent);
        if (gatedBecause(input?.sessionID) !== null) policy.warm();
      } catch {
        // never fail a prompt; an unknown agent is gated anyway
      }
    },
    event: async ({ event }) => {
      try {
        const info = event?.properties?.info;
        if (event?.type === "session.created" && typeof info?.id === "string" && typeof info.parentID === "string") {
          parentOf.set(info.id, info.parentID);
        }
      } catch {
        // as above
      }
    },
    "tool.execute.before": async (input, output) => {
      if (input?.tool !== "bash") return;
      const why = gatedBecause(input.sessionID);
      if (why === null) return;
      const args = output?.args;
      const command = args?.command;
      const workdir = typeof args?.workdir === "string" && args.workdir !== "" ? args.workdir : directory;
      const cwd = isAbsolute(workdir) ? workdir : resolve(directory, workdir);
      // The session's directory picks the config: not one a repository cloned below it ships.
      const verdict = await policy.check(command, cwd, { text: true, run: settings.confine, config_from: directory });
      if (!verdict.allowed) {
        const note = verdict.error === undefined ? NOTE : FAILED;
        throw new Error(`${note} (Checked because this session runs ${why}.)\n${denialMessage(verdict, settings.wayOut)}`);
      }
      if (settings.confine) {
        if (typeof verdict.run !== "string") {
          throw new Error("bash-policy sent no `bash-policy run` form of this allowed command, so it is blocked");
        }
        args.command = verdict.run;
      }
    },
    dispose: async () => policy.close(),
  };
};
