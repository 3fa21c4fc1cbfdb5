/**
 * Entry point of the rewardkit extension: starts rewardkit's language server when a Python
 * file is open or a workspace pyproject.toml declares `[tool.rewardkit]`, and restarts it
 * when the interpreter or the settings change.
 */
import * as vscode from "vscode";

import { declaresRewardkit, isCheckedDocument } from "./common/activation";
import { changeNeedsRestart } from "./common/settings";
import { PythonExtensionInterpreter } from "./python";
import { ServerController } from "./server";

let controller: ServerController | undefined;

async function workspaceDeclaresRewardkit(): Promise<boolean> {
  const files = await vscode.workspace.findFiles("**/pyproject.toml", "**/{node_modules,.venv,.git}/**", 50);
  for (const file of files) {
    try {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
      if (declaresRewardkit(text)) {
        return true;
      }
    } catch {
      // An unreadable pyproject cannot declare anything.
    }
  }
  return false;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("rewardkit", { log: true });
  const python = new PythonExtensionInterpreter(log);
  const server = new ServerController(log, python);
  controller = server;
  context.subscriptions.push(log, python, { dispose: () => void server.dispose() });

  let started = false;
  const start = (reason: string): void => {
    started = true;
    void server.restart(reason);
  };

  context.subscriptions.push(
    vscode.commands.registerCommand("rewardkit.restart", () => start("rewardkit: Restart Server")),
    vscode.commands.registerCommand("rewardkit.showOutput", () => log.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (started && changeNeedsRestart((section) => event.affectsConfiguration(section))) {
        start("the rewardkit settings changed");
      }
    }),
    python.onDidChange(() => {
      if (started && vscode.workspace.getConfiguration("rewardkit", vscode.workspace.workspaceFolders?.[0]?.uri).get<string[]>("interpreter", []).length === 0) {
        start("the Python extension's interpreter changed");
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (started) {
        start("the workspace folders changed");
      }
    }),
  );

  const hasPythonDocument = vscode.workspace.textDocuments.some((doc) => isCheckedDocument(doc.languageId, doc.uri.scheme));
  if (hasPythonDocument || (await workspaceDeclaresRewardkit())) {
    start("activation");
    return;
  }
  // Activated by a pyproject.toml without [tool.rewardkit]: wait for a Python file.
  const waitForPython = vscode.workspace.onDidOpenTextDocument((doc) => {
    if (!started && isCheckedDocument(doc.languageId, doc.uri.scheme)) {
      waitForPython.dispose();
      start("a Python file was opened");
    }
  });
  context.subscriptions.push(waitForPython);
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
  controller = undefined;
}
