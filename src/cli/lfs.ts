import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config.ts';
import { CliError, EXIT, type RunWrapper } from './common.ts';

function concurrencyArg(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64) throw new InvalidArgumentError('expected 1..64');
  return Number(value);
}

/**
 * `wharf lfs move-store`: copies every object of the file system store (LFS_DIR) into the
 * S3 bucket of the S3_* settings (LFS_STORE=s3), so an operator can switch stores. Progress
 * goes to stderr, one line an object; the summary to stdout. Resumable: objects already in
 * the bucket with their size are skipped. The source is never deleted.
 */
export function lfsCommands(program: Command, run: RunWrapper) {
  const lfs = program.command('lfs').description('LFS objects: move them between stores');
  lfs
    .command('move-store')
    .description('copy every LFS object of LFS_DIR into the S3 bucket (LFS_STORE=s3 and S3_*), checking each; resumable, never deletes the source')
    .option('--concurrency <n>', 'objects copied at once', concurrencyArg, 4)
    .action((opts: { concurrency: number }) =>
      run(async () => {
        const config = loadConfig();
        if (config.lfsStore !== 's3') throw new CliError('set LFS_STORE=s3 and the S3_* settings of the bucket to move LFS_DIR into (docs/configuration.md)');
        // The stores (the S3 client above all) are loaded by this command alone: the others start faster.
        const [{ createFsLfsStore, listFsObjects }, { moveObjects }, { createS3LfsStore }, { s3StoreOptions }] = await Promise.all([
          import('../lfs/fsStore.ts'),
          import('../lfs/moveStore.ts'),
          import('../lfs/s3Store.ts'),
          import('../lfs/fromConfig.ts'),
        ]);
        const objects = await listFsObjects(config.lfsDir);
        const target = createS3LfsStore(s3StoreOptions(config));
        process.stderr.write(`moving ${objects.length} LFS objects from ${config.lfsDir} to bucket ${config.s3!.bucket} at ${config.s3!.endpoint}\n`);
        const width = String(objects.length).length;
        const summary = await moveObjects(
          objects,
          createFsLfsStore(config.lfsDir),
          target,
          (step) => {
            const at = `[${String(step.done).padStart(width)}/${step.total}]`;
            const what = step.outcome === 'failed' ? `FAILED: ${step.reason}` : step.outcome === 'copied' ? 'copied' : 'already there';
            process.stderr.write(`${at} ${step.oid} ${step.size} bytes: ${what}\n`);
          },
          opts.concurrency,
        );
        process.stdout.write(
          `${summary.total} objects: ${summary.copied} copied, ${summary.present} already in the bucket, ${summary.failed} failed; ${config.lfsDir} is left as it was\n`,
        );
        return summary.failed > 0 ? EXIT.failure : EXIT.ok;
      })(),
    );
}
