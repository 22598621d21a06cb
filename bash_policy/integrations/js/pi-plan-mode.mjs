// bash-policy plan mode for pi: a plan-mode extension whose bash gate is
// bash-policy instead of the plan-mode example's regex allowlist
// (isSafeCommand).  Use it instead of the example, not beside it: both
// register /plan and --plan.  Install the file that
// `bash-policy hook pi --print-config` prints (this source with the client
// inlined and absolute paths filled in): `pi -e bash-policy-plan.js`, or
// put it in ~/.pi/agent/extensions/ (or a trusted project's .pi/extensions/).
//
// /plan toggles plan mode, --plan starts in it.  While it is on, every tool
// call the model makes (codemode's nested calls included) goes through
// tool_call: bash is checked by one long-lived `bash-policy serve` in the
// session's directory, a denial is `{ block: true, reason }` and an allowed
// command is rewritten to run under `bash-policy run` (unless `confine` is
// false); write and edit reach only `*.md` files directly in the plans
// directory (`plansDir`, default .pi/plans).  Anything this extension cannot
// decide blocks: pi turns a thrown error into a blocked call as well.
//
// The user's own `!command` lines (user_bash) are not gated: plan mode keeps
// the model from changing things, and the user, who can leave plan mode with
// one keystroke anyway, decides for themselves.
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { BashPolicy, denialMessage } from "./serve-client.mjs"; // bash-policy: client

const SETTINGS = {}; // bash-policy: settings

const DEFAULTS = {
  command: ["bash-policy", "serve"],
  confine: true,
  timeoutMs: 10000,
  plansDir: ".pi/plans",
  wayOut: "To run it, leave plan mode with /plan (a `pi -p` run: run again without --plan).",
};

const NOTE = "bash-policy denied this in plan mode: a decision, not a failure; the same call is denied again.";
const FAILED = "bash-policy could not check this command, so it is blocked: a failure of the checker, "
  + "not a decision on the command.";

function present(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

// The real path `path` would have: symlinks resolved in the part that
// exists, null when that fails (a dangling link would be written through).
function realTarget(path) {
  let head = path;
  const tail = [];
  while (!present(head)) {
    const parent = dirname(head);
    if (parent === head) return null;
    tail.unshift(basename(head));
    head = parent;
  }
  try {
    return join(realpathSync(head), ...tail);
  } catch {
    return null;
  }
}

// A link on the way from the session's directory to a relative plans
// directory: a repository that ships `.pi/plans` as a link would point plan
// writes anywhere (red team RT-H: at the repository itself, or at
// ~/.pi/agent, whose AGENTS.md every later session reads).  An absolute
// plansDir is the user's own setting and is taken as it is.
function linkOnTheWay(cwd, plansDir) {
  if (isAbsolute(plansDir)) return null;
  let dir = realTarget(cwd);
  if (dir === null) return `${cwd} cannot be resolved`;
  for (const part of plansDir.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") return `${plansDir} leaves the session's directory`;
    dir = join(dir, part);
    let info;
    try {
      info = lstatSync(dir);
    } catch {
      return null; // not there yet: nothing below it is a link either
    }
    if (info.isSymbolicLink()) return `${dir} is a link, which the repository may have set`;
  }
  return null;
}

// Why a write to `path` is refused, or null when it is a plan file.  Paths
// that pi would read differently than node:path does (`@`, `~`, file: URLs,
// unusual spaces and other non-ASCII text) are refused rather than guessed.
function notAPlanFile(path, cwd, plansDir) {
  if (typeof path !== "string" || path === "") return "the call names no path";
  if (!/^[\x20-\x7e]+$/.test(path) || /^[@~]|^file:/.test(path)) return `${path} is not a plain path`;
  const link = linkOnTheWay(cwd, plansDir);
  if (link !== null) {
    return `${path}: the plans directory ${plansDir} is not plain (${link}); remove the link, `
      + "or set plansDir to a directory of your own by its absolute path";
  }
  const plans = realTarget(resolve(cwd, plansDir));
  const target = realTarget(resolve(cwd, path));
  if (plans === null || target === null) return `${path} cannot be resolved`;
  if (dirname(target) !== plans || !target.endsWith(".md")) {
    return `${path}: plan mode only writes the plan (*.md in ${plansDir})`;
  }
  return null;
}

export default function bashPolicyPlanMode(pi) {
  const settings = { ...DEFAULTS, ...SETTINGS };
  const policy = new BashPolicy({ command: settings.command, timeoutMs: settings.timeoutMs });
  let planning = false;

  pi.registerFlag("plan", { description: "Start in plan mode (bash-policy)", type: "boolean", default: false });
  pi.registerCommand("plan", {
    description: "Toggle plan mode: read-only bash (bash-policy), writes only to the plan",
    handler: async (_args, ctx) => {
      planning = !planning;
      if (planning) policy.warm();
      ctx.ui?.notify?.(planning ? "Plan mode on (bash-policy)." : "Plan mode off.");
    },
  });
  pi.on("session_start", async () => {
    if (pi.getFlag("plan") === true) planning = true;
    if (planning) policy.warm();
  });
  pi.on("session_shutdown", async () => policy.close());

  pi.on("before_agent_start", async (event) => {
    if (!planning || event?.messageType !== "user") return;
    return {
      message: {
        customType: "bash-policy-plan-mode",
        display: false,
        content: "Plan mode is on. Explore with read-only tools and read-only shell commands; "
          + `change no file but the plan, a *.md file in ${settings.plansDir}. `
          + "A command bash-policy blocks comes back with the reason and a read-only rewrite. "
          + "Finish with the numbered plan in your reply.",
      },
    };
  });

  pi.on("tool_call", async (event, ctx) => {
    if (!planning) return;
    const cwd = typeof ctx?.cwd === "string" ? ctx.cwd : process.cwd();
    if (event.toolName === "bash") {
      const verdict = await policy.check(event.input?.command, cwd, { text: true, run: settings.confine });
      if (!verdict.allowed) {
        const note = verdict.error === undefined ? NOTE : FAILED;
        return { block: true, reason: `${note}\n${denialMessage(verdict, settings.wayOut)}` };
      }
      if (settings.confine) {
        if (typeof verdict.run !== "string") {
          return { block: true, reason: "bash-policy sent no `bash-policy run` form of this allowed command" };
        }
        event.input.command = verdict.run;
      }
      return;
    }
    if (event.toolName === "write" || event.toolName === "edit") {
      const why = notAPlanFile(event.input?.path, cwd, settings.plansDir);
      if (why !== null) return { block: true, reason: `${NOTE}\n${event.toolName} ${why}\n${settings.wayOut}` };
    }
  });
}
