/**
 * Dockerfile.api, read statically (no Docker engine here): it builds from files that exist,
 * starts the compiled entrypoint of services/api/src/main.ts, installs production dependencies
 * only in the runtime image, runs as the numeric non-root user the chart expects, and is labelled.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { render } from './helm.js';
import { imageNodeFlags } from '../../bench/pipeline-server.js';

const root = process.cwd();
const dockerfile = readFileSync(join(root, 'Dockerfile.api'), 'utf8');
// Instructions with their continuation lines joined.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const stages = instructions.reduce<string[][]>((acc, line) => {
  if (/^FROM /i.test(line)) {
    acc.push([]);
  }
  acc.at(-1)?.push(line);
  return acc;
}, []);
const runtime = stages.at(-1)!;

describe('Dockerfile.api', () => {
  it('is multi-stage on Node.js 22', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(instructions.find((l) => l.startsWith('ARG NODE_IMAGE='))).toMatch(/^ARG NODE_IMAGE=node:22[-.]/);
  });

  it('copies from the build context only files that exist', () => {
    const sources = instructions
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(sources.length).toBeGreaterThan(2);
    for (const s of sources) {
      expect(existsSync(join(root, s)), s).toBe(true);
    }
  });

  it('starts the compiled entrypoint of services/api/src/main.ts', () => {
    const cmd = runtime.find((l) => l.startsWith('CMD '))!;
    const args = JSON.parse(cmd.slice(4)) as string[];
    // The young generation's size, for ingest (Dockerfile.api says why); the pipeline benchmark
    // starts the API with these flags too (bench/pipeline-server.ts reads them from here).
    expect(args).toEqual(['node', '--max-semi-space-size=64', 'dist/services/api/src/main.js']);
    expect(imageNodeFlags(dockerfile)).toEqual(['--max-semi-space-size=64']);
    // tsconfig.build.json: rootDir "." and outDir "dist", so dist/<path>.js is <path>.ts compiled.
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
    expect(build.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
    expect(existsSync(join(root, 'services/api/src/main.ts'))).toBe(true);
  });

  it('installs production dependencies only for the runtime, and ships compiled JavaScript only', () => {
    const copies = runtime.filter((l) => l.startsWith('COPY '));
    expect(copies.map((l) => l.split(/\s+/).at(-2))).toEqual([
      '/app/node_modules',
      '/app/dist',
      '/app/services/console/dist',
      'package.json',
    ]);
    // The console's static files land where the compiled console plugin looks for them.
    const consoleCopy = runtime.find((l) => l.includes('/app/services/console/dist'))!;
    expect(consoleCopy).toMatch(/--from=build .* \.\/dist\/services\/console\/dist$/);
    const depsStage = stages.find((s) => s[0]!.endsWith(' AS deps'))!;
    expect(depsStage.join('\n')).toMatch(/npm ci --omit=dev/);
    expect(runtime.filter((l) => /^RUN .*\bnpm\b/.test(l))).toEqual([]);
  });

  it('runs as the numeric non-root user of the chart, with OCI labels', async () => {
    const user = runtime.find((l) => l.startsWith('USER '))!.slice(5);
    expect(user).toMatch(/^[1-9][0-9]*:[0-9]+$/);
    const [uid, gid] = user.split(':').map(Number);
    const deployment = (await render('verity')).find((o) => o.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.securityContext).toMatchObject({ runAsUser: uid, fsGroup: gid });
    const labels = runtime.filter((l) => l.startsWith('LABEL ')).join(' ');
    for (const key of ['title', 'description', 'version', 'revision', 'created', 'licenses']) {
      expect(labels).toContain(`org.opencontainers.image.${key}=`);
    }
  });

  it('exposes the port the chart probes, and keeps the data directory writable for that user', () => {
    expect(runtime).toContain('EXPOSE 8080 9464');
    expect(runtime.join('\n')).toMatch(/chown 1000:1000 \/var\/lib\/verity/);
    expect(runtime.join('\n')).toMatch(/VERITY_DATA_DIR=\/var\/lib\/verity/);
  });
});
