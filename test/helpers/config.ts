/** Configuration loaders under test: the problems a bad environment is refused with. */
import { expect } from 'vitest';
import { ConfigError, type ReadFile } from '../../services/shared/config.js';

type Loader = (env: Record<string, string | undefined>, readFile: ReadFile) => unknown;

/**
 * The problems `load` lists for `env`, reading only `files` (any other path fails as a missing
 * file would); fails the test when `load` accepts the environment.
 */
export function problemsOf(
  load: Loader,
  env: Record<string, string>,
  files: Record<string, string> = {},
): string[] {
  try {
    load(env, (p) => {
      if (p in files) {
        return files[p]!;
      }
      throw new Error('ENOENT: no such file');
    });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
