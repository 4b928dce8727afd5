/**
 * A proposed cell's diff as CodeMirror's unified merge view: the proposed source, with the
 * lines it removes shown inline (red) above the lines it adds (green), highlighted in the
 * language of the cell's own editor with JupyterLab's highlight style. A cell to insert or to
 * delete has one side only: its source, all green or all red (a merge against nothing would
 * show an empty line replaced).
 *
 * `@codemirror/state`, `view` and `language` and `@jupyterlab/codemirror` are JupyterLab's own
 * shared copies (the builder shares them as singletons), so the view is themed like the lab's
 * editors; only `@codemirror/merge` is bundled. This module is loaded lazily.
 *
 * Invariants:
 * - The view is read-only and has no merge controls of its own: a person decides through the
 *   Accept / Reject buttons, which ask the server (the only place a proposal is applied).
 * - Every view built here is destroyed by `releaseMergeViews` when its box leaves the page.
 * - Both sides are shown as the cell's editor shows a source: a final newline is not a line.
 * - A cell editor whose language is still loading lends it when it has loaded: the view asks
 *   again a bounded number of times (`LANGUAGE_TRIES`), and never after it was released.
 */

import { language, syntaxHighlighting } from '@codemirror/language';
import { unifiedMergeView } from '@codemirror/merge';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { jupyterHighlightStyle } from '@jupyterlab/codemirror';

import type { ProposedCell } from './review';

const THEME = EditorView.theme({
  '&': {
    backgroundColor: 'var(--jp-cell-editor-background)',
    color: 'var(--jp-content-font-color1)',
    fontSize: 'var(--jp-code-font-size)'
  },
  '.cm-scroller': {
    fontFamily: 'var(--jp-code-font-family)',
    lineHeight: 'var(--jp-code-line-height)'
  },
  '.cm-content': { padding: '4px 0' },
  '&.cm-focused': { outline: 'none' }
});

/** How often, and how many times, a view asks its cell for a language still loading. */
const LANGUAGE_RETRY_MS = 250;
const LANGUAGE_TRIES = 40;

const released = new WeakSet<EditorView>();

/** The language of the cell editor under `host` (null: no editor, or none loaded yet). */
function languageOf(host: HTMLElement | null): Extension | null {
  const node = host?.querySelector<HTMLElement>(
    '.jp-Cell-inputWrapper .cm-editor'
  );
  const view = node ? EditorView.findFromDOM(node) : null;
  return view?.state.facet(language)?.extension ?? null;
}

/** Put the cell's language into `view` once the cell editor has it. */
function lendLanguageLater(
  view: EditorView,
  slot: Compartment,
  host: HTMLElement
): void {
  let tries = LANGUAGE_TRIES;
  const timer = window.setInterval(() => {
    const found = released.has(view) ? null : languageOf(host);
    if (found !== null) {
      view.dispatch({ effects: slot.reconfigure(found) });
    }
    if (found !== null || released.has(view) || --tries <= 0) {
      window.clearInterval(timer);
    }
  }, LANGUAGE_RETRY_MS);
}

/** The merge view of one proposed cell, in a detached element; `host` is the notebook cell
 *  it is shown on (its editor lends the language). */
export function renderMergeView(
  cell: ProposedCell,
  host: HTMLElement | null = null
): HTMLElement {
  const box = document.createElement('div');
  box.className = `jp-hashline-merge jp-hashline-merge-${cell.kind}`;
  const changed = cell.kind === 'changed';
  const slot = new Compartment();
  const lent = languageOf(host);
  const view = new EditorView({
    parent: box,
    state: EditorState.create({
      doc: withoutFinalNewline(
        cell.kind === 'deleted' ? cell.before : cell.after
      ),
      extensions: [
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        EditorView.lineWrapping,
        slot.of(lent ?? []),
        syntaxHighlighting(jupyterHighlightStyle),
        changed
          ? unifiedMergeView({
              original: withoutFinalNewline(cell.before),
              mergeControls: false,
              highlightChanges: true,
              gutter: true,
              syntaxHighlightDeletions: true,
              collapseUnchanged: { margin: 3, minSize: 6 }
            })
          : [],
        THEME
      ]
    })
  });
  if (lent === null && host !== null) {
    lendLanguageLater(view, slot, host);
  }
  return box;
}

/** A cell's source as its editor shows it: the newline ending its last line is no line. */
function withoutFinalNewline(source: string): string {
  return source.endsWith('\n') ? source.slice(0, -1) : source;
}

/** Destroy the merge views under `root` (their listeners and observers go with them). */
export function releaseMergeViews(root: Element): void {
  root.querySelectorAll<HTMLElement>('.cm-editor').forEach(node => {
    const view = EditorView.findFromDOM(node);
    if (view) {
      released.add(view);
      view.destroy();
    }
  });
}
