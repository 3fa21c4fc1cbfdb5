/**
 * How the server is launched and why a launch fails: the command line of
 * `python -m rewardkit_lsp`, a quick probe of the interpreter before starting it, the
 * exact install command to offer, and the policy for a server that keeps crashing.
 * No `vscode` import: the unit tests run it against real interpreters under plain Node.
 */
import { execFile } from "node:child_process";

/** The module `python -m` runs. */
export const SERVER_MODULE = "rewardkit_lsp";

/** The pip requirement that provides the server. */
export const INSTALL_REQUIREMENT = "rewardkit[lsp]";

/** Oldest Python rewardkit supports (its `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** A process to spawn: executable and arguments, no shell. */
export interface CommandLine {
  command: string;
  args: string[];
}

/** `<interpreter...> -m rewardkit_lsp <extra args...>` */
export function serverCommandLine(interpreter: readonly string[], extraArgs: readonly string[]): CommandLine {
  if (interpreter.length === 0) {
    throw new Error("serverCommandLine: the interpreter command is empty");
  }
  return { command: interpreter[0], args: [...interpreter.slice(1), "-m", SERVER_MODULE, ...extraArgs] };
}

const PROBE_MARKER = "rewardkit-probe:";

/**
 * Python source run with `-c` before starting the server: reports the Python version and
 * whether the server's modules can be found, without importing them (fast, no side effects).
 * Written for any Python 3 so that an old interpreter gets a clear answer too.
 */
export const PROBE_SCRIPT = [
  "import importlib.util, json, sys",
  "def found(name):",
  "    try:",
  "        return importlib.util.find_spec(name) is not None",
  "    except Exception:",
  "        return False",
  `print(${JSON.stringify(PROBE_MARKER)} + json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable, "modules": {name: found(name) for name in ("rewardkit", "${SERVER_MODULE}", "pygls", "lsprotocol")}}))`,
].join("\n");

/** `<interpreter...> -c <probe>` */
export function probeCommandLine(interpreter: readonly string[]): CommandLine {
  return { command: interpreter[0], args: [...interpreter.slice(1), "-c", PROBE_SCRIPT] };
}

/** What the probe found out about an interpreter. */
export type ProbeResult =
  | { kind: "ready"; version: string; executable: string }
  | { kind: "interpreter-not-found"; detail: string }
  | { kind: "python-too-old"; version: string; executable: string }
  | { kind: "missing-modules"; modules: string[]; version: string; executable: string }
  | { kind: "probe-failed"; detail: string };

/** How the probe process ended. */
export interface ProcessOutcome {
  /** Exit code, or null when killed or never started. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be spawned (e.g. ENOENT). */
  spawnError?: { code?: string; message: string };
}

interface ProbeReport {
  version: number[];
  executable: string;
  modules: Record<string, boolean>;
}

function isProbeReport(value: unknown): value is ProbeReport {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const report = value as Record<string, unknown>;
  return (
    Array.isArray(report.version) &&
    report.version.every((part) => typeof part === "number") &&
    typeof report.executable === "string" &&
    typeof report.modules === "object" &&
    report.modules !== null
  );
}

/** Turn the probe's exit status and output into a verdict. */
export function parseProbeOutcome(outcome: ProcessOutcome): ProbeResult {
  if (outcome.spawnError) {
    const notFound = outcome.spawnError.code === "ENOENT" || outcome.spawnError.code === "EACCES";
    return notFound
      ? { kind: "interpreter-not-found", detail: outcome.spawnError.message }
      : { kind: "probe-failed", detail: outcome.spawnError.message };
  }
  const line = outcome.stdout.split(/\r?\n/).find((text) => text.startsWith(PROBE_MARKER));
  if (outcome.code !== 0 || line === undefined) {
    const detail = (outcome.stderr.trim() || outcome.stdout.trim() || "no output").split(/\r?\n/).slice(-5).join("\n");
    return { kind: "probe-failed", detail: `exit code ${String(outcome.code)}: ${detail}` };
  }
  let report: unknown;
  try {
    report = JSON.parse(line.slice(PROBE_MARKER.length));
  } catch {
    return { kind: "probe-failed", detail: `unreadable probe output: ${line}` };
  }
  if (!isProbeReport(report)) {
    return { kind: "probe-failed", detail: `unexpected probe output: ${line}` };
  }
  const version = report.version.join(".");
  const [major = 0, minor = 0] = report.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    return { kind: "python-too-old", version, executable: report.executable };
  }
  const missing = Object.entries(report.modules)
    .filter(([, present]) => !present)
    .map(([name]) => name);
  if (missing.length > 0) {
    return { kind: "missing-modules", modules: missing, version, executable: report.executable };
  }
  return { kind: "ready", version, executable: report.executable };
}

/** Run the probe with `interpreter` (a real process, killed after `timeoutMs`). */
export function probeInterpreter(
  interpreter: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProbeResult> {
  const { command, args } = probeCommandLine(interpreter);
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 20_000, windowsHide: true },
      (error, stdout, stderr) => {
        const errno = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
        const spawnFailed = errno !== null && typeof errno.code === "string";
        resolve(
          parseProbeOutcome({
            code: error === null ? 0 : typeof errno?.code === "number" ? errno.code : null,
            stdout: String(stdout),
            stderr: String(stderr) || (error !== null && !spawnFailed ? error.message : ""),
            spawnError: spawnFailed ? { code: errno.code as string, message: errno.message } : undefined,
          }),
        );
      },
    );
  });
}

const POSIX_SAFE = /^[A-Za-z0-9_\-./:=@%+,]+$/;

/** Quote one argument for the user's shell (POSIX sh, or PowerShell/cmd on Windows). */
export function quoteShellArgument(arg: string, platform: NodeJS.Platform): string {
  if (platform === "win32") {
    return /[\s"&|<>^()]/.test(arg) ? `"${arg.replace(/"/g, '""')}"` : arg;
  }
  return POSIX_SAFE.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

/** The exact command that installs the server for `interpreter`: `<python> -m pip install "rewardkit[lsp]"`. */
export function installCommand(interpreter: readonly string[], platform: NodeJS.Platform): string {
  const python = interpreter.map((part) => quoteShellArgument(part, platform)).join(" ");
  // Double quotes keep zsh from globbing the brackets and read the same in every shell.
  return `${python} -m pip install "${INSTALL_REQUIREMENT}"`;
}

/** What to tell the user about a failed launch, and whether installing rewardkit fixes it. */
export interface LaunchProblem {
  message: string;
  offerInstall: boolean;
}

/** The notification text for a probe that did not come back ready. */
export function describeProbeFailure(result: Exclude<ProbeResult, { kind: "ready" }>, interpreter: readonly string[]): LaunchProblem {
  const python = interpreter.join(" ");
  switch (result.kind) {
    case "interpreter-not-found":
      return {
        message: `rewardkit: the Python interpreter ${python} was not found (${result.detail}). Set rewardkit.interpreter or select an interpreter in the Python extension.`,
        offerInstall: false,
      };
    case "python-too-old":
      return {
        message: `rewardkit: ${result.executable} is Python ${result.version}; rewardkit needs Python ${MIN_PYTHON.join(".")} or newer. Select another interpreter.`,
        offerInstall: false,
      };
    case "missing-modules": {
      const what = result.modules.includes("rewardkit") ? "rewardkit is not installed" : `rewardkit's language server is not installed (missing: ${result.modules.join(", ")})`;
      return {
        message: `rewardkit: ${what} in ${result.executable} (Python ${result.version}). Install it with: ${installCommand(interpreter, process.platform)}`,
        offerInstall: true,
      };
    }
    case "probe-failed":
      return {
        message: `rewardkit: could not run ${python} (${result.detail}).`,
        offerInstall: false,
      };
  }
}

/** The notification text for a server that was found but failed to start or kept crashing. */
export function describeServerFailure(interpreter: readonly string[], detail: string): LaunchProblem {
  return {
    message: `rewardkit: the language server failed (${detail}). If rewardkit is missing or outdated in this environment, run: ${installCommand(interpreter, process.platform)}`,
    offerInstall: true,
  };
}

/**
 * Decides whether a server that exited should be restarted: yes, unless it crashed
 * `maxCrashes` times within `windowMs` (then it is broken, and the user is told).
 */
export class CrashPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly maxCrashes = 3,
    private readonly windowMs = 180_000,
  ) {}

  /** Record a crash at `now` (ms); return whether to restart the server. */
  shouldRestart(now: number): boolean {
    this.crashes = this.crashes.filter((time) => now - time < this.windowMs);
    this.crashes.push(now);
    return this.crashes.length < this.maxCrashes;
  }

  /** Forget past crashes (after a deliberate restart). */
  reset(): void {
    this.crashes = [];
  }
}
