// Builds the console when services/console/dist is missing or older than its sources, so
// `npm start` on a fresh clone serves it. Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const consoleDir = dirname(dirname(fileURLToPath(import.meta.url)));
const built = join(consoleDir, 'dist', 'index.html');

/** Newest modification time under the given files and folders. */
function newest(paths) {
  let max = 0;
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) {
      max = Math.max(max, newest(readdirSync(p).map((name) => join(p, name))));
    } else {
      max = Math.max(max, st.mtimeMs);
    }
  }
  return max;
}

let builtAt = 0;
try {
  builtAt = statSync(built).mtimeMs;
} catch {
  builtAt = 0;
}
const sourcesAt = newest(
  ['src', 'index.html', 'vite.config.ts', join('..', '..', 'package-lock.json')].map((p) =>
    join(consoleDir, p),
  ),
);

if (builtAt >= sourcesAt) {
  process.exit(0);
}
console.log(builtAt === 0 ? 'Building the console (first start)…' : 'The console changed: rebuilding…');
const vite = join(consoleDir, '..', '..', 'node_modules', 'vite', 'bin', 'vite.js');
const result = spawnSync(process.execPath, [vite, 'build', consoleDir, '--logLevel', 'warn'], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
