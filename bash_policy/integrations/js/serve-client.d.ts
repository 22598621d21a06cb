// Types of serve-client.mjs, the bash-policy serve client (docs/integrations.md).

export type Denial = {
  code: string; name: string; message: string; hint: string;
  span: [number, number]; text: string; segment: number; effect: string | null;
};

export type Verdict = {
  command: string;
  allowed: boolean;
  denials: Denial[];
  segments: unknown[];
  notes: string[];
  /** The verdict as `bash-policy check` prints it (asked with `{ text: true }`, and on every failure). */
  text?: string;
  /** For an allowed command asked with `{ run: true }`: the shell text that runs it under `bash-policy run`. */
  run?: string;
  /** Why the server gave no verdict; the command is then denied with code BP107. */
  error?: string;
};

export type Options = {
  /** The argv that starts the server; default ["bash-policy", "serve"]. Name it absolutely. */
  command?: string[];
  /** How long one check may take before the server is taken for hung; default 10000. */
  timeoutMs?: number;
};

export declare class BashPolicy {
  constructor(options?: Options);
  /** Never rejects: any failure resolves to a denial. `extra`: request fields such as { text: true, run: true }. */
  check(command: string, cwd?: string, extra?: Record<string, unknown>): Promise<Verdict>;
  /** Start the server now, ahead of the first check. */
  warm(): void;
  close(): void;
}

export declare function failure(command: string, why: string): Verdict;
export declare function denialMessage(verdict: Verdict, wayOut: string): string;
