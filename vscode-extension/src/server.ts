/**
 * Owns the language client: resolves the interpreter, probes it, starts
 * `python -m rewardkit_lsp`, restarts it on request, and reports its state to the status bar
 * and, when it cannot run, to the user with the fix.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";

import { describeInterpreter, findExecutableOnPath, pathInterpreterNames, resolveInterpreter, type ResolvedInterpreter } from "./common/interpreter";
import {
  CrashPolicy,
  describeProbeFailure,
  describeServerFailure,
  installCommand,
  probeInterpreter,
  serverCommandLine,
  type LaunchProblem,
} from "./common/launch";
import { LineBuffer } from "./common/output";
import { filterServerSection, readSettings, resolveVariables, serverSettings, type RewardkitSettings } from "./common/settings";
import { presentStatus, type ServerState } from "./common/status";
import { PythonExtensionInterpreter } from "./python";

export const CLIENT_ID = "rewardkit";
const CLIENT_NAME = "rewardkit";

const INSTALL_ACTION = "Install rewardkit[lsp]";
const COPY_ACTION = "Copy Command";
const OUTPUT_ACTION = "Show Output";

/**
 * The output channel handed to the language client: it writes the server's stderr, which
 * arrives in arbitrary chunks, to the log one whole line at a time and remembers the last lines.
 */
class ServerOutput implements vscode.OutputChannel {
  readonly lines = new LineBuffer();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  get name(): string {
    return this.log.name;
  }

  append(value: string): void {
    for (const line of this.lines.push(value)) {
      this.log.info(line);
    }
  }

  appendLine(value: string): void {
    this.append(value + "\n");
  }

  replace(value: string): void {
    this.log.replace(value);
  }

  clear(): void {
    this.log.clear();
  }

  show(columnOrPreserve?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserve === "boolean" || columnOrPreserve === undefined) {
      this.log.show(columnOrPreserve);
    } else {
      this.log.show(columnOrPreserve, preserveFocus);
    }
  }

  hide(): void {
    this.log.hide();
  }

  dispose(): void {
    for (const line of this.lines.flush()) {
      this.log.info(line);
    }
  }
}

function isExecutableFile(candidate: string): boolean {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}

/** The folder whose settings and interpreter the single server uses: the first workspace folder. */
function projectFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: ResolvedInterpreter | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly crashPolicy = new CrashPolicy();
  private readonly serverOutput: ServerOutput;
  private readonly statusItem: vscode.StatusBarItem;
  private disposed = false;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly python: PythonExtensionInterpreter,
  ) {
    this.serverOutput = new ServerOutput(log);
    this.statusItem = vscode.window.createStatusBarItem("rewardkit.status", vscode.StatusBarAlignment.Right, 100);
    this.statusItem.name = "rewardkit";
    this.statusItem.command = "rewardkit.showOutput";
    this.setState("inactive");
    this.statusItem.show();
  }

  /** Stop any running server and start a new one; calls are serialised. */
  restart(reason: string): Promise<void> {
    this.queue = this.queue.then(() => this.doRestart(reason)).catch((error: unknown) => {
      this.log.error(`Restart failed: ${String(error)}`);
      this.setState("error", String(error));
    });
    return this.queue;
  }

  private setState(state: ServerState, detail?: string): void {
    const presentation = presentStatus(state, detail ?? (this.interpreter ? `Interpreter: ${describeInterpreter(this.interpreter)}` : undefined));
    this.statusItem.text = presentation.text;
    this.statusItem.tooltip = presentation.tooltip;
    this.statusItem.backgroundColor = presentation.isError ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  private currentSettings(folder: vscode.WorkspaceFolder | undefined): RewardkitSettings {
    const config = vscode.workspace.getConfiguration("rewardkit", folder?.uri);
    const { settings, problems } = readSettings((key) => config.get(key));
    for (const problem of problems) {
      this.log.warn(problem.message);
    }
    const vars = { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir(), env: process.env };
    return { ...settings, interpreter: resolveVariables(settings.interpreter, vars), args: resolveVariables(settings.args, vars) };
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    try {
      if (client.state !== State.Stopped) {
        await client.stop(2000);
      }
    } catch (error) {
      this.log.warn(`Stopping the server: ${String(error)}`);
    }
    await client.dispose(2000).catch(() => undefined);
  }

  private async doRestart(reason: string): Promise<void> {
    if (this.disposed) {
      return;
    }
    this.log.info(`(Re)starting the language server: ${reason}`);
    await this.stopClient();
    this.crashPolicy.reset();

    const folder = projectFolder();
    const settings = this.currentSettings(folder);
    if (!settings.enable) {
      this.interpreter = undefined;
      this.log.info("rewardkit.enable is false: the server is not started.");
      this.setState("disabled");
      return;
    }
    this.setState("starting");

    const resolution = resolveInterpreter({
      setting: settings.interpreter,
      pythonExtension: settings.interpreter.length === 0 ? await this.python.selectedInterpreter(folder?.uri) : undefined,
      findOnPath: () => findExecutableOnPath(pathInterpreterNames(process.platform), process.env.PATH, process.platform, isExecutableFile),
    });
    if (resolution.kind === "not-found") {
      this.interpreter = undefined;
      this.log.error(resolution.reason);
      this.setState("error", resolution.reason);
      this.notify({ message: `rewardkit: ${resolution.reason}.`, offerInstall: false }, []);
      return;
    }
    const interpreter = resolution.interpreter;
    this.interpreter = interpreter;
    this.log.info(`Interpreter: ${describeInterpreter(interpreter)}`);

    const probe = await probeInterpreter(interpreter.command, { cwd: folder?.uri.fsPath, env: process.env });
    if (probe.kind !== "ready") {
      const problem = describeProbeFailure(probe, interpreter.command);
      this.log.error(problem.message);
      this.setState("error", problem.message);
      this.notify(problem, interpreter.command);
      return;
    }
    this.log.info(`Python ${probe.version} at ${probe.executable} has rewardkit's language server.`);
    await this.startClient(interpreter, settings, folder);
  }

  private async startClient(interpreter: ResolvedInterpreter, settings: RewardkitSettings, folder: vscode.WorkspaceFolder | undefined): Promise<void> {
    const line = serverCommandLine(interpreter.command, settings.args);
    this.log.info(`Server command: ${[line.command, ...line.args].join(" ")}`);
    const serverOptions: ServerOptions = {
      command: line.command,
      args: line.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
    };
    let reachedRunning = false;
    this.serverOutput.lines.clear();
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.serverOutput,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: serverSettings(settings),
      synchronize: {
        configurationSection: "rewardkit",
        fileEvents: vscode.workspace.createFileSystemWatcher("**/{pyproject.toml,*.jsonl,*.json}"),
      },
      middleware: {
        workspace: {
          // Answer workspace/configuration with only the keys the server knows.
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) {
              return result;
            }
            return result.map((section: unknown, index) => (params.items[index]?.section === "rewardkit" ? filterServerSection(section) : section));
          },
        },
      },
      // A server that cannot initialise is broken, not unlucky: report it once, from start().
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue }),
        closed: (): CloseHandlerResult => {
          if (!reachedRunning) {
            return { action: CloseAction.DoNotRestart, handled: true };
          }
          if (this.crashPolicy.shouldRestart(Date.now())) {
            this.log.warn("The language server exited; restarting it.");
            return { action: CloseAction.Restart, handled: true };
          }
          const lastError = this.serverOutput.lines.lastError();
          const problem = describeServerFailure(interpreter.command, `it exited 3 times in 3 minutes${lastError ? `; last error: ${lastError}` : ""}`);
          this.log.error(problem.message);
          this.setState("error", problem.message);
          this.notify(problem, interpreter.command);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        reachedRunning = true;
        this.setState("running");
      } else if (event.newState === State.Starting) {
        this.setState("starting");
      }
    });
    try {
      await client.start();
      this.setState("running");
      this.log.info("The language server is running.");
    } catch (error) {
      const detail = this.serverOutput.lines.lastError() ?? (error instanceof Error ? error.message : String(error));
      const problem = describeServerFailure(interpreter.command, detail);
      this.log.error(problem.message);
      this.setState("error", problem.message);
      this.notify(problem, interpreter.command);
      if (this.client === client) {
        this.client = undefined;
      }
      await client.dispose(2000).catch(() => undefined);
    }
  }

  /** Show `problem` with the actions that help: install (in a terminal), copy the command, output. */
  private notify(problem: LaunchProblem, interpreter: readonly string[]): void {
    const actions = problem.offerInstall ? [INSTALL_ACTION, COPY_ACTION, OUTPUT_ACTION] : [OUTPUT_ACTION];
    void vscode.window.showErrorMessage(problem.message, ...actions).then(async (choice) => {
      const command = installCommand(interpreter, process.platform);
      if (choice === INSTALL_ACTION) {
        this.runInstall(command);
      } else if (choice === COPY_ACTION) {
        await vscode.env.clipboard.writeText(command);
      } else if (choice === OUTPUT_ACTION) {
        this.log.show();
      }
    });
  }

  /** Run the install command in a terminal the user can watch; restart once it closes. */
  private runInstall(command: string): void {
    const terminal = vscode.window.createTerminal({ name: "rewardkit: install", cwd: projectFolder()?.uri });
    terminal.show();
    // On success the terminal closes itself and the server restarts; on failure it stays open.
    terminal.sendText(process.platform === "win32" ? command : `${command} && exit`);
    const listener = vscode.window.onDidCloseTerminal((closed) => {
      if (closed === terminal) {
        listener.dispose();
        void this.restart("rewardkit was installed");
      }
    });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.queue.catch(() => undefined);
    await this.stopClient();
    this.serverOutput.dispose();
    this.statusItem.dispose();
  }
}
