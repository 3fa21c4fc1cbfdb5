/**
 * Which Python runs the language server: the `rewardkit.interpreter` setting, else the
 * interpreter selected in the Python extension, else `python3` on PATH.
 * Pure: the caller supplies what the editor and the file system say.
 */
import * as path from "node:path";

/** Where the interpreter came from, shown in the status bar tooltip and the output. */
export type InterpreterSource = "setting" | "python-extension" | "path";

export interface ResolvedInterpreter {
  /** The executable followed by its own arguments (from the setting); never empty. */
  command: string[];
  source: InterpreterSource;
}

export type InterpreterResolution =
  | { kind: "found"; interpreter: ResolvedInterpreter }
  | { kind: "not-found"; reason: string };

export interface InterpreterCandidates {
  /** `rewardkit.interpreter`, variables already expanded (empty: not set). */
  setting: readonly string[];
  /** Path of the Python extension's selected interpreter, when that extension is installed. */
  pythonExtension?: string;
  /** Looks `python3` (or `python` on Windows) up on PATH. */
  findOnPath: () => string | undefined;
}

/** Pick the interpreter in the documented order of precedence. */
export function resolveInterpreter(candidates: InterpreterCandidates): InterpreterResolution {
  if (candidates.setting.length > 0) {
    return { kind: "found", interpreter: { command: [...candidates.setting], source: "setting" } };
  }
  if (candidates.pythonExtension !== undefined && candidates.pythonExtension.trim() !== "") {
    return { kind: "found", interpreter: { command: [candidates.pythonExtension], source: "python-extension" } };
  }
  const onPath = candidates.findOnPath();
  if (onPath !== undefined) {
    return { kind: "found", interpreter: { command: [onPath], source: "path" } };
  }
  return {
    kind: "not-found",
    reason:
      "no Python interpreter found: set rewardkit.interpreter, select one in the Python extension, or put python3 on PATH",
  };
}

/** Names tried on PATH, in order, for the fallback interpreter. */
export function pathInterpreterNames(platform: NodeJS.Platform): string[] {
  return platform === "win32" ? ["python.exe", "python3.exe", "py.exe"] : ["python3"];
}

/**
 * The first `names` entry found executable in the directories of `pathValue`, like `which`.
 * `isExecutable` is injected so tests need no real files.
 */
export function findExecutableOnPath(
  names: readonly string[],
  pathValue: string | undefined,
  platform: NodeJS.Platform,
  isExecutable: (candidate: string) => boolean,
): string | undefined {
  if (!pathValue) {
    return undefined;
  }
  const separator = platform === "win32" ? ";" : ":";
  const flavour = platform === "win32" ? path.win32 : path.posix;
  const directories = pathValue.split(separator).filter((dir) => dir !== "");
  for (const name of names) {
    for (const dir of directories) {
      const candidate = flavour.join(dir, name);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** One line that says which interpreter and why, for the output and the status tooltip. */
export function describeInterpreter(interpreter: ResolvedInterpreter): string {
  const origin = {
    setting: "from the rewardkit.interpreter setting",
    "python-extension": "selected in the Python extension",
    path: "python3 found on PATH",
  }[interpreter.source];
  return `${interpreter.command.join(" ")} (${origin})`;
}
