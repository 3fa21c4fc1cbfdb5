/**
 * The extension's settings (`rewardkit.*`) as plain data: reading them with validation,
 * substituting `${workspaceFolder}`-style variables, and deciding what a change requires.
 * Pure: no `vscode` import, so the unit tests run under plain Node.
 */

/** Values of `rewardkit.trace.server`, as vscode-languageclient understands them. */
export type TraceLevel = "off" | "messages" | "verbose";

/** Every setting the extension reads, validated and with defaults applied. */
export interface RewardkitSettings {
  enable: boolean;
  /** Interpreter command: the executable and any arguments for it (empty: look it up). */
  interpreter: string[];
  /** Extra arguments for `python -m rewardkit_lsp`. */
  args: string[];
  taskFields: string[];
  debounceMs: number;
  traceServer: TraceLevel;
}

/** The settings the language server itself understands (its `rewardkit` section). */
export interface ServerSettings {
  enable: boolean;
  taskFields: string[];
  debounceMs: number;
}

/** A setting whose value had the wrong type: its key, what was expected, what was found. */
export interface SettingProblem {
  key: string;
  message: string;
}

/** Reads one key of the `rewardkit` section (`"interpreter"`, `"trace.server"`, ...). */
export type SettingLookup = (key: string) => unknown;

export const DEFAULT_SETTINGS: Readonly<RewardkitSettings> = Object.freeze({
  enable: true,
  interpreter: [],
  args: [],
  taskFields: [],
  debounceMs: 200,
  traceServer: "off",
});

/** Keys of the section that the server receives (initializationOptions, workspace/configuration). */
export const SERVER_SETTING_KEYS: readonly (keyof ServerSettings)[] = ["enable", "taskFields", "debounceMs"];

const TRACE_LEVELS: readonly TraceLevel[] = ["off", "messages", "verbose"];

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function stringList(key: string, value: unknown, problems: SettingProblem[]): string[] | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  // A single string is accepted too: `"rewardkit.interpreter": "/usr/bin/python3"` is what people write.
  if (typeof value === "string") {
    return value.trim() === "" ? [] : [value];
  }
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
    return value.filter((item) => item.trim() !== "");
  }
  problems.push({ key, message: `setting rewardkit.${key}: expected a list of strings, got ${describe(value)}` });
  return undefined;
}

/**
 * Read and validate the settings through `lookup`; a bad value is reported in `problems`
 * and replaced by its default, so one typo never stops the server.
 */
export function readSettings(lookup: SettingLookup): { settings: RewardkitSettings; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const settings: RewardkitSettings = { ...DEFAULT_SETTINGS, interpreter: [], args: [], taskFields: [] };

  const enable = lookup("enable");
  if (typeof enable === "boolean") {
    settings.enable = enable;
  } else if (enable !== undefined && enable !== null) {
    problems.push({ key: "enable", message: `setting rewardkit.enable: expected true or false, got ${describe(enable)}` });
  }

  settings.interpreter = stringList("interpreter", lookup("interpreter"), problems) ?? [];
  settings.args = stringList("args", lookup("args"), problems) ?? [];
  settings.taskFields = stringList("taskFields", lookup("taskFields"), problems) ?? [];

  const debounce = lookup("debounceMs");
  if (typeof debounce === "number" && Number.isFinite(debounce) && debounce >= 0) {
    settings.debounceMs = Math.round(debounce);
  } else if (debounce !== undefined && debounce !== null) {
    problems.push({
      key: "debounceMs",
      message: `setting rewardkit.debounceMs: expected a number >= 0, got ${describe(debounce)}`,
    });
  }

  const trace = lookup("trace.server");
  if (typeof trace === "string" && (TRACE_LEVELS as readonly string[]).includes(trace)) {
    settings.traceServer = trace as TraceLevel;
  } else if (trace !== undefined && trace !== null) {
    problems.push({
      key: "trace.server",
      message: `setting rewardkit.trace.server: expected one of ${TRACE_LEVELS.join(", ")}, got ${describe(trace)}`,
    });
  }
  return { settings, problems };
}

/** The part of the settings the server understands: sent as initializationOptions. */
export function serverSettings(settings: RewardkitSettings): ServerSettings {
  return { enable: settings.enable, taskFields: [...settings.taskFields], debounceMs: settings.debounceMs };
}

/**
 * Keep only the keys the server understands from a `rewardkit` section the editor returned
 * for `workspace/configuration`; the server reports unknown keys as mistakes.
 */
export function filterServerSection(section: unknown): Record<string, unknown> | null {
  if (typeof section !== "object" || section === null || Array.isArray(section)) {
    return null;
  }
  const source = section as Record<string, unknown>;
  const filtered: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    if (source[key] !== undefined) {
      filtered[key] = source[key];
    }
  }
  return filtered;
}

/** Values that `${...}` variables in `interpreter` and `args` expand to. */
export interface VariableValues {
  workspaceFolder?: string;
  userHome: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Expand `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~` in each value,
 * as VS Code's own settings do; unknown variables are left as written.
 */
export function resolveVariables(values: readonly string[], vars: VariableValues): string[] {
  return values.map((value) => {
    let result = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (match, name: string, envName?: string) => {
      if (envName !== undefined) {
        return vars.env[envName] ?? "";
      }
      if (name === "workspaceFolder") {
        return vars.workspaceFolder ?? match;
      }
      return vars.userHome;
    });
    if (result === "~" || result.startsWith("~/") || result.startsWith("~\\")) {
      result = vars.userHome + result.slice(1);
    }
    return result;
  });
}

/** Settings whose change needs a new server process (the interpreter, its arguments, on/off). */
const RESTART_KEYS: readonly string[] = ["rewardkit.enable", "rewardkit.interpreter", "rewardkit.args", "rewardkit.taskFields", "rewardkit.debounceMs"];

/**
 * Whether a configuration change needs the server restarted: any `rewardkit` setting except
 * `trace.server`, which vscode-languageclient applies to the running client by itself.
 */
export function changeNeedsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(key));
}
