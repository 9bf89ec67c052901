/**
 * `npm run verify -- <package.tar.gz> [--key <verifier key>]`: checks an audit package offline.
 * `npm run verify -- watch --url <api> --org <org> [--state <file>] [--key <verifier key>]
 *   [--interval <seconds>] [--once]`: a witness of the organization's log (API key in
 * `VERITY_API_KEY`, or `KOSLI_API_TOKEN`). Exit 0 when everything checked, 1 naming the failure.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { verifyPackage } from './package.js';
import { watchOnce } from './watch.js';

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      org: { type: 'string' },
      state: { type: 'string' },
      key: { type: 'string' },
      interval: { type: 'string', default: '60' },
      once: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] === 'watch') {
    if (!values.url || !values.org) {
      console.error(
        'usage: verify watch --url <api> --org <org> [--state <file>] [--key <verifier key>] [--once]',
      );
      return 2;
    }
    const options = {
      url: values.url,
      org: values.org,
      stateFile: values.state ?? `verity-witness-${values.org}.json`,
      apiKey: process.env.VERITY_API_KEY ?? process.env.KOSLI_API_TOKEN,
      key: values.key,
    };
    for (;;) {
      console.log(await watchOnce(options));
      if (values.once) {
        return 0;
      }
      await new Promise((r) => setTimeout(r, Math.max(1, Number(values.interval)) * 1000));
    }
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) {
    console.error(
      'usage: verify <package.tar.gz> [--key <verifier key>] | verify watch --url <api> --org <org>',
    );
    return 2;
  }
  for (const line of await verifyPackage(await readFile(file), values.key ? [values.key] : undefined)) {
    console.log(line);
  }
  console.log(`verified: ${file}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
