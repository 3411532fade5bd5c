// Listing the kernels premortem can attach to and letting the user pick one.
import { execFile } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { DiscoveredKernel, normalizeKernels } from './parse';

/** kernelsFromCLI runs `premortem kernels --json` and parses its output. */
export function kernelsFromCLI(binary: string, timeoutMs = 10000): Promise<DiscoveredKernel[]> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['kernels', '--json'], { timeout: timeoutMs, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`premortem kernels --json: ${stderr.trim() || err.message}`));
        return;
      }
      try {
        resolve(normalizeKernels(JSON.parse(stdout)));
      } catch (e) {
        reject(new Error(`premortem kernels --json printed something that is not JSON: ${String(e)}`));
      }
    });
  });
}

/** What the user picked in the attach quick pick. */
export type AttachChoice =
  | { kind: 'kernel'; connectionFile: string }
  | { kind: 'jupyter' }
  | { kind: 'file' }
  | { kind: 'detach' };

interface Item extends vscode.QuickPickItem {
  choice: AttachChoice;
}

/**
 * pickKernel shows discovered kernels first, then the other ways to attach. listing is
 * awaited inside the quick pick so the picker opens at once with a busy indicator.
 */
export async function pickKernel(
  listing: Promise<DiscoveredKernel[]>,
  opts: { jupyter: boolean; attachedFile?: string; notebookPath?: string },
): Promise<AttachChoice | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = 'premortem: attach to a kernel';
  qp.placeholder = 'Pick the kernel whose variables premortem should check against';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  const extra: Item[] = [];
  if (opts.jupyter) {
    extra.push({
      label: '$(notebook-kernel-select) Use this notebook\'s kernel (ask the Jupyter extension)',
      choice: { kind: 'jupyter' },
    });
  }
  extra.push({ label: '$(file) Choose a connection file…', choice: { kind: 'file' } });
  if (opts.attachedFile) {
    extra.push({ label: '$(debug-disconnect) Detach (static checks only)', choice: { kind: 'detach' } });
  }
  qp.items = extra;
  qp.show();

  listing.then(
    (kernels) => {
      const items: Item[] = kernels.map((k) => {
        const bits = [k.name, k.pid !== undefined ? `pid ${k.pid}` : undefined, k.state].filter(Boolean);
        const mine = opts.notebookPath && k.notebook === opts.notebookPath;
        return {
          label: `${k.connectionFile === opts.attachedFile ? '$(check)' : '$(server-process)'} ${path.basename(k.connectionFile)}`,
          description: [mine ? 'this notebook' : k.notebook ? path.basename(k.notebook) : undefined, ...bits]
            .filter(Boolean)
            .join(' · '),
          detail: k.detail ?? k.connectionFile,
          choice: { kind: 'kernel', connectionFile: k.connectionFile },
        };
      });
      items.sort((a, b) => Number(b.description?.startsWith('this notebook')) - Number(a.description?.startsWith('this notebook')));
      const sep: Item = { label: '', kind: vscode.QuickPickItemKind.Separator, choice: { kind: 'file' } };
      qp.items = items.length ? [...items, sep, ...extra] : extra;
      if (!items.length) {
        qp.placeholder = 'No running kernels found; choose a connection file';
      }
      qp.busy = false;
    },
    (err: unknown) => {
      qp.placeholder = `Kernel discovery failed (${err instanceof Error ? err.message : String(err)}); choose a connection file`;
      qp.busy = false;
    },
  );

  return new Promise((resolve) => {
    let done = false;
    qp.onDidAccept(() => {
      done = true;
      resolve(qp.selectedItems[0]?.choice);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!done) {
        resolve(undefined);
      }
      qp.dispose();
    });
  });
}

/** pickConnectionFile opens a file dialog in Jupyter's runtime directory. */
export async function pickConnectionFile(): Promise<string | undefined> {
  const runtime =
    process.env.JUPYTER_RUNTIME_DIR ||
    path.join(process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share'), 'jupyter', 'runtime');
  const uris = await vscode.window.showOpenDialog({
    title: 'premortem: kernel connection file',
    defaultUri: vscode.Uri.file(runtime),
    canSelectMany: false,
    filters: { 'Kernel connection file': ['json'] },
    openLabel: 'Attach',
  });
  return uris?.[0]?.fsPath;
}
