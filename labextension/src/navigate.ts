/**
 * Open the file an edit touched and bring the touched place into view: for a notebook, the
 * first touched cell that still exists becomes the active cell, scrolled to the centre; for a
 * text file, the cursor goes to the first changed line.
 *
 * Invariants:
 * - A notebook open in the lab whose cell is not found yet and which has no unsaved changes is
 *   reverted from disk once (the edit landed on disk after it was opened); a notebook with
 *   unsaved changes is never reverted, so nobody loses typing.
 * - Failures are reported by rejecting with a message a person can act on.
 */

import type { IDocumentManager } from '@jupyterlab/docmanager';
import { NotebookPanel } from '@jupyterlab/notebook';
import type { Widget } from '@lumino/widgets';

import type { ActivityEdit, EditTarget } from './model';
import { editTarget } from './model';

/** The bits of a file editor's code editor this module uses (no codeeditor dependency). */
interface PositionableEditor {
  setCursorPosition(position: { line: number; column: number }): void;
  revealPosition(position: { line: number; column: number }): void;
  focus(): void;
}

function findCellIndex(
  panel: NotebookPanel,
  cellIds: readonly string[]
): number {
  const cells = panel.content.widgets;
  for (const id of cellIds) {
    const index = cells.findIndex(cell => cell.model.id === id);
    if (index >= 0) {
      return index;
    }
  }
  return -1;
}

async function revealCell(
  panel: NotebookPanel,
  cellIds: readonly string[]
): Promise<void> {
  await panel.context.ready;
  await panel.revealed;
  let index = findCellIndex(panel, cellIds);
  if (index < 0 && !panel.context.model.dirty) {
    await panel.context.revert();
    index = findCellIndex(panel, cellIds);
  }
  if (index < 0) {
    throw new Error(
      `cell ${cellIds.join(', ')} is no longer in ${panel.context.path} (deleted since the edit?)`
    );
  }
  const notebook = panel.content;
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  await notebook.scrollToItem(index, 'center');
}

function editorOf(widget: Widget): PositionableEditor | null {
  const content = (widget as { content?: { editor?: unknown } }).content;
  const editor = content?.editor as Partial<PositionableEditor> | undefined;
  return editor && typeof editor.setCursorPosition === 'function'
    ? (editor as PositionableEditor)
    : null;
}

async function revealLine(widget: Widget, line: number): Promise<void> {
  const ready = (widget as { context?: { ready?: Promise<void> } }).context
    ?.ready;
  await ready;
  const editor = editorOf(widget);
  if (editor) {
    const position = { line: Math.max(line - 1, 0), column: 0 };
    editor.setCursorPosition(position);
    editor.revealPosition(position);
    editor.focus();
  }
}

/** Open `edit.path` and reveal the cell (notebooks) or line (text files) the edit touched. */
export function openEdit(
  docManager: IDocumentManager,
  edit: ActivityEdit
): Promise<void> {
  return openTarget(docManager, editTarget(edit));
}

/** Open `target.path` and reveal its first cell that still exists, or its line. */
export async function openTarget(
  docManager: IDocumentManager,
  target: EditTarget
): Promise<void> {
  const widget = docManager.openOrReveal(target.path);
  if (!widget) {
    throw new Error(`JupyterLab has no viewer for ${target.path}`);
  }
  if (widget instanceof NotebookPanel && target.cellIds.length > 0) {
    await revealCell(widget, target.cellIds);
  } else if (target.line !== null) {
    await revealLine(widget, target.line);
  }
}
