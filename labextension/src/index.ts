/**
 * The jupyter-hashline JupyterLab plugin: a left-sidebar panel showing the server's hashline
 * edit activity, registered agent sessions and tracked snapshots.
 *
 * Invariants:
 * - The panel is tracked by the layout restorer (when present), so it comes back open after a
 *   reload if it was open before.
 * - The command `hashline:open-sidebar` reveals it (also from the command palette).
 * - Cells an agent changed carry a badge in open notebooks (badges.ts; with a notebook tracker);
 *   the toggle `hashline:toggle-follow` scrolls the notebook to each cell an agent edits.
 * - In review mode, each pending proposal shows on its cells with Accept / Reject
 *   (review-cells.ts; with a notebook tracker), drawn as a CodeMirror merge view once that has
 *   loaded (the line diff until then, or if it cannot load); a decision made in the sidebar
 *   repaints the notebooks at once, and one made in a notebook refreshes the sidebar.
 * - It listens to the server's event stream (`ServiceManager.events`), and takes its fallback
 *   poll period from the `pollIntervalMs` setting (schema/sidebar.json), live as it changes;
 *   until the settings load (or without a settings registry) the default applies.
 */

import {
  ILabShell,
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { HashlineApi } from './api';
// The sidebar is added to the shell at activation, so it is needed at once.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { ACTIVITY_LIMIT, HashlineSidebar } from './sidebar';

const PLUGIN_ID = 'jupyter-hashline:sidebar';
export const OPEN_COMMAND = 'hashline:open-sidebar';
export const FOLLOW_COMMAND = 'hashline:toggle-follow';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161" transform="skewX(-12) translate(2 0)">
    <rect x="7" y="3" width="2.2" height="18"/><rect x="14" y="3" width="2.2" height="18"/>
    <rect x="3" y="7.5" width="17" height="2.2"/><rect x="3" y="14.3" width="17" height="2.2"/>
  </g>
</svg>`;

export const hashlineIcon = new LabIcon({
  name: 'jupyter-hashline:sidebar',
  svgstr: ICON_SVG
});

function activate(
  app: JupyterFrontEnd,
  labShell: ILabShell,
  docManager: IDocumentManager,
  restorer: ILayoutRestorer | null,
  palette: ICommandPalette | null,
  settingRegistry: ISettingRegistry | null,
  notebooks: INotebookTracker | null
): void {
  const api = new HashlineApi(app.serviceManager.serverSettings);
  let reviews: Promise<{ refresh(): Promise<void> }> | null = null;
  const sidebar = new HashlineSidebar({
    source: api,
    events: app.serviceManager.events.stream,
    openEdit: async edit => {
      const { openEdit } = await import('./navigate');
      await openEdit(docManager, edit);
    },
    openProposal: async proposal => {
      const { openTarget } = await import('./navigate');
      const { pendingCells } = await import('./review');
      // a cell to insert is found by the cell it follows (a new first cell: just open)
      const cellIds = proposal.text_file
        ? []
        : pendingCells(proposal).flatMap(c =>
            c.kind === 'inserted' ? (c.after_cell ?? []) : [c.cell]
          );
      await openTarget(docManager, {
        path: proposal.path,
        cellIds,
        line: null
      });
    },
    reviewed: () => void reviews?.then(r => r.refresh())
  });
  if (settingRegistry) {
    void followSettings(settingRegistry, sidebar);
  }
  sidebar.title.icon = hashlineIcon;
  labShell.add(sidebar, 'left', { rank: 850 });
  restorer?.add(sidebar, 'jupyter-hashline-sidebar');
  app.commands.addCommand(OPEN_COMMAND, {
    label: 'Show Hashline Agent Activity',
    describedBy: { args: { type: 'object', properties: {} } },
    execute: () => labShell.activateById(sidebar.id)
  });
  palette?.addItem({ command: OPEN_COMMAND, category: 'Hashline' });
  if (notebooks) {
    const badges = import('./badges').then(
      ({ CellBadges }) =>
        new CellBadges({
          tracker: notebooks,
          activity: () => api.activity(ACTIVITY_LIMIT),
          events: app.serviceManager.events.stream,
          reveal: id => {
            labShell.activateById(sidebar.id);
            sidebar.reveal(id);
          }
        })
    );
    reviews = showProposals(app, api, notebooks, () => void sidebar.refresh());
    let following = false;
    app.commands.addCommand(FOLLOW_COMMAND, {
      label: 'Follow Agent Edits',
      caption: 'Scroll the notebook to each cell an agent edits',
      isToggled: () => following,
      describedBy: { args: { type: 'object', properties: {} } },
      execute: async () => {
        following = !following;
        (await badges).follow = following;
        app.commands.notifyCommandChanged(FOLLOW_COMMAND);
      }
    });
    palette?.addItem({ command: FOLLOW_COMMAND, category: 'Hashline' });
  }
}

/** Proposals on the cells of open notebooks, drawn with the merge view once it has loaded. */
async function showProposals(
  app: JupyterFrontEnd,
  api: HashlineApi,
  tracker: INotebookTracker,
  decided: () => void
): Promise<{ refresh(): Promise<void> }> {
  const { CellReviews } = await import('./review-cells');
  const reviews = new CellReviews({
    tracker,
    client: api,
    events: app.serviceManager.events.stream,
    decided
  });
  import('./merge')
    .then(({ releaseMergeViews, renderMergeView }) => {
      reviews.diffView = {
        render: renderMergeView,
        release: releaseMergeViews
      };
    })
    .catch((err: unknown) => {
      console.warn(
        `jupyter-hashline: merge view not loaded (${String(err)}); proposals show line diffs`
      );
    });
  return reviews;
}

/** Apply the `pollIntervalMs` setting now and whenever it changes. */
async function followSettings(
  registry: ISettingRegistry,
  sidebar: HashlineSidebar
): Promise<void> {
  try {
    const settings = await registry.load(PLUGIN_ID);
    const apply = (): void => {
      sidebar.pollIntervalMs = settings.get('pollIntervalMs')
        .composite as number;
    };
    apply();
    settings.changed.connect(apply);
  } catch (err) {
    console.warn(
      `jupyter-hashline: sidebar settings not loaded (${String(err)}); using defaults`
    );
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Sidebar with hashline agent edits, sessions and snapshots.',
  autoStart: true,
  requires: [ILabShell, IDocumentManager],
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    INotebookTracker
  ],
  activate
};

export default plugin;
