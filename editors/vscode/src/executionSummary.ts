// Forwarding the execution order of cells that ran before the notebook was opened.
import type * as vscode from 'vscode';
import type { NotebookDocumentMiddleware } from 'vscode-languageclient';

const ERROR_MIME = 'application/vnd.code.notebook.error';

/**
 * withSuccess returns the cell with executionSummary.success filled in when VS Code knows the
 * execution order but not the outcome, else the cell itself.
 *
 * Why: VS Code's ipynb deserializer gives a cell saved with "execution_count": 3 the summary
 * {executionOrder: 3} without success, and vscode-languageclient forwards executionSummary
 * only when success is a boolean. Without this, every cell loaded from disk looks as if it
 * never ran and the server flags names the kernel does have. A saved cell's outcome is in its
 * outputs: an error output means it failed.
 */
export function withSuccess(cell: vscode.NotebookCell): vscode.NotebookCell {
  const s = cell.executionSummary;
  if (!s || typeof s.executionOrder !== 'number' || typeof s.success === 'boolean') {
    return cell;
  }
  const failed = cell.outputs.some((o) => o.items.some((i) => i.mime === ERROR_MIME));
  const summary: vscode.NotebookCellExecutionSummary = { ...s, success: !failed };
  // Only the wire message sees this copy; the client's own sync state keeps the real cell.
  return {
    get index() {
      return cell.index;
    },
    notebook: cell.notebook,
    kind: cell.kind,
    document: cell.document,
    metadata: cell.metadata,
    outputs: cell.outputs,
    executionSummary: summary,
  };
}

/** executionSummaryMiddleware applies withSuccess to cells sent on open and on structure changes. */
export const executionSummaryMiddleware: NotebookDocumentMiddleware['notebooks'] = {
  didOpen: (notebook, cells, next) => next(notebook, cells.map(withSuccess)),
  didChange: (event, next) => {
    const array = event.cells?.structure?.array;
    if (!array?.cells) {
      return next(event);
    }
    return next({
      ...event,
      cells: {
        ...event.cells,
        structure: { ...event.cells!.structure!, array: { ...array, cells: array.cells.map(withSuccess) } },
      },
    });
  },
};
