// Dependency rules of the layout (docs/architecture.md). Layers, top to bottom:
//   root       src/server.ts, src/components.ts, src/app.ts: put everything together
//   surfaces   src/api/, src/ui/, src/cli/, src/transport/ (Git smart HTTP and LFS): each
//              stands on the layers below and never on another surface
//   plumbing   src/http/: Koa plumbing the surfaces share
//   domain     src/domain/, src/webhooks/, src/events/, src/pushes/, src/pushMirrors/, src/import/, src/pullMirrors/,
//              src/delivery/, src/work/: operations, rules and the workers; src/remote/ (the client
//              of a remote Git or LFS source or target) at its foot, on the bottom alone
//   bottom     storage and small shared parts: src/db/, src/git/ (plumbing), src/lfs/
//              (the object store), src/secrets/, src/net/, src/metrics/, src/errors/,
//              src/util/, src/config.ts, src/log.ts, src/services.ts, src/version.ts
const ROOT = '^src/(server|components|app)\\.ts$';
const SURFACES = '^src/(api|ui|cli|transport)/';
const DOMAIN = '^src/(domain|webhooks|events|pushes|pushMirrors|import|pullMirrors|delivery|work|remote)/';
/**
 * The order inside the domain layer, top to bottom: the workers (the import job, pull
 * mirrors, the push recorder, push mirrors, in that order; the dispatcher beside them),
 * then webhooks, then the domain's operations, then at its foot the outbox (events), the
 * remote-source client and the worker loop (work).
 */
const WORKERS = '^src/(delivery|import|pullMirrors|pushes|pushMirrors)/';
const FOOT = '^src/(events|remote|work)/';
const BOTTOM = '^src/((db|git|lfs|secrets|net|metrics|errors|util)/|(config|log|services|version)\\.ts$)';

/** What the foot of the domain may not import: everything above it. */
const ABOVE_THE_FOOT = `${WORKERS}|^src/(webhooks|domain)/|${SURFACES}|^src/http/|${ROOT}`;

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import cycles, type-only imports included.', from: {}, to: { circular: true } },
    {
      name: 'surfaces-stand-alone',
      severity: 'error',
      comment: 'A surface (API, UI, CLI, transport) never imports another.',
      from: { path: '^src/(api|ui|cli|transport)/' },
      to: { path: SURFACES, pathNot: '^src/$1/' },
    },
    {
      name: 'only-the-root-imports-surfaces',
      severity: 'error',
      comment: 'Routes, pages, commands and transports are put together by the root alone.',
      from: { path: '^src/', pathNot: `${ROOT}|${SURFACES}` },
      to: { path: SURFACES },
    },
    {
      name: 'http-plumbing-is-for-surfaces',
      severity: 'error',
      comment: 'The domain, the workers and the bottom know nothing of HTTP.',
      from: { path: `${DOMAIN}|${BOTTOM}` },
      to: { path: '^src/http/' },
    },
    {
      name: 'webhooks-below-the-workers',
      severity: 'error',
      comment: 'Webhooks (records, fan-out, history, health) know nothing of the workers that act on them.',
      from: { path: '^src/webhooks/' },
      to: { path: WORKERS },
    },
    {
      name: 'domain-below-webhooks-and-workers',
      severity: 'error',
      comment:
        'A domain operation commits its change and its events; it neither calls a worker nor the webhook layer above it (it wakes workers through wake()).',
      from: { path: '^src/domain/' },
      to: { path: `${WORKERS}|^src/webhooks/` },
    },
    {
      name: 'foot-of-the-domain',
      severity: 'error',
      comment: 'The outbox, the remote-source client and the worker loop stand on the bottom layer alone.',
      from: { path: FOOT },
      to: { path: ABOVE_THE_FOOT },
    },
    // Workers call down only: import -> pullMirrors -> pushes -> pushMirrors; the dispatcher calls none of them and none calls it.
    ...[
      ['import', 'delivery'],
      ['pullMirrors', 'delivery|import'],
      ['pushes', 'delivery|import|pullMirrors'],
      ['pushMirrors', 'delivery|import|pullMirrors|pushes'],
      ['delivery', 'import|pullMirrors|pushes|pushMirrors'],
    ].map(([worker, above]) => ({
      name: `workers-in-order-${worker}`,
      severity: 'error',
      comment: `${worker} imports no worker above or beside it (${above}).`,
      from: { path: `^src/${worker}/` },
      to: { path: `^src/(${above})/` },
    })),
    // Inside the dispatcher, rooms top to bottom: runtime -> attempt -> pacing -> store.
    ...[
      ['store', 'pacing|attempt|runtime'],
      ['pacing', 'attempt|runtime'],
      ['attempt', 'runtime'],
    ].map(([room, above]) => ({
      name: `delivery-rooms-in-order-${room}`,
      severity: 'error',
      comment: `delivery/${room}/ imports no room of the dispatcher above it (${above}).`,
      from: { path: `^src/delivery/${room}/` },
      to: { path: `^src/delivery/(${above})/` },
    })),
    {
      name: 'remote-client-stands-on-the-bottom',
      severity: 'error',
      comment: 'The remote-source client (fetch, push, LFS transfer, their limits and errors) knows nothing of imports, mirrors or any other domain part.',
      from: { path: '^src/remote/' },
      to: { path: `${DOMAIN}|${SURFACES}|^src/http/|${ROOT}`, pathNot: '^src/remote/' },
    },
    {
      name: 'bottom-stays-at-the-bottom',
      severity: 'error',
      comment: 'Storage and shared parts import nothing from the layers above them.',
      from: { path: BOTTOM },
      to: { path: `${DOMAIN}|${SURFACES}|^src/http/|${ROOT}` },
    },
    {
      name: 'nothing-imports-the-root',
      severity: 'error',
      comment: 'Only the CLI (wharf serve) starts the root.',
      from: { path: '^src/', pathNot: `^src/cli/|${ROOT}` },
      to: { path: ROOT },
    },
    {
      name: 'no-unknown-folder',
      severity: 'error',
      comment: 'Every file sits in a layer named above; a new folder gets its layer here first.',
      from: { path: '^src/', pathNot: `${ROOT}|${SURFACES}|^src/http/|${DOMAIN}|${BOTTOM}` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    includeOnly: '^src/',
  },
};
