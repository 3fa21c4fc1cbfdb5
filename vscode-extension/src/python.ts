/**
 * The interpreter selected in Microsoft's Python extension, looked up at run time.
 * The extension is optional (no `extensionDependencies`, which would block activation
 * where it cannot be installed): when it is absent this answers `undefined`.
 */
import * as vscode from "vscode";
import { PythonExtension } from "@vscode/python-extension";

export const PYTHON_EXTENSION_ID = "ms-python.python";

/** Reads the Python extension's selected interpreter and reports when it changes. */
export class PythonExtensionInterpreter implements vscode.Disposable {
  private api: PythonExtension | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [this.changed];

  /** Fires when the selected interpreter changes or the Python extension appears. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: vscode.LogOutputChannel) {
    // The Python extension may be installed or enabled while we run.
    this.disposables.push(
      vscode.extensions.onDidChange(() => {
        if (this.api === undefined && vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined) {
          this.changed.fire();
        }
      }),
    );
  }

  private async loadApi(): Promise<PythonExtension | undefined> {
    if (this.api !== undefined) {
      return this.api;
    }
    if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID) === undefined) {
      return undefined;
    }
    try {
      const api = await PythonExtension.api();
      this.api = api;
      this.disposables.push(api.environments.onDidChangeActiveEnvironmentPath(() => this.changed.fire()));
      return api;
    } catch (error) {
      this.log.warn(`Could not use the Python extension's API: ${String(error)}`);
      return undefined;
    }
  }

  /** Path of the interpreter selected for `resource`, or undefined (no extension, none selected). */
  async selectedInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
    const api = await this.loadApi();
    if (api === undefined) {
      return undefined;
    }
    try {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const environment = await api.environments.resolveEnvironment(active);
      return environment?.executable.uri?.fsPath ?? (active.path || undefined);
    } catch (error) {
      this.log.warn(`The Python extension could not resolve its selected interpreter: ${String(error)}`);
      return undefined;
    }
  }

  dispose(): void {
    this.disposables.forEach((disposable) => {
      disposable.dispose();
    });
  }
}
