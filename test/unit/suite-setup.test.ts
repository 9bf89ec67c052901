/**
 * The unit project tests pure functions: it starts without the embedded-database global setup
 * (test/helpers/global-setup.ts), which only the projects that open a database pay for.
 */
import { expect, inject, it } from 'vitest';
// the ProvidedContext type of pgliteTemplate
import type {} from '../helpers/global-setup.js';

it('starts without migrating an embedded database template', () => {
  expect(inject('pgliteTemplate')).toBeUndefined();
});
