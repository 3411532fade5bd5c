// Asking the Jupyter extension which kernel runs a notebook, through its public API.
import * as fs from 'fs';
import * as vscode from 'vscode';
import type { Jupyter, Kernel } from '@vscode/jupyter-extension';

/** JUPYTER_EXTENSION_ID is the Jupyter extension's id. */
export const JUPYTER_EXTENSION_ID = 'ms-toolsai.jupyter';

/** JupyterKernelInfo is what the notebook's kernel says about itself. */
export interface JupyterKernelInfo {
  connectionFile: string;
  pid?: number;
}

/**
 * WHOAMI prints the kernel's connection file and pid as one JSON line. It is a single
 * expression so it binds no name in the user's namespace; ipykernel.connect is already
 * imported in every ipykernel, so it loads nothing new.
 */
const WHOAMI =
  "print(__import__('json').dumps({'connectionFile': __import__('ipykernel.connect', fromlist=['get_connection_file']).get_connection_file(), 'pid': __import__('os').getpid()}))";

/** jupyterInstalled reports whether the Jupyter extension is present. */
export function jupyterInstalled(): boolean {
  return vscode.extensions.getExtension(JUPYTER_EXTENSION_ID) !== undefined;
}

/**
 * kernelFromJupyter asks the Jupyter extension for the kernel of the notebook and then asks
 * that kernel for its connection file. The Jupyter extension shows its own consent prompt the
 * first time an extension uses its kernels API; callers ask before calling this too
 * (premortem.kernel.useJupyterExtension). Returns undefined, with a reason, when the notebook
 * has no running kernel or the kernel is not a local ipykernel.
 */
export async function kernelFromJupyter(
  notebook: vscode.NotebookDocument,
  token: vscode.CancellationToken,
): Promise<{ info?: JupyterKernelInfo; reason?: string }> {
  const ext = vscode.extensions.getExtension<Jupyter>(JUPYTER_EXTENSION_ID);
  if (!ext) {
    return { reason: 'the Jupyter extension is not installed' };
  }
  const api = ext.isActive ? ext.exports : await ext.activate();
  if (!api?.kernels) {
    return { reason: 'this version of the Jupyter extension has no kernels API' };
  }
  const kernel: Kernel | undefined = await api.kernels.getKernel(notebook.uri);
  if (!kernel) {
    return { reason: 'the notebook has no running kernel yet (run a cell first), or access was declined' };
  }
  if (kernel.language !== 'python') {
    return { reason: `the notebook's kernel runs ${kernel.language}, not Python` };
  }
  if (kernel.status === 'busy') {
    // premortem never sends anything to a busy kernel.
    return { reason: 'the kernel is busy; try again when the cell finishes' };
  }
  let text = '';
  const decoder = new TextDecoder();
  for await (const out of kernel.executeCode(WHOAMI, token)) {
    for (const item of out.items) {
      if (item.mime === 'application/vnd.code.notebook.stdout' || item.mime === 'text/plain') {
        text += decoder.decode(item.data);
      }
    }
  }
  const line = text.trim().split('\n').pop() ?? '';
  let info: JupyterKernelInfo;
  try {
    info = JSON.parse(line) as JupyterKernelInfo;
  } catch {
    return { reason: `the kernel did not report a connection file (is it an ipykernel?): ${line.slice(0, 200)}` };
  }
  if (!info.connectionFile || !fs.existsSync(info.connectionFile)) {
    return { reason: `the kernel's connection file ${info.connectionFile || '(none)'} is not on this machine (remote kernel?)` };
  }
  return { info };
}
