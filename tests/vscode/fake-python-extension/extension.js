// Stands in for Microsoft's Python extension in rewardkit's end-to-end tests: the part of its
// environments API that @vscode/python-extension exposes and rewardkit uses. The interpreters
// to offer are listed in `.fake-python.json` ({"interpreters": [path, ...]}) in the workspace;
// the first is selected, and the command "Fake Python: Select Next Interpreter" moves on.
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

function activate(context) {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const listed = folder ? JSON.parse(fs.readFileSync(path.join(folder, ".fake-python.json"), "utf8")).interpreters : [];
  let selected = 0;
  const changed = new vscode.EventEmitter();
  const environment = (executable) => ({ id: executable, path: executable });

  context.subscriptions.push(
    changed,
    vscode.commands.registerCommand("fakePython.selectNext", () => {
      selected = (selected + 1) % listed.length;
      changed.fire({ ...environment(listed[selected]), resource: undefined });
    }),
  );

  return {
    environments: {
      getActiveEnvironmentPath: () => environment(listed[selected]),
      resolveEnvironment: async (env) => {
        const executable = typeof env === "string" ? env : env.path;
        return {
          ...environment(executable),
          executable: { uri: vscode.Uri.file(executable), bitness: "64-bit", sysPrefix: path.dirname(path.dirname(executable)) },
          version: { major: 3, minor: 11, micro: 0 },
        };
      },
      onDidChangeActiveEnvironmentPath: changed.event,
      known: [],
    },
  };
}

module.exports = { activate };
