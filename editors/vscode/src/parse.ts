// Parsing what the server and the CLI send back. No vscode import, so node --test can load it.

/** DiscoveredKernel is one running kernel found by the server or `premortem kernels --json`. */
export interface DiscoveredKernel {
  connectionFile: string;
  name?: string;
  pid?: number;
  state?: string;
  notebook?: string;
  detail?: string;
}

/**
 * normalizeKernels accepts the server's and the CLI's kernel lists, whose field names may be
 * camelCase or snake_case, wrapped in {kernels: [...]} or not, and drops entries without a
 * connection file.
 */
export function normalizeKernels(raw: unknown): DiscoveredKernel[] {
  let list: unknown = raw;
  if (list && typeof list === 'object' && !Array.isArray(list) && Array.isArray((list as { kernels?: unknown }).kernels)) {
    list = (list as { kernels: unknown[] }).kernels;
  }
  if (!Array.isArray(list)) {
    return [];
  }
  const out: DiscoveredKernel[] = [];
  for (const e of list) {
    if (!e || typeof e !== 'object') {
      continue;
    }
    const o = e as Record<string, unknown>;
    const file = str(o.connectionFile) ?? str(o.connection_file) ?? str(o.path) ?? str(o.file);
    if (!file) {
      continue;
    }
    out.push({
      connectionFile: file,
      name: str(o.name) ?? str(o.kernel_name) ?? str(o.kernelName),
      pid: typeof o.pid === 'number' ? o.pid : undefined,
      state: str(o.state) ?? str(o.status) ?? str(o.execution_state),
      notebook: str(o.notebook) ?? str(o.vsc_ipynb_file) ?? str(o.notebookPath),
      detail: str(o.detail) ?? str(o.error) ?? str(o.skipped),
    });
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * markdownOf takes what premortem.server.explain returned: a Markdown string, a
 * MarkupContent-like {value} or {markdown}, or null when there is nothing to explain.
 */
export function markdownOf(result: unknown): string | undefined {
  if (typeof result === 'string') {
    return result.trim() ? result : undefined;
  }
  if (result && typeof result === 'object') {
    const o = result as Record<string, unknown>;
    for (const k of ['markdown', 'value', 'contents']) {
      if (typeof o[k] === 'string' && (o[k] as string).trim()) {
        return o[k] as string;
      }
    }
  }
  return undefined;
}

