// premortem for VS Code: a thin client that starts `premortem serve` and shows what it finds in
// notebook cells (diagnostics, hovers, quick fixes come straight from the server), plus
// commands to attach a kernel, re-check, shadow-run and explain, and a status bar item.
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import { resolveBinary, ResolvedBinary } from './binary';
import { createClient, executeServerCommand, UnsupportedCommandError } from './client';
import { showExplanation } from './explain';
import { jupyterInstalled, kernelFromJupyter } from './jupyter';
import { kernelsFromCLI, pickConnectionFile, pickKernel } from './kernels';
import { DiscoveredKernel, markdownOf, normalizeKernels } from './parse';
import { SECTION, serverPathSetting } from './settings';
import { KernelStatus, STATUS_NOTIFICATION, StatusBar } from './status';

/** OWN_COMMANDS are the commands this extension registers (see package.json). */
const OWN_COMMANDS = new Set([
  'premortem.attachKernel',
  'premortem.recheck',
  'premortem.shadowRun',
  'premortem.explain',
  'premortem.showLog',
  'premortem.restartServer',
]);

let client: LanguageClient | undefined;
let binary: ResolvedBinary | undefined;
let output: vscode.OutputChannel;
let status: StatusBar;
let extensionPath = '';
/** Notebooks whose kernel the Jupyter extension already told us (useJupyterExtension: always). */
const askedJupyter = new Set<string>();

/** activate starts the server and registers the commands. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  output = vscode.window.createOutputChannel('premortem');
  status = new StatusBar();
  context.subscriptions.push(output, status);

  const cmd = (id: string, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  cmd('premortem.attachKernel', attachKernel);
  cmd('premortem.recheck', recheck);
  cmd('premortem.shadowRun', shadowRun);
  cmd('premortem.explain', explain);
  cmd('premortem.showLog', () => output.show(true));
  cmd('premortem.restartServer', restart);

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SECTION}.server`)) {
        void restart();
      }
    }),
    vscode.workspace.onDidChangeNotebookDocument((e) => {
      if (e.cellChanges.some((c) => c.executionSummary?.executionOrder !== undefined)) {
        void maybeAskJupyter(e.notebook);
      }
    }),
  );
  await start();
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  status.starting();
  try {
    binary = resolveBinary(serverPathSetting(), extensionPath);
  } catch (e) {
    fail(e);
    return;
  }
  output.appendLine(`[premortem] starting ${binary.path} serve --stdio (binary from ${binary.source})`);
  const c = createClient(binary, output, OWN_COMMANDS);
  c.onNotification(STATUS_NOTIFICATION, (s: KernelStatus) => status.update(s));
  c.onDidChangeState((e) => {
    if (e.newState === State.Stopped && client === c) {
      status.failed('The premortem language server stopped.');
    }
  });
  client = c;
  try {
    await c.start();
  } catch (e) {
    fail(e);
    return;
  }
  status.ready();
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(2000);
    } catch (e) {
      output.appendLine(`[premortem] stopping the server: ${String(e)}`);
    }
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

function fail(e: unknown): void {
  const msg = e instanceof Error ? e.message : String(e);
  output.appendLine(`[premortem] ${msg}`);
  status.failed(msg);
  void vscode.window.showErrorMessage(`premortem: ${msg}`, 'Show Log').then((a) => {
    if (a) {
      output.show(true);
    }
  });
}

/** running returns the started client, or tells the user why there is none. */
function running(): LanguageClient | undefined {
  if (client && client.state === State.Running) {
    return client;
  }
  void vscode.window.showWarningMessage('premortem: the language server is not running.', 'Show Log', 'Restart').then((a) => {
    if (a === 'Show Log') {
      output.show(true);
    } else if (a === 'Restart') {
      void restart();
    }
  });
  return undefined;
}

async function serverCommand(name: string, args: unknown[]): Promise<unknown> {
  const c = running();
  if (!c) {
    return undefined;
  }
  try {
    return await executeServerCommand(c, name, args);
  } catch (e) {
    if (!(e instanceof UnsupportedCommandError)) {
      output.appendLine(`[premortem] ${name}: ${String(e)}`);
    }
    void vscode.window.showErrorMessage(`premortem ${name}: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

// --- attach -------------------------------------------------------------------------------

async function listKernels(): Promise<DiscoveredKernel[]> {
  const c = client;
  if (c && c.state === State.Running) {
    try {
      return normalizeKernels(await executeServerCommand(c, 'listKernels', []));
    } catch (e) {
      if (!(e instanceof UnsupportedCommandError)) {
        output.appendLine(`[premortem] listKernels: ${String(e)}`);
      }
    }
  }
  if (!binary) {
    throw new Error('no premortem binary');
  }
  return kernelsFromCLI(binary.path);
}

async function attachKernel(connectionFile?: unknown): Promise<void> {
  if (typeof connectionFile === 'string' && connectionFile) {
    await attachTo(connectionFile);
    return;
  }
  const nb = vscode.window.activeNotebookEditor?.notebook;
  const policy = vscode.workspace.getConfiguration(SECTION).get<string>('kernel.useJupyterExtension', 'ask');
  const choice = await pickKernel(listKernels(), {
    jupyter: jupyterInstalled() && policy !== 'never' && nb !== undefined,
    attachedFile: status.current.connectionFile,
    notebookPath: nb?.uri.scheme === 'file' ? nb.uri.fsPath : undefined,
  });
  switch (choice?.kind) {
    case undefined:
      return;
    case 'kernel':
      await attachTo(choice.connectionFile);
      return;
    case 'file': {
      const file = await pickConnectionFile();
      if (file) {
        await attachTo(file);
      }
      return;
    }
    case 'jupyter':
      if (nb) {
        await attachViaJupyter(nb, true);
      }
      return;
    case 'detach':
      await vscode.workspace.getConfiguration(SECTION).update('kernel.connectionFile', '', vscode.ConfigurationTarget.Workspace);
      await vscode.workspace.getConfiguration(SECTION).update('kernel.autoAttach', false, vscode.ConfigurationTarget.Workspace);
      return;
  }
}

/**
 * attachTo asks the server to attach now; when the server has no attach command it records
 * the file in the workspace's premortem.kernel.connectionFile, which the server follows.
 */
async function attachTo(connectionFile: string): Promise<void> {
  const c = running();
  if (!c) {
    return;
  }
  try {
    const result = await executeServerCommand(c, 'attachKernel', [connectionFile]);
    if (result && typeof result === 'object' && 'state' in result) {
      const nb = vscode.window.activeNotebookEditor?.notebook.uri.toString();
      status.update({ uri: nb, ...(result as KernelStatus) });
    }
  } catch (e) {
    if (!(e instanceof UnsupportedCommandError)) {
      void vscode.window.showErrorMessage(`premortem: could not attach to ${connectionFile}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    await vscode.workspace
      .getConfiguration(SECTION)
      .update('kernel.connectionFile', connectionFile, vscode.ConfigurationTarget.Workspace);
  }
}

async function attachViaJupyter(nb: vscode.NotebookDocument, interactive: boolean): Promise<void> {
  const tokenSource = new vscode.CancellationTokenSource();
  try {
    const { info, reason } = await kernelFromJupyter(nb, tokenSource.token);
    if (info) {
      output.appendLine(`[premortem] the Jupyter extension's kernel for ${nb.uri.fsPath}: ${info.connectionFile}`);
      await attachTo(info.connectionFile);
    } else if (interactive) {
      void vscode.window.showWarningMessage(`premortem: could not learn the notebook's kernel: ${reason}`);
    } else {
      output.appendLine(`[premortem] Jupyter extension: ${reason}`);
    }
  } catch (e) {
    output.appendLine(`[premortem] asking the Jupyter extension: ${String(e)}`);
    if (interactive) {
      void vscode.window.showWarningMessage(`premortem: the Jupyter extension did not answer: ${String(e)}`);
    }
  } finally {
    tokenSource.dispose();
  }
}

/**
 * maybeAskJupyter follows premortem.kernel.useJupyterExtension = "always": once per notebook,
 * after a cell has run (so a kernel exists), learn its kernel through the Jupyter extension.
 * An explicit connection file setting wins.
 */
async function maybeAskJupyter(nb: vscode.NotebookDocument): Promise<void> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  if (
    askedJupyter.has(nb.uri.toString()) ||
    cfg.get<string>('kernel.useJupyterExtension') !== 'always' ||
    cfg.get<string>('kernel.connectionFile') ||
    !jupyterInstalled()
  ) {
    return;
  }
  askedJupyter.add(nb.uri.toString());
  await attachViaJupyter(nb, false);
}

// --- per-cell commands ----------------------------------------------------------------------

/**
 * targetDocument is the cell (or percent-format file) a command acts on: the cell passed by a
 * cell-toolbar menu, else the focused cell editor, else the notebook's selected cell.
 */
function targetDocument(arg: unknown): vscode.TextDocument | undefined {
  const fromArg = arg as { document?: vscode.TextDocument } | undefined;
  if (fromArg?.document?.uri) {
    return fromArg.document;
  }
  const ed = vscode.window.activeTextEditor;
  if (ed && ed.document.languageId === 'python') {
    return ed.document;
  }
  const nb = vscode.window.activeNotebookEditor;
  if (nb && nb.selection && nb.selection.start < nb.notebook.cellCount) {
    return nb.notebook.cellAt(nb.selection.start).document;
  }
  return undefined;
}

async function recheck(arg?: unknown): Promise<void> {
  const doc = targetDocument(arg);
  const nb = vscode.window.activeNotebookEditor?.notebook;
  const uri = doc?.uri.toString() ?? nb?.uri.toString();
  await serverCommand('recheck', uri ? [uri] : []);
}

async function shadowRun(arg?: unknown): Promise<void> {
  const doc = targetDocument(arg);
  if (!doc) {
    void vscode.window.showInformationMessage('premortem: select a Python cell to shadow-run.');
    return;
  }
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'premortem: shadow run' },
    () => serverCommand('shadowRun', [doc.uri.toString()]),
  );
}

async function explain(arg?: unknown): Promise<void> {
  const doc = targetDocument(arg);
  if (!doc) {
    void vscode.window.showInformationMessage('premortem: select a Python cell to explain.');
    return;
  }
  const ours = vscode.languages
    .getDiagnostics(doc.uri)
    .filter((d) => typeof d.source === 'string' && d.source.startsWith('premortem'));
  const ed = vscode.window.activeTextEditor?.document === doc ? vscode.window.activeTextEditor : undefined;
  const cursor = ed?.selection.active;
  const diag = (cursor && ours.find((d) => d.range.contains(cursor))) ?? ours[0];
  const range = diag?.range ?? (cursor ? new vscode.Range(cursor, cursor) : new vscode.Range(0, 0, 0, 0));
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'premortem: explaining' },
    () =>
      serverCommand('explain', [
        doc.uri.toString(),
        { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } },
      ]),
  );
  const md = markdownOf(result);
  if (!md) {
    if (result !== undefined) {
      void vscode.window.showInformationMessage('premortem: nothing to explain here — no crash predicted at this spot.');
    }
    return;
  }
  await showExplanation(diag ? `premortem: ${diag.code ?? 'explain'}` : 'premortem: explain', md);
}
